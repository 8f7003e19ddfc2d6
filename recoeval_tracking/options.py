"""``EvalOptions``: the evaluation options, declared once.

:func:`recoeval_tracking.evaluate` gathers its keyword arguments into an :class:`EvalOptions`,
``calc_reco_metrics`` translates recometrics' flags into one, the engine receives the validated
form, and the Hydra app derives the schema of its ``metrics`` config group from the fields below
(:func:`config_fields`), so a new option is one field here (plus its use).

Fields whose metadata says ``config=False`` are runtime settings that the config sets elsewhere
(``nthreads`` is a top-level setting of the app) or that follow from other options
(``return_topk`` is implied by the beyond-accuracy metrics). The ``metrics`` field is called
``names`` in the config group (``metrics.names=[p,ndcg]``), where ``metrics.metrics`` would read
badly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._validation import check_bool, check_float, check_in_range, check_int, param_error
from .engine.backends import BACKENDS as _ENGINE_BACKENDS
from .engine.backends import unavailable as _backend_unavailable

__all__ = ["EvalOptions", "BACKENDS", "config_fields"]

_NEGATIVE_KEYS = {"n", "by", "seed", "per_positive"}

#: Engine backends an evaluation can run on (the ``backend`` option).
BACKENDS = tuple(_ENGINE_BACKENDS)

_INT32_MAX = 2**31 - 1
_INT64_MAX = 2**63 - 1
_UINT64_MAX = 2**64 - 1


@dataclass(frozen=True)
class EvalOptions:
    """Every option of an evaluation (see :func:`recoeval_tracking.evaluate` for their meaning).

    Attributes
    ----------
    metrics : str, list of str or None
        Registered metric names or ``"all"``; None takes the profile's metrics, or P, AP and NDCG
        without a profile.
    profile : str or None
        A library profile (:data:`recoeval_tracking.metrics.profiles.PROFILES`).
    k : int
        The cutoff K.
    cumulative : bool
        Also compute every metric at 1..K.
    ties : str or None
        Tie policy; None takes the profile's, or ``noise``.
    seed : int or None
        Seed of the tie break; None takes the tie policy's (42 under ``warprec``, WarpRec's
        default), else 0.
    min_pos_test, min_items_pool, consider_cold_start
        The recometrics NaN thresholds.
    block_rows : int or None
        Users scored at a time (bounds memory); chosen from the catalogue size when None.
    serendipity_top_n : int
        Items among the N most popular in train count as expected for ``serendipity``.
    backend : str
        Where the engine runs: one of :data:`BACKENDS`.
    relevance_level : float or None
        Test entries with a value below it are judged non-relevant (negatives, and bpref's
        judged non-relevant items) rather than positives. None takes the profile's (trec_eval:
        1, its ``-l`` default), else the data's rule (``Interactions.relevance``: MovieLens 4),
        else every stored entry is a positive.
    gains : {"graded", "binary"} or None
        The gain of a positive in NDCG, DCG, RBP...: its stored value (``graded``: a rating of 5
        weighs five times a 1), or 1 for every positive (``binary``); None: the data's rule
        (MovieLens: ``binary``), else ``graded``. With ``binary`` every metric sees the
        positives' values as 1.
    no_positive : {"nan", "zero"} or None
        A user with test entries but no positive: NaN (reason ``no_positive``) or 0 for every
        rank metric (trec_eval); None takes the profile's, or ``nan``.
    inf_scores : {"rank", "nan"} or None
        +-inf scores are ranked (``rank``) or make the user NaN (``nan``, recometrics); None
        takes the profile's, or ``rank``.
    rbp_persistence : float
        The persistence ``p`` of rank-biased precision (0 < p < 1).
    tail_ratio : float
        The share of the catalogue, least popular in train first, that forms the long tail of
        ``tailpercentage``, ``aplt``, ``aclt``, ``pop_reo`` and ``pop_rsp``
        (RecBole's ``tail_ratio``, default 0.1).
    short_head_share : float
        The share of the train entries held by the short head (the most popular items) of
        ``aplt``, ``aclt``, ``pop_reo`` and ``pop_rsp`` (Elliot's ``pop_ratio``, 0.8); the
        other items are the long tail (:mod:`recoeval_tracking.metrics.popularity`).
    negatives : dict or None
        A sampled-negative protocol, ``{"n": 100, "by": "uniform" | "popularity", "seed": 0,
        "per_positive": False}``: each user's positives are ranked among ``n`` sampled
        negatives (:mod:`recoeval_tracking.metrics.sampling`); None (default): the full
        catalogue.
    nthreads : int
        Threads for numba and BLAS; -1 uses every core.
    return_topk : bool
        Also extract every user's top-K items.
    """

    metrics: str | Sequence[str] | None = field(
        default=None, metadata={"config_key": "names", "config_type": list[str] | None}
    )
    profile: str | None = None
    k: int = 10
    cumulative: bool = False
    ties: str | None = None
    seed: int | None = None
    min_pos_test: int = 1
    min_items_pool: int = 2
    consider_cold_start: bool = True
    block_rows: int | None = None
    serendipity_top_n: int = 100
    backend: str = "cpu"
    relevance_level: float | None = None
    gains: str | None = None
    no_positive: str | None = None
    inf_scores: str | None = None
    rbp_persistence: float = 0.8
    tail_ratio: float = 0.1
    short_head_share: float = 0.8
    negatives: dict[str, Any] | None = field(
        default=None, metadata={"config_type": dict[str, Any] | None}
    )
    nthreads: int = field(default=-1, metadata={"config": False})
    return_topk: bool = field(default=False, metadata={"config": False})

    def checked(self, func: str = "evaluate") -> EvalOptions:
        """A copy with every option checked and converted; the profile is applied by
        :func:`recoeval_tracking.metrics.profiles.apply_profile`, and data-dependent checks
        (``k`` against the number of items) come when the data is known.

        Integers are bounded where the engine stores them in 64 bits (``seed`` is unsigned),
        ``block_rows`` and ``nthreads`` by what an array or a thread pool can take; flags must be
        bools; ``profile`` and ``ties`` names (str) or None; ``metrics`` a name, a list of names
        or None. Each bad value raises :class:`~recoeval_tracking.InputError` naming it.
        """
        if not isinstance(self.backend, str) or self.backend not in BACKENDS:
            raise param_error("backend", func, f"one of {list(BACKENDS)}", self.backend)
        missing = _backend_unavailable(self.backend)
        if missing is not None:
            raise param_error(
                "backend", func, "a backend that can run on this machine", self.backend, fix=missing
            )
        for name in ("profile", "ties", "no_positive", "inf_scores"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise param_error(name, func, "a name (str) or None", value)
        _check_metric_names(self.metrics, func)
        _check_choice(self.no_positive, "no_positive", ("nan", "zero"), func)
        _check_choice(self.inf_scores, "inf_scores", ("rank", "nan"), func)
        _check_choice(self.gains, "gains", ("graded", "binary"), func)
        level = self.relevance_level
        if level is not None:
            level = check_float(level, "relevance_level", func)
        rbp = check_in_range(
            self.rbp_persistence, "rbp_persistence", func, 0.0, 1.0, lo_open=True, hi_open=True
        )
        tail = check_in_range(self.tail_ratio, "tail_ratio", func, 0.0, 1.0, lo_open=True)
        head = check_in_range(
            self.short_head_share, "short_head_share", func, 0.0, 1.0, lo_open=True
        )
        block_rows = self.block_rows
        if block_rows is not None:
            block_rows = check_int(block_rows, "block_rows", func, minimum=1, maximum=_INT32_MAX)
        nthreads = check_int(self.nthreads, "nthreads", func, minimum=-1, maximum=_INT32_MAX)
        if nthreads == 0:
            raise param_error("nthreads", func, "an int >= 1, or -1 for every core", nthreads)
        return dataclasses.replace(
            self,
            k=check_int(self.k, "k", func, minimum=1, maximum=_INT64_MAX),
            seed=None
            if self.seed is None
            else check_int(self.seed, "seed", func, minimum=0, maximum=_UINT64_MAX),
            min_pos_test=check_int(
                self.min_pos_test, "min_pos_test", func, minimum=1, maximum=_INT64_MAX
            ),
            min_items_pool=check_int(
                self.min_items_pool, "min_items_pool", func, minimum=1, maximum=_INT64_MAX
            ),
            serendipity_top_n=check_int(
                self.serendipity_top_n, "serendipity_top_n", func, minimum=0, maximum=_INT64_MAX
            ),
            block_rows=block_rows,
            nthreads=nthreads,
            relevance_level=level,
            rbp_persistence=rbp,
            tail_ratio=tail,
            short_head_share=head,
            negatives=_check_negatives(self.negatives, func),
            cumulative=check_bool(self.cumulative, "cumulative", func),
            consider_cold_start=check_bool(self.consider_cold_start, "consider_cold_start", func),
            return_topk=check_bool(self.return_topk, "return_topk", func),
        )

    @classmethod
    def from_config(cls, section: dict[str, Any], **runtime: Any) -> EvalOptions:
        """Options from a ``metrics`` config section (plain dict, config key names), plus the
        runtime fields (``nthreads``...). Keys the section does not set keep their defaults.

        A config that names neither metrics nor a profile evaluates every registered metric
        (the app's default is the whole registry, the Python API's is P, AP and NDCG). The null
        keys of a ``negatives`` section take their defaults; with every key null (the app's
        default node) it is None, the full catalogue.
        """
        keys = {key: f.name for f, key in config_fields()}
        unknown = sorted(set(section) - set(keys))
        if unknown:
            raise param_error(
                "metrics",
                "EvalOptions.from_config",
                f"a config section with keys among {sorted(keys)}",
                f"unknown keys {unknown}",
                got_is_text=True,
            )
        values = {keys[k]: v for k, v in section.items()}
        negatives = values.get("negatives")
        if hasattr(negatives, "items"):  # the app's node: null keys are the defaults, n null off
            values["negatives"] = {k: v for k, v in negatives.items() if v is not None} or None
        names = values.get("metrics")
        if isinstance(names, str):
            names = [names]
        if names is None and values.get("profile") is None:
            names = ["all"]
        if names is not None:
            names = list(names)
            single = [str(n).lower() for n in names]
            values["metrics"] = single[0] if single in (["all"], ["standard"]) else names
        return cls(**values, **runtime)


def _check_negatives(value: Any, func: str) -> dict[str, Any] | None:
    """The ``negatives`` option checked and completed (``by="uniform"``, ``seed=0``,
    ``per_positive=False``), or None (full catalogue)."""
    if value is None:
        return None
    if not hasattr(value, "keys") or not set(value.keys()) <= _NEGATIVE_KEYS or "n" not in value:
        raise param_error(
            "negatives",
            func,
            "None or a mapping with 'n' and optionally "
            "'by' (uniform or popularity), 'seed' and 'per_positive'",
            value,
        )
    n, by = value["n"], value.get("by", "uniform")
    seed, per = value.get("seed", 0), value.get("per_positive", False)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise param_error("negatives", func, "'n' an int >= 1", n)
    if by not in ("uniform", "popularity"):
        raise param_error("negatives", func, "'by' one of ['uniform', 'popularity']", by)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise param_error("negatives", func, "'seed' an int >= 0", seed)
    if not isinstance(per, bool):
        raise param_error("negatives", func, "'per_positive' a bool", per)
    return {"n": int(n), "by": by, "seed": int(seed), "per_positive": per}


def _check_choice(value: Any, name: str, choices: tuple[str, ...], func: str) -> None:
    if value is not None and value not in choices:
        raise param_error(name, func, f"one of {list(choices)} or None", value)


def _check_metric_names(metrics: Any, func: str) -> None:
    """``metrics`` is None, a name, or a list (or tuple) of names; which names exist is checked
    by the registry."""
    if metrics is None or isinstance(metrics, str):
        return
    if not isinstance(metrics, (list, tuple)):
        raise param_error(
            "metrics", func, 'a metric name, a list of metric names, "all" or None', metrics
        )


def config_fields() -> list[tuple[dataclasses.Field, str]]:
    """The fields of :class:`EvalOptions` a config sets, with their config key names."""
    return [
        (f, f.metadata.get("config_key", f.name))
        for f in dataclasses.fields(EvalOptions)
        if f.metadata.get("config", True)
    ]
