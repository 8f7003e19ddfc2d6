"""``evaluate()``: the native API, from any score source to a :class:`Results`."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import InputError, as_csr, check_int, param_error
from ..engine.codes import N_AT_K, N_WHOLE, REASONS, Reason, Tie
from ..engine.driver import EngineInput, run_ranked, run_scores, thread_limits
from ..scores import (
    BiasScores,
    CallableScores,
    DenseScores,
    FactorScores,
    RankedLists,
    ScoreSource,
)
from . import beyond
from .profiles import get_profile
from .registry import METRICS, MetricSpec, column_name, curve_name, resolve_metrics
from .results import Results

__all__ = ["evaluate", "TIE_POLICIES", "NAN_RULES"]

#: Tie policies available to every rank-based metric.
TIE_POLICIES = {t.name.lower(): int(t) for t in Tie}

#: The NaN rules, in the order they are checked; recorded with every result.
NAN_RULES = {
    "no_test": "the user has no stored test entry",
    "min_pos_test": "fewer test entries than min_pos_test",
    "cold_start": "no train entry while consider_cold_start is False (only when train is given)",
    "min_items_pool": "fewer items not in train than min_items_pool",
    "nan_score": "a NaN score among the items not in train",
    "all_equal": "every item not in train has the same score",
    "only_positives": "every item not in train is a positive: only NDCG is computed",
    "pool_le_k": "at most k items not in train: P, TP, R and Hit are NaN at that k",
    "ndcg_no_gain": "NDCG is NaN when no test value (gain) is > 0",
}


@dataclass
class _Prepared:
    train: sp.csr_array | None
    test: sp.csr_array
    n_items: int
    user_ids: np.ndarray
    item_ids: np.ndarray | None


def _unwrap(x: Any) -> tuple[Any, np.ndarray | None, np.ndarray | None]:
    """Accept an interactions container (``.matrix``, ``.user_ids``, ``.item_ids``) or a matrix."""
    if x is not None and hasattr(x, "matrix") and not sp.issparse(x):
        return x.matrix, getattr(x, "user_ids", None), getattr(x, "item_ids", None)
    return x, None, None


def _prepare(train: Any, test: Any, user_ids: Any, func: str) -> _Prepared:
    test_m, test_uids, test_iids = _unwrap(test)
    train_m, train_uids, _ = _unwrap(train)
    X_test = as_csr(test_m, "X_test" if func == "calc_reco_metrics" else "test", func)
    X_train = as_csr(train_m, "X_train" if func == "calc_reco_metrics" else "train", func,
                     allow_none=True)
    if X_train is not None and X_train.shape != X_test.shape:
        raise InputError(
            f"The train and test matrices passed to {func} must have the same shape (users x "
            f"items). Got train {X_train.shape} and test {X_test.shape} instead."
        )
    if X_train is not None:
        _check_disjoint(X_train, X_test, func)
    m, n = X_test.shape
    if user_ids is None:
        user_ids = test_uids if test_uids is not None else train_uids
    if user_ids is None:
        user_ids = np.arange(m)
    user_ids = np.asarray(user_ids)
    if user_ids.shape != (m,):
        raise param_error("user_ids", func, f"an array with one id per test row ({m})", user_ids)
    return _Prepared(X_train, X_test, n, user_ids, test_iids)


def _check_disjoint(X_train: sp.csr_array, X_test: sp.csr_array, func: str) -> None:
    a = sp.csr_array((np.ones(X_train.nnz, dtype=np.int8), X_train.indices, X_train.indptr),
                     shape=X_train.shape)
    b = sp.csr_array((np.ones(X_test.nnz, dtype=np.int8), X_test.indices, X_test.indptr),
                     shape=X_test.shape)
    both = a.multiply(b).tocoo()
    if both.nnz:
        u, i = int(both.row[0]), int(both.col[0])
        raise InputError(
            f"The train and test matrices passed to {func} must not share entries: an item in a "
            f"user's train row cannot also be a test item. Got {both.nnz} shared entries, e.g. "
            f"user (row) {u} and item (column) {i}. Remove test entries that are in train."
        )


def _score_source(prep: _Prepared, A: Any, B: Any, item_biases: Any, scores: Any, scorer: Any,
                  ranked: Any, func: str) -> ScoreSource | RankedLists:
    given = [name for name, v in (("A/B", A if A is not None else B), ("scores", scores),
                                  ("scorer", scorer), ("ranked", ranked)) if v is not None]
    if item_biases is not None and not given:
        given = ["item_biases"]
    if len(given) != 1:
        raise InputError(
            f"{func} needs exactly one source of scores: user and item factors 'A' and 'B' "
            f"(optionally with 'item_biases'), 'item_biases' alone, a dense 'scores' array, a "
            f"'scorer' callable or 'ranked' top-K lists. Got {given or 'none'} instead."
        )
    m, n = prep.test.shape
    kind = given[0]
    if kind == "A/B":
        if A is None or B is None:
            raise InputError(f"The 'A' and 'B' parameters of {func} must be given together "
                             f"(user factors m x p and item factors n x p). Got only "
                             f"{'A' if B is None else 'B'}.")
        src = FactorScores(A, B, item_biases, func=func)
        if src.A.shape[0] != m:
            raise param_error("A", func, f"an array with one row per user ({m} rows, as "
                              "X_test)", A)
        if src.B.shape[0] != n:
            raise param_error("B", func, f"an array with one row per item ({n} rows, as the "
                              "columns of X_test)", B)
        return src
    if item_biases is not None and kind != "item_biases":
        raise InputError(f"The 'item_biases' parameter of {func} goes with factors 'A' and 'B' "
                         f"or alone; it cannot be combined with '{kind}'.")
    if kind == "item_biases":
        src = BiasScores(item_biases, func=func)
        if src.n_items != n:
            raise param_error("item_biases", func, f"a 1-d array with one value per item ({n})",
                              item_biases)
        return src
    if kind == "scores":
        if isinstance(scores, ScoreSource):
            src = scores
        else:
            src = DenseScores(scores, func=func)
            if src.scores.shape != (m, n):
                raise param_error("scores", func, f"an array of shape (users, items) = {(m, n)}",
                                  scores)
        if src.n_items != n:
            raise InputError(f"The score source passed to {func} scores {src.n_items} items, but "
                             f"the test matrix has {n} items (columns).")
        return src
    if kind == "scorer":
        if isinstance(scorer, ScoreSource):
            return scorer
        return CallableScores(scorer, n, func=func)
    return _ranked_lists(ranked, prep, func)


def _ranked_lists(ranked: Any, prep: _Prepared, func: str) -> RankedLists:
    m, n = prep.test.shape
    if isinstance(ranked, pd.DataFrame):
        cols = set(ranked.columns)
        if not {"user", "item"} <= cols or not ({"rank", "score"} & cols):
            raise param_error("ranked", func, "a DataFrame with columns 'user', 'item' and "
                              "'rank' (1 = best) or 'score' (higher = better)",
                              f"columns {list(ranked.columns)}", got_is_text=True)
        df = ranked
        users = df["user"].to_numpy()
        items = df["item"].to_numpy()
        if prep.item_ids is not None:
            pos = pd.Index(prep.item_ids).get_indexer(items)
            if (pos < 0).any():
                bad = items[np.flatnonzero(pos < 0)[0]]
                raise param_error("ranked", func, "items that are in the dataset's item ids",
                                  f"an unknown item id {bad!r}", got_is_text=True)
            items = pos
        upos = pd.Index(prep.user_ids).get_indexer(users)
        if (upos < 0).any():
            bad = users[np.flatnonzero(upos < 0)[0]]
            raise param_error("ranked", func, "users that are in the evaluated user ids",
                              f"an unknown user id {bad!r}", got_is_text=True)
        key = -df["score"].to_numpy(dtype=np.float64) if "rank" not in cols \
            else df["rank"].to_numpy(dtype=np.float64)
        order = np.lexsort((key, upos))
        upos, items = upos[order], np.asarray(items)[order]
        counts = np.bincount(upos, minlength=m)
        L = int(counts.max()) if counts.size else 1
        lists = np.full((m, max(L, 1)), -1, dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        lists[upos, np.arange(upos.shape[0]) - starts[upos]] = items
        ranked = lists
    rl = ranked if isinstance(ranked, RankedLists) else RankedLists(ranked, func=func)
    if rl.items.shape[0] != m:
        raise param_error("ranked", func, f"one list per user ({m} rows)", rl.items)
    if rl.items.size and (rl.items.max() >= n or rl.items.min() < -1):
        raise param_error("ranked", func, f"item indices in [0, {n}) or -1 for padding",
                          f"values from {rl.items.min()} to {rl.items.max()}", got_is_text=True)
    return rl


def _tie_mode(ties: str, func: str) -> int:
    if ties not in TIE_POLICIES:
        raise param_error("ties", func, f"one of {list(TIE_POLICIES)}", ties)
    return TIE_POLICIES[ties]


def _reasons(prep: _Prepared, min_pos_test: int, min_items_pool: int, consider_cold_start: bool
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n_test = np.diff(prep.test.indptr).astype(np.int64)
    m = n_test.shape[0]
    if prep.train is not None:
        n_train = np.diff(prep.train.indptr).astype(np.int64)
    else:
        n_train = np.zeros(m, dtype=np.int64)
    reason = np.zeros(m, dtype=np.int8)
    pool = prep.n_items - n_train
    # checked in reverse order of precedence so that the first rule wins
    reason[pool < min_items_pool] = Reason.MIN_ITEMS_POOL
    if prep.train is not None and not consider_cold_start:
        reason[n_train == 0] = Reason.COLD_START
    reason[n_test < min_pos_test] = Reason.MIN_POS_TEST
    reason[n_test == 0] = Reason.NO_TEST
    return reason, n_train, n_test


def definitions_record(specs: Sequence[MetricSpec], *, k: int, cumulative: bool, ties: str,
                       seed: int, min_pos_test: int, min_items_pool: int,
                       consider_cold_start: bool, source: dict[str, Any]) -> dict[str, Any]:
    """Everything that defines the numbers of a result (JSON-able)."""
    return {
        "metrics": {s.name: s.formula for s in specs},
        "k": k,
        "cumulative": cumulative,
        "ties": ties,
        "ties_seed": seed if ties == "noise" else None,
        "min_pos_test": min_pos_test,
        "min_items_pool": min_items_pool,
        "consider_cold_start": consider_cold_start,
        "nan_rules": NAN_RULES,
        "pool": "items not in the user's train row",
        "positives": "stored test entries (NDCG gains are their values)",
        "source": source,
    }


def fingerprint(definitions: dict[str, Any]) -> str:
    """Short stable hash of a definitions record (the score source's description excluded)."""
    core = {k: v for k, v in definitions.items() if k != "source"}
    text = json.dumps(core, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class RawResult:
    """Kernel outputs before they are shaped into a table."""

    specs: list[MetricSpec]
    topk_specs: list[MetricSpec]
    whole_specs: list[MetricSpec]
    out: np.ndarray           # (n_topk, m, K or 1)
    whole: np.ndarray         # (n_whole, m)
    topk: np.ndarray          # (m, K) top-K items when asked, else (0, K)
    n_tied: np.ndarray        # (m,) pool items tied with a listed item when asked, else (0,)
    reason: np.ndarray        # (m,) int8
    n_train: np.ndarray
    n_test: np.ndarray
    prep: _Prepared
    topk_only: bool
    seconds: float
    source: Any = None


def compute(train: Any, test: Any, *, A: Any = None, B: Any = None, item_biases: Any = None,
            scores: Any = None, scorer: Any = None, ranked: Any = None,
            metrics: Any = ("p", "ap", "ndcg"), k: int = 10, cumulative: bool = False,
            ties: str = "noise", seed: int = 1, min_pos_test: int = 1,
            min_items_pool: int = 2, consider_cold_start: bool = True, user_ids: Any = None,
            nthreads: int = -1, block_rows: int | None = None, return_topk: bool = False,
            progress: Callable[[int], None] | None = None, func: str = "evaluate") -> RawResult:
    """Validate, then run the engine. Shared by :func:`evaluate` and ``calc_reco_metrics``."""
    t0 = time.perf_counter()
    prep = _prepare(train, test, user_ids, func)
    m, n = prep.test.shape
    k = check_int(k, "k", func, minimum=1)
    if k > n:
        raise param_error("k", func, f"an int between 1 and the number of items ({n})", k)
    min_pos_test = check_int(min_pos_test, "min_pos_test", func, minimum=1)
    min_items_pool = check_int(min_items_pool, "min_items_pool", func, minimum=1)
    seed = check_int(seed, "seed", func, minimum=0)
    tie_mode = _tie_mode(ties, func)
    specs = resolve_metrics(metrics, func)
    if ties == "average" and any(s.name == "auc_topk" for s in specs):
        named = [str(x).lower() for x in ([metrics] if isinstance(metrics, str) else metrics)]
        if "auc_topk" in named:
            raise param_error("ties", func, "'noise', 'index', 'optimistic' or 'pessimistic' "
                              "when 'auc_topk' is asked (its expectation over tie orderings is "
                              "not implemented)", ties)
        specs = [s for s in specs if s.name != "auc_topk"]  # "all": leave it out, as recorded
    source = _score_source(prep, A, B, item_biases, scores, scorer, ranked, func)
    topk_only = isinstance(source, RankedLists)
    if topk_only:
        asked = [s.name for s in specs if not s.at_k and s.stage == "kernel"]
        explicit = metrics if not isinstance(metrics, str) else [metrics]
        if asked and "all" not in [str(x).lower() for x in explicit]:
            raise param_error("metrics", func, "top-K metrics only when the input is ranked "
                              "top-K lists (whole-ranking metrics need a score for every item)",
                              f"{asked}", got_is_text=True)
        specs = [s for s in specs if s.at_k or s.stage != "kernel"]
        specs = [s for s in specs if all(METRICS[n].at_k for n in s.needs)]
        if source.k < k:
            raise param_error("k", func, f"at most the length of the ranked lists ({source.k})", k)
    kernel_specs = [s for s in specs if s.stage == "kernel"]
    topk_specs = [s for s in kernel_specs if s.at_k]
    whole_specs = [s for s in kernel_specs if not s.at_k]
    if any(s.stage == "list" or (s.stage == "aggregate" and not s.needs) for s in specs):
        return_topk = True
    slots = np.full(N_AT_K, -1, dtype=np.int64)
    for row, s in enumerate(topk_specs):
        slots[s.code] = row
    wslots = np.full(N_WHOLE, -1, dtype=np.int64)
    for row, s in enumerate(whole_specs):
        wslots[s.code] = row
    reason, n_train, n_test = _reasons(prep, min_pos_test, min_items_pool, consider_cold_start)
    tr = prep.train if prep.train is not None else sp.csr_array((m, n), dtype=np.float64)
    inp = EngineInput(
        tr_ptr=np.ascontiguousarray(tr.indptr, dtype=np.int64),
        tr_idx=np.ascontiguousarray(tr.indices, dtype=np.int64),
        te_ptr=np.ascontiguousarray(prep.test.indptr, dtype=np.int64),
        te_idx=np.ascontiguousarray(prep.test.indices, dtype=np.int64),
        te_val=np.ascontiguousarray(prep.test.data, dtype=np.float64),
        n_items=n, K=k, cumulative=bool(cumulative), slots=slots, wslots=wslots,
        tie_mode=tie_mode, seed=seed, want_topk=bool(return_topk) and not topk_only,
    )
    rows = np.flatnonzero(reason == Reason.OK).astype(np.int64)
    with thread_limits(nthreads):
        if topk_only:
            out = run_ranked(inp, source.items, rows)
            whole = np.full((0, m), np.nan)
            topk = np.full((m, k), -1, dtype=np.int64)
            if return_topk:
                topk[rows] = _lists_without_train(source.items, tr, k)[rows]
            else:
                topk = topk[:0]
            n_tied = np.zeros(0, dtype=np.int64)
        else:
            if getattr(source, "n_users", None) not in (None, m):
                raise InputError(f"The score source passed to {func} scores {source.n_users} "
                                 f"users, but the test matrix has {m} users (rows).")
            safe = isinstance(source, (FactorScores, BiasScores, DenseScores))
            out, whole, topk, n_tied = run_scores(inp, source.block, source.dtype, rows, reason,
                                                  block_rows=block_rows, progress=progress,
                                                  thread_safe=safe)
    return RawResult(specs, topk_specs, whole_specs, out, whole, topk, n_tied, reason, n_train,
                     n_test, prep, topk_only, time.perf_counter() - t0, source)


def _lists_without_train(lists: np.ndarray, train: sp.csr_array, k: int) -> np.ndarray:
    """The first k items of each ranked list that are not in the user's train row."""
    m, L = lists.shape
    rows = np.repeat(np.arange(m), L)
    flat = lists.ravel()
    keep = flat >= 0
    keep[keep] = ~beyond._contains(train, rows[keep], flat[keep])
    out = np.full((m, k), -1, dtype=np.int64)
    rank = np.cumsum(keep.reshape(m, L), axis=1) - 1
    sel = keep.reshape(m, L) & (rank < k)
    r, c = np.nonzero(sel)
    out[r, rank[r, c]] = lists[r, c]
    return out


def evaluate(train: Any, test: Any, *, A: Any = None, B: Any = None, item_biases: Any = None,
             scores: Any = None, scorer: Any = None, ranked: Any = None,
             metrics: str | Sequence[str] | None = None, k: int = 10,
             cumulative: bool = False, ties: str | None = None, seed: int = 1,
             min_pos_test: int = 1, min_items_pool: int = 2, consider_cold_start: bool = True,
             user_ids: Any = None, nthreads: int = -1, block_rows: int | None = None,
             return_topk: bool = False, item_features: Any = None,
             serendipity_top_n: int = 100, profile: str | None = None,
             progress: Callable[[int], None] | None = None) -> Results:
    r"""Evaluate a model's full-catalog ranking of every user's items not in train.

    Parameters
    ----------
    train, test : scipy.sparse CSR (users x items) or an interactions container
        Train entries are excluded from each user's ranking; test entries are the positives and
        their values the NDCG gains. ``train`` may be None (nothing excluded).
    A, B, item_biases : array-like, optional
        User factors (m x p), item factors (n x p) and item biases:
        :math:`s_{ui} = \langle A_u, B_i \rangle + b_i`. ``item_biases`` alone is a
        non-personalised model.
    scores : ndarray or ScoreSource, optional
        A dense (m x n) score array, or any :class:`~recoeval_tracking.ScoreSource`.
    scorer : callable, optional
        ``scorer(user_indices) -> (len(user_indices), n)`` scores; called one block at a time.
    ranked : ndarray or DataFrame, optional
        Top-K lists: an (m x L) array of item indices best first (-1 padded), or a DataFrame with
        columns user, item and rank or score. Gives the top-K metrics only.
    metrics : list of str or "all", optional
        Names from :data:`~recoeval_tracking.metrics.registry.METRICS`; by default the profile's
        metrics, or P, AP and NDCG without a profile.
    k : int
        The cutoff K (1 <= k <= number of items).
    cumulative : bool
        Also compute every metric at 1..K (``Results.curves_per_user``).
    ties : {"noise", "index", "index_desc", "optimistic", "pessimistic", "average"}, optional
        By default the profile's policy, or ``noise`` without a profile. How tied scores are
        ordered: a seeded random key per (user, item) that does not depend on
        the thread count; the item index (lower first, or higher first as trec_eval orders tied
        document ids); tied positives before (optimistic) or
        after (pessimistic) tied negatives; or the exact expected value over every ordering of
        the tied items (average, McSherry & Najork 2008).
    seed : int
        Seed of the tie-breaking noise.
    min_pos_test, min_items_pool, consider_cold_start
        The recometrics thresholds: users below them get NaN (counted by reason).
    user_ids : array-like, optional
        Original id of each row, for the per-user table (taken from an interactions container
        when one is given).
    nthreads : int
        Threads for both numba and BLAS; -1 uses every core.
    block_rows : int, optional
        Users scored at a time (bounds memory); chosen from the catalogue size by default.
    return_topk : bool
        Also extract every user's top-K items (``Results.topk``) and count the pool items tied
        with them (per-user column ``n_tied_topk``). Implied by beyond-accuracy metrics.
    item_features : array-like (n_items x d), optional
        Item vectors for ``ils``/``diversity``; the item factors ``B`` are used when not given.
    serendipity_top_n : int
        Items among the N most popular in train count as expected for ``serendipity``.
    profile : str, optional
        A library profile (:data:`~recoeval_tracking.metrics.profiles.PROFILES`): selects the
        metrics and tie policy that reproduce that library's numbers; ``metrics`` or ``ties``
        given explicitly take precedence.

    Returns
    -------
    Results

    Notes
    -----
    Definitions follow the recometrics ``calc.reco.metrics`` documentation; see
    :mod:`recoeval_tracking.metrics.registry` for every formula and the "differences from
    recometrics" section of the README.
    """
    prof = get_profile(profile) if profile is not None else {}
    if metrics is None:
        metrics = prof.get("metrics", ("p", "ap", "ndcg"))
    if ties is None:
        ties = prof.get("ties", "noise")
    raw = compute(train, test, A=A, B=B, item_biases=item_biases, scores=scores, scorer=scorer,
                  ranked=ranked, metrics=metrics, k=k, cumulative=cumulative, ties=ties,
                  seed=seed, min_pos_test=min_pos_test, min_items_pool=min_items_pool,
                  consider_cold_start=consider_cold_start, user_ids=user_ids, nthreads=nthreads,
                  block_rows=block_rows, return_topk=return_topk, progress=progress)
    columns: dict[str, Any] = {
        "user_id": raw.prep.user_ids,
        "n_train": raw.n_train,
        "n_test": raw.n_test,
        "nan_reason": np.asarray(REASONS, dtype=object)[raw.reason],
    }
    if raw.n_tied.shape[0]:
        columns["n_tied_topk"] = raw.n_tied
    curves: dict[str, np.ndarray] = {}
    for row, s in enumerate(raw.topk_specs):
        columns[column_name(s, k)] = raw.out[row, :, -1]
        if cumulative:
            curves[curve_name(s)] = raw.out[row]
    for row, s in enumerate(raw.whole_specs):
        columns[column_name(s, k)] = raw.whole[row]
    aggregates, skipped = _beyond_accuracy(raw, k, columns, curves if cumulative else None,
                                           item_features, serendipity_top_n)
    per_user = pd.DataFrame(columns)
    per_user["nan_reason"] = per_user["nan_reason"].astype(str)
    source = raw.source.describe() if hasattr(raw.source, "describe") else {}
    specs = [s for s in raw.specs if s.name not in skipped]
    defs = definitions_record(specs, k=k, cumulative=bool(cumulative), ties=ties,
                              seed=seed, min_pos_test=min_pos_test,
                              min_items_pool=min_items_pool,
                              consider_cold_start=consider_cold_start, source=source)
    if any(s.name == "serendipity" for s in specs):
        defs["serendipity_top_n"] = serendipity_top_n
    if profile is not None:
        defs["profile"] = profile
    return Results(per_user=per_user, k=k, curves_per_user=curves, definitions=defs,
                   fingerprint=fingerprint(defs), topk_only=raw.topk_only,
                   timings={"eval": raw.seconds},
                   topk=raw.topk if raw.topk.shape[0] else None, aggregates=aggregates)


def _beyond_accuracy(raw: RawResult, k: int, columns: dict[str, Any],
                     curves: dict[str, np.ndarray] | None, item_features: Any,
                     serendipity_top_n: int) -> tuple[dict[str, float], set[str]]:
    """Fill the list-based per-user columns (and their @1..K curves when ``curves`` is given)
    and return the aggregates, and the names skipped for want of item vectors."""
    names = [s for s in raw.specs if s.stage != "kernel"]
    aggregates: dict[str, float] = {}
    skipped: set[str] = set()
    if not names:
        return aggregates, skipped
    m, n = raw.prep.test.shape
    train = raw.prep.train if raw.prep.train is not None else sp.csr_array((m, n))
    topk = raw.topk
    vectors = None
    if item_features is not None:
        vectors = item_features.toarray() if sp.issparse(item_features) else \
            np.asarray(item_features, dtype=np.float64)
        if vectors.ndim != 2 or vectors.shape[0] != n:
            raise param_error("item_features", "evaluate",
                              f"an array with one row per item ({n} rows)", item_features)
    elif isinstance(raw.source, FactorScores):
        B = raw.source.B
        vectors = B[:, :-1] if raw.source._ones else B
    per_user_fns = {
        "novelty": lambda t: beyond.novelty(t, train),
        "ils": lambda t: beyond.intra_list_similarity(t, vectors),
        "diversity": lambda t: 1.0 - beyond.intra_list_similarity(t, vectors),
        "serendipity": lambda t: beyond.serendipity(t, raw.prep.test, train, serendipity_top_n),
    }
    ok = raw.reason == Reason.OK
    for s in names:
        col = column_name(s, k)
        if s.name in ("ils", "diversity") and vectors is None:
            skipped.add(s.name)
            continue
        if s.name in per_user_fns:
            fn = per_user_fns[s.name]
            columns[col] = fn(topk)
            if curves is not None:
                curves[curve_name(s)] = np.stack([fn(topk[:, :j]) for j in range(1, k + 1)],
                                                 axis=1)
        elif s.name == "gauc":
            aggregates[col] = beyond.gauc(columns["roc_auc"], raw.n_test)
        elif s.name == "p_pooled":
            aggregates[col] = beyond.pooled_precision(columns[f"tp_at_{k}"], raw.n_test, k)
        else:
            fn = {"coverage": beyond.coverage, "aggregated_diversity": beyond.aggregated_diversity,
                  "entropy": beyond.shannon_entropy, "gini": beyond.gini_index,
                  "personalisation": beyond.personalisation}[s.name]
            aggregates[col] = fn(topk[ok], n)
    return aggregates, skipped
