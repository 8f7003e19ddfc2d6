"""The rope as a comparison names it: a per-metric rope checked against the metrics compared
(an unknown key is refused, with the close matches), and a rope said in words on the page.

The equivalence statistics themselves (the Bayesian signed-rank and paired t tests, the TOST, the
verdict rule, :func:`~recoeval_tracking.stats.resolve_rope`) are plain functions on arrays in
:mod:`recoeval_tracking.stats`; the names that moved there still read from here, with a
:class:`DeprecationWarning`, for one release.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._validation import param_error
from ._moved import moved_names

__all__ = ["check_rope_metrics", "unknown_rope_metrics", "rope_metrics_text", "rope_text"]


__getattr__ = moved_names(__name__)


def unknown_rope_metrics(
    rope: object, metrics: list[str]
) -> tuple[list[str], list[str], list[str]]:
    """The keys of a per-metric ``rope`` that name no metric of ``metrics`` (a rope of one of
    them would otherwise be 0, silently), the close matches of the first unknown key
    (:func:`difflib.get_close_matches`), and ``metrics`` with those close matches first.
    Nothing unknown for a number or a percentage.

    Examples
    --------
    >>> unknown_rope_metrics({"ndgc_at_5": 0.05}, ["p_at_5", "ndcg_at_5"])
    (['ndgc_at_5'], ['ndcg_at_5', 'p_at_5'], ['ndcg_at_5', 'p_at_5'])
    """
    import difflib

    known = list(dict.fromkeys(str(m) for m in metrics))
    if not isinstance(rope, Mapping):
        return [], [], known
    unknown = [str(k) for k in rope if str(k) not in known]
    if not unknown:
        return [], [], known
    close = difflib.get_close_matches(unknown[0], known, n=3, cutoff=0.6)
    return unknown, close, close + [m for m in known if m not in close]


def rope_metrics_text(unknown: list[str], close: list[str], known: list[str]) -> str:
    """What a message about unknown rope keys says: the metrics compared (close ones first,
    at most 20) and the fix."""
    shown = ", ".join(known[:20]) + (f" and {len(known) - 20} more" if len(known) > 20 else "")
    hint = f"Did you mean {close[0]!r}? " if close else ""
    return f"metrics compared: {shown}. {hint}(A metric the dict leaves out gets the rope 0.)"


def check_rope_metrics(rope: object, metrics: list[str], func: str) -> None:
    """Refuse a per-metric ``rope`` naming a metric the comparison does not have, naming the
    metrics it has (close matches first)."""
    unknown, close, known = unknown_rope_metrics(rope, metrics)
    if unknown:
        raise param_error(
            "rope",
            func,
            "a number, 'x%' or a dict whose keys are metrics compared",
            f"{', '.join(map(repr, unknown))}, which names no metric compared",
            "The " + rope_metrics_text(unknown, close, known),
            got_is_text=True,
        )


def rope_text(rope: Any) -> str:
    """A rope as the page says it: ``0.01``, ``5% of the baseline's mean``, or per metric
    ``ndcg_at_10: 0.01; p_at_10: 5% of the baseline's mean`` (never a Python dict)."""

    def one(width: Any) -> str:
        if isinstance(width, str):
            return f"{width.strip()} of the baseline's mean"
        return f"{float(width):g}"

    if isinstance(rope, Mapping):
        return "; ".join(f"{k}: {one(v)}" for k, v in rope.items())
    return one(rope)
