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

from ..engine.codes import Reason
from ..scores import RankedLists, ScoreSource
from .implicit_topk import implicit_lists
from .profiles import PROFILES

__all__ = ["split_judgements", "apply_no_positive", "InfAsNaN", "left_out_for_ranked",
           "left_out_for_candidates", "back_to_items", "prepare_source", "apply_flags",
           "RANK_LIST_METRICS"]

#: List-stage metrics that are rank metrics (a user without a positive gets 0 under "zero").
RANK_LIST_METRICS = ("rbp", "bpref")


def split_judgements(test: sp.csr_array, level: float | None
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


def left_out_for_ranked(plan: Any, func: str) -> Any:
    """The plan for ranked top-K input when its metrics came from a profile: the whole-ranking
    metrics and the aggregates built on them are left out (with a warning), and recorded in
    ``plan.left_out``. Metrics named explicitly are left to the caller's refusal."""
    opts = plan.options
    prof = PROFILES.get(opts.profile) if opts.profile is not None else None
    if prof is None or list(opts.metrics) != list(prof["metrics"]):
        return plan
    from .registry import METRICS

    out = {s.name: RANKED_REASON for s in plan.specs
           if s.kind == "whole" or any(METRICS[x].kind == "whole" for x in s.needs)}
    if out:
        warnings.warn(f"The '{opts.profile}' profile with ranked top-K lists (in {func}) takes "
                      f"the top-K metrics only; left out: {sorted(out)}.", UserWarning,
                      stacklevel=4)
    specs = tuple(s for s in plan.specs if s.name not in out)
    return replace(plan, specs=specs, left_out={**plan.left_out, **out})


def prepare_source(source: Any, prep: Any, opts: Any) -> tuple[Any, np.ndarray | None]:
    """The score source as the options read it: +-inf as NaN (``inf_scores="nan"``), and
    implicit's top-K lists for ``ties="implicit"`` (with the per-user reasons found while
    selecting them, else None)."""
    if isinstance(source, RankedLists):
        return source, None
    if opts.inf_scores == "nan":
        # the CPU engine applies the rule when it reads the blocks itself; implicit's lists are
        # selected from the blocks here, before the engine, so they need the converted scores
        source = InfAsNaN(source, in_engine=opts.backend == "cpu" and opts.ties != "implicit")
    if opts.ties != "implicit":
        return source, None
    m = prep.test.shape[0]
    rows = np.flatnonzero(np.diff(prep.test.indptr) > 0).astype(np.int64)
    return implicit_lists(source, prep.train, m, rows, opts.k, opts.block_rows)


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
    from .._validation import param_error

    out = [s.name for s in plan.specs if s.kind == "list"
           or (s.kind == "aggregate" and not s.needs)]
    named = {str(x).lower() for x in ([plan.options.metrics] if isinstance(
        plan.options.metrics, str) else plan.options.metrics)}
    prof = PROFILES.get(plan.options.profile) if plan.options.profile else None
    if prof is not None and list(plan.options.metrics) == list(prof["metrics"]):
        named = set()
    refused = [x for x in out if x in named]
    if refused:
        raise param_error("metrics", func, "rank metrics only with sampled negatives (the "
                          "top-K lists of candidates are not recommendation lists)",
                          f"{refused}", got_is_text=True)
    left = {x: "a metric of the top-K lists (sampled negatives)" for x in out}
    specs = tuple(s for s in plan.specs if s.name not in left)
    return replace(plan, specs=specs, left_out={**plan.left_out, **left},
                   want_topk=plan.options.return_topk)


def back_to_items(raw: Any, full: Any, cand: np.ndarray) -> None:
    """After a run on candidate columns: the top-K lists as item indices, and the users' train
    counts and catalogue as given (``raw`` is changed in place)."""
    if raw.topk.shape[0]:
        listed = raw.topk >= 0
        rows = np.nonzero(listed)[0]
        raw.topk[listed] = cand[rows, raw.topk[listed]]
    raw.n_train = np.diff(full.train.indptr).astype(np.int64) if full.train is not None \
        else np.zeros_like(raw.n_train)
