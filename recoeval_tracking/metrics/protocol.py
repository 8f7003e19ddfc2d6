"""The evaluation protocol around the engine: what counts as a positive, what a user without
one gets, how infinite scores are read, and what a profile leaves out of ranked input.

Each rule is an input-side transform or a post-processing step; none changes the engine's
kernels:

* **relevance level** (:func:`split_judgements`): test entries with a value below the level are
  judged non-relevant; they leave the test matrix (so they are negatives of the pool, as every
  unjudged item) and are kept apart for ``bpref``. Users left with test entries but no positive
  are NaN with reason ``no_positive``, or get 0 for every rank metric (``no_positive="zero"``,
  trec_eval's rule: such a topic is averaged in) (:func:`apply_no_positive`).
* **infinite scores** (:class:`InfAsNaN`): with ``inf_scores="nan"`` a +-inf score reads as NaN,
  so the user is NaN with reason ``nan_score`` (recometrics); by default they are ranked.
* **ranked input under a profile** (:func:`left_out_for_ranked`): the whole-ranking metrics of a
  profile (and the aggregates built on them) cannot be computed from top-K lists; they are left
  out, and the definitions say so, instead of refusing the whole evaluation.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import param_error
from ..engine.codes import Reason
from ..scores import RankedLists, ScoreSource
from .implicit_topk import implicit_lists
from .profiles import PROFILES

__all__ = [
    "split_judgements",
    "apply_no_positive",
    "InfAsNaN",
    "left_out_for_ranked",
    "left_out_for_candidates",
    "back_to_items",
    "prepare_source",
    "apply_flags",
    "RANK_LIST_METRICS",
    "missing_lists",
    "record_missing",
    "NO_LIST_RULE",
    "plan_for_source",
]

#: List-stage metrics that are rank metrics (a user without a positive gets 0 under "zero").
RANK_LIST_METRICS = ("rbp", "bpref")


def split_judgements(
    test: sp.csr_array, level: float | None
) -> tuple[sp.csr_array, sp.csr_array | None, np.ndarray]:
    """Positives (value >= ``level``), judged non-relevant entries (value < ``level``) and the
    mask of users with test entries but no positive. Without a level every entry is a
    positive and there is no judged non-relevant entry."""
    m = test.shape[0]
    if level is None:
        return test, None, np.zeros(m, dtype=bool)
    coo = test.tocoo()
    keep = coo.data >= level
    pos = sp.csr_array((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=test.shape)
    neg = sp.csr_array((coo.data[~keep], (coo.row[~keep], coo.col[~keep])), shape=test.shape)
    pos.sort_indices()
    neg.sort_indices()
    had = np.diff(test.indptr) > 0
    return pos, neg, had & (np.diff(pos.indptr) == 0)


def apply_no_positive(raw: Any, mask: np.ndarray, rule: str) -> None:
    """Users of ``mask`` (test entries, no positive), left NaN with reason ``no_test`` by the
    engine: reason ``no_positive`` (rule ``nan``), or evaluated with 0 for every kernel metric
    where greater is better and NaN for the others (``mpr``) (rule ``zero``); ``raw`` is
    changed in place."""
    users = np.flatnonzero(mask & (raw.reason == Reason.NO_TEST))
    if not users.size:
        return
    if rule == "nan":
        raw.reason[users] = Reason.NO_POSITIVE
        return
    raw.out[:, users, :] = 0.0
    raw.whole[:, users] = 0.0
    # a metric where lower is better (mpr) has no "nothing found" value of 0: NaN
    for row, s in enumerate(raw.topk_specs):
        if not s.greater_is_better:
            raw.out[row, users, :] = np.nan
    for row, s in enumerate(raw.whole_specs):
        if not s.greater_is_better:
            raw.whole[row, users] = np.nan
    raw.reason[users] = Reason.OK
    raw.zero_users = users


@dataclass
class InfAsNaN(ScoreSource):
    """A score source whose +-inf scores read as NaN (``inf_scores="nan"``).

    With ``in_engine`` the blocks pass through unchanged and the CPU engine applies the rule
    itself (a user with a +-inf score in the pool is undefined, as one with a NaN score), in the
    pass that looks for NaN: converting each block here cost two more passes over its scores
    (0.3x the GEMM floor at 50,000 users x 20,000 items)."""

    inner: Any
    in_engine: bool = False

    def __post_init__(self) -> None:
        self.n_items = self.inner.n_items
        self.n_users = getattr(self.inner, "n_users", None)
        self.dtype = self.inner.dtype

    def block(self, users: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        S = self.inner.block(users, out)
        if not self.in_engine:
            S[np.isinf(S)] = np.nan
        return S

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "inf_scores": "nan"}


#: Why a whole-ranking metric is left out of an evaluation of ranked top-K lists.
RANKED_REASON = "needs a score for every item (ranked top-K input)"
#: Why ILS and diversity are left out of a run whose model gives no item vectors.
VECTORS_REASON = "needs item vectors: a factor model's item factors, or item_features="


def left_out_for_ranked(plan: Any, func: str) -> Any:
    """The plan for ranked top-K input when its metrics came from a profile: the whole-ranking
    metrics and the aggregates built on them are left out (with a warning), and recorded in
    ``plan.left_out``. Metrics named explicitly are left to the caller's refusal."""
    opts = plan.options
    prof = PROFILES.get(opts.profile) if opts.profile is not None else None
    if prof is None or list(opts.metrics) != list(prof["metrics"]):
        return plan
    from .registry import METRICS

    out = {
        s.name: RANKED_REASON
        for s in plan.specs
        if s.kind == "whole" or any(METRICS[x].kind == "whole" for x in s.needs)
    }
    if out:
        warnings.warn(
            f"The '{opts.profile}' profile with ranked top-K lists (in {func}) takes "
            f"the top-K metrics only; left out: {sorted(out)}.",
            UserWarning,
            stacklevel=4,
        )
    specs = tuple(s for s in plan.specs if s.name not in out)
    return replace(plan, specs=specs, left_out={**plan.left_out, **out})


