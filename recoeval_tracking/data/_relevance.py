"""The relevance rule of a dataset: which stored test entries are positives, and their gains.

The rule belongs to the data: a loader attaches it to the :class:`Interactions` it returns
(explicit ratings, the MovieLens loaders: ratings >= 4 are the positives, each with gain 1;
every other source: every stored entry is a positive, its value its gain), splits and
preparation steps carry it, and :func:`recoeval_tracking.evaluate`, the app and
:func:`recoeval_tracking.distributed.evaluate_from_storage` apply it unless told otherwise.
The defaults live in the loaders' signatures (the app's dataset configs derive theirs from
them), built from the two rules below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._validation import check_float, param_error

__all__ = ["Relevance", "GAINS", "EVERY_ENTRY", "RATINGS"]

#: The accepted values of ``gains``.
GAINS = ("graded", "binary")


@dataclass(frozen=True)
class Relevance:
    """Which test entries are relevant, and with which gain.

    Attributes
    ----------
    level : float or None
        Test entries with a value below it are judged non-relevant (negatives, and bpref's
        judged non-relevant items); None: every stored entry is a positive.
    gains : {"graded", "binary"}
        A positive's gain in NDCG, DCG, RBP...: its stored value (``graded``) or 1
        (``binary``).
    """

    level: float | None = None
    gains: str = "graded"

    @classmethod
    def checked(cls, level: Any, gains: Any, func: str, prefix: str = "") -> Relevance:
        """The rule of ``level`` and ``gains``, checked (errors name ``<prefix>relevance_level``
        and ``<prefix>gains``)."""
        if gains not in GAINS:
            raise param_error(f"{prefix}gains", func, f"one of {list(GAINS)}", gains)
        if level is not None:
            level = check_float(level, f"{prefix}relevance_level", func)
        return cls(level, str(gains))

    @classmethod
    def from_record(cls, record: Any, func: str = "open_partitioned") -> Relevance:
        """The rule of a manifest record ``{"relevance_level": ..., "gains": ...}`` (None: the
        default rule, for manifests written before the rule was recorded)."""
        if record is None:
            return cls()
        if not isinstance(record, dict):
            raise param_error("relevance", func, "a record with relevance_level and gains", record)
        return cls.checked(record.get("relevance_level"), record.get("gains", "graded"), func)

    def record(self) -> dict[str, Any]:
        """``{"relevance_level": level, "gains": gains}`` (JSON-able)."""
        return {"relevance_level": self.level, "gains": self.gains}

    def __str__(self) -> str:
        gains = "gain 1" if self.gains == "binary" else "their values as gains"
        if self.level is None:
            return f"every test entry is a positive, with {gains}"
        return (
            f"test entries >= {self.level:g} are the positives, with {gains}; lower ones "
            "are judged non-relevant"
        )


#: Implicit feedback and data of unknown meaning: every stored entry is a positive.
EVERY_ENTRY = Relevance()
#: Explicit ratings on a 1..5 scale (the MovieLens loaders): 4 and above are liked.
RATINGS = Relevance(4.0, "binary")