def _named(metrics: Any) -> list[str]:
    return [str(x).lower() for x in ([metrics] if isinstance(metrics, str) else metrics)]


def _a_set(metrics: Any) -> bool:
    """Whether the metrics were asked as a set (``"all"``, ``"standard"``), which leaves out what
    cannot be computed here rather than refusing it."""
    from .registry import METRIC_SETS

    return any(name in METRIC_SETS for name in _named(metrics))


def plan_for_source(p: Any, source: Any, func: str = "evaluate") -> Any:
    """The plan for this score source: with ranked top-K lists, the whole-ranking metrics (and
    their aggregates) are refused when named, left out of a set and recorded in ``left_out``."""
    from .registry import METRICS

    if not isinstance(source, RankedLists):
        return p
    opts = p.options
    asked = [s.name for s in p.specs if s.kind == "whole"]
    if asked and not _a_set(opts.metrics):
        raise param_error(
            "metrics",
            func,
            "top-K metrics only when the input is ranked "
            "top-K lists (whole-ranking metrics need a score for every item)",
            f"{asked}",
            got_is_text=True,
        )
    if source.k < opts.k:
        raise param_error("k", func, f"at most the ranked lists' length ({source.k})", opts.k)
    out = {
        s.name
        for s in p.specs
        if s.kind == "whole" or any(METRICS[x].kind != "at_k" for x in s.needs)
    }
    left = dict.fromkeys(sorted(out), RANKED_REASON)
    return replace(
        p,
        specs=tuple(s for s in p.specs if s.name not in out),
        topk_only=True,
        left_out={**p.left_out, **left},
    )


def prepare_source(source: Any, prep: Any, opts: Any) -> tuple[Any, np.ndarray | None]:
    """The score source as the options read it: +-inf as NaN (``inf_scores="nan"``), and
    implicit's top-K lists for ``ties="implicit"`` (with the per-user reasons found while
    selecting them, else None); ranked lists with the users they miss counted and flagged
    (:func:`missing_lists`)."""
    if isinstance(source, RankedLists):
        return source, missing_lists(source, prep, opts)
    if opts.inf_scores == "nan":
        # the CPU engine applies the rule when it reads the blocks itself; implicit's lists are
        # selected from the blocks here, before the engine, so they need the converted scores
        source = InfAsNaN(source, in_engine=opts.backend == "cpu" and opts.ties != "implicit")
    if opts.ties != "implicit":
        return source, None
    m = prep.test.shape[0]
    rows = np.flatnonzero(np.diff(prep.test.indptr) > 0).astype(np.int64)
    return implicit_lists(source, prep.train, m, rows, opts.k, opts.block_rows)


def missing_lists(source: RankedLists, prep: Any, opts: Any) -> np.ndarray | None:
    """Count the evaluated users (those the NaN rules leave: a test positive, the thresholds
    met) that ranked pairs gave no list, record the count in ``source.missing_count`` (the
    definitions record reads it), and apply ``source.missing_users``: ``"zero"`` warns (their
    empty lists score 0), ``"skip"`` warns and returns the flags that make them NaN with reason
    ``no_list`` (:func:`apply_flags`), ``"error"`` refuses the evaluation. Lists given as an
    array, where every user has a row, return None. A count already recorded (by the client
    of a distributed run, over every user) is kept; only the flags are computed here."""
    from .inputs import user_reasons

    if source.listed is None:
        return None
    reason = user_reasons(prep, opts.min_pos_test, opts.min_items_pool, opts.consider_cold_start)[0]
    evaluated = reason == Reason.OK
    missing = evaluated & ~source.listed
    rule = source.missing_users
    if source.missing_count is None:
        n, total = int(missing.sum()), int(evaluated.sum())
        source.missing_count = {
            "users_without_list": n,
            "evaluated_users": total,
            "share_without_list": n / total if total else 0.0,
        }
        if n:
            _missing_notice(source, prep, missing, n, total)
    if rule != "skip" or not missing.any():
        return None
    return np.where(missing, Reason.NO_LIST, Reason.OK).astype(np.int8)


#: What the warning says each ``missing_users`` rule does.
_MISSING_TEXT = {
    "zero": "they get an empty list, so every metric 0, averaged in (missing_users='zero'; "
    "'skip' leaves them out of the means as NaN with reason 'no_list', 'error' "
    "refuses the run)",
    "skip": "they are NaN with reason 'no_list' and left out of the means (missing_users='skip')",
}


def _missing_notice(
    source: RankedLists, prep: Any, missing: np.ndarray, n: int, total: int
) -> None:
    """The warning (``zero``, ``skip``) or the error (``error``) about users without a list."""
    from .._validation import InputError

    ids = np.asarray(prep.user_ids)[np.flatnonzero(missing)[:5]].tolist()
    head = (
        f"{n} of {total} evaluated users ({n / total:.1%}) have no list in the ranked "
        f"input of {source.func}, e.g. user ids {ids}"
    )
    if source.missing_users == "error":
        raise InputError(
            f"The 'missing_users' parameter of {source.func} is 'error', and {head}. A "
            "truncated export would be evaluated as a bad model: give every user a list, or "
            "set missing_users='zero' (their metrics 0) or 'skip' (NaN, left out of the "
            "means)."
        )
    warnings.warn(
        f"{head}: {_MISSING_TEXT[source.missing_users]}. A file that covers only "
        "some users is often a truncated export.",
        UserWarning,
        stacklevel=6,
    )


#: The NaN rule ``missing_users="skip"`` adds to the definitions record.
NO_LIST_RULE = (
    "ranked input with no list for the user (missing_users='skip'; with 'zero', "
    "the default, such a user gets an empty list and every metric 0)"
)


def record_missing(defs: dict[str, Any], source: Any) -> None:
    """Add the ``no_list`` NaN rule to a definitions record of ranked input evaluated under
    ``missing_users="skip"`` (the rule changes the means, so it is part of the fingerprint);
    the counts are in ``defs["source"]`` (:meth:`RankedLists.describe`). ``defs`` is changed
    in place; under ``"zero"`` it stays as it always was."""
    if (
        isinstance(source, RankedLists)
        and source.listed is not None
        and source.missing_users == "skip"
    ):
        defs["nan_rules"] = {**defs["nan_rules"], "no_list": NO_LIST_RULE}


def apply_flags(raw: Any, flags: np.ndarray | None) -> None:
    """Users found undefined while their lists were selected outside the engine: their reason
    (where the engine had none) and NaN metrics; ``raw`` is changed in place."""
    if flags is None:
        return
    users = np.flatnonzero((flags != Reason.OK) & (raw.reason == Reason.OK))
    raw.reason[users] = flags[users]
    raw.out[:, users, :] = np.nan
    if raw.topk.shape[0]:
        raw.topk[users] = -1


def left_out_for_candidates(plan: Any, func: str) -> Any:
    """The plan under a sampled-negative protocol: the metrics of the top-K lists (and the
    aggregates over them) are not defined over sampled candidates; named ones are refused,
    the others left out and recorded in ``plan.left_out``."""
    out = [
        s.name for s in plan.specs if s.kind == "list" or (s.kind == "aggregate" and not s.needs)
    ]
    named = {
        str(x).lower()
        for x in (
            [plan.options.metrics]
            if isinstance(plan.options.metrics, str)
            else plan.options.metrics
        )
    }
    prof = PROFILES.get(plan.options.profile) if plan.options.profile else None
    if prof is not None and list(plan.options.metrics) == list(prof["metrics"]):
        named = set()
    refused = [x for x in out if x in named]
    if refused:
        raise param_error(
            "metrics",
            func,
            "rank metrics only with sampled negatives (the "
            "top-K lists of candidates are not recommendation lists)",
            f"{refused}",
            got_is_text=True,
        )
    left = {x: "a metric of the top-K lists (sampled negatives)" for x in out}
    specs = tuple(s for s in plan.specs if s.name not in left)
    return replace(
        plan, specs=specs, left_out={**plan.left_out, **left}, want_topk=plan.options.return_topk
    )


def back_to_items(raw: Any, full: Any, cand: np.ndarray) -> None:
    """After a run on candidate columns: the top-K lists as item indices, and the users' train
    counts and catalogue as given (``raw`` is changed in place)."""
    if raw.topk.shape[0]:
        listed = raw.topk >= 0
        rows = np.nonzero(listed)[0]
        raw.topk[listed] = cand[rows, raw.topk[listed]]
    raw.n_train = (
        np.diff(full.train.indptr).astype(np.int64)
        if full.train is not None
        else np.zeros_like(raw.n_train)
    )
