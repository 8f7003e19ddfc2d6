"""The metric engine against the slow reference on inputs that reach every branch of the kernels.

tests/metrics/test_against_reference.py draws catalogues of at most 9 items, a handful of
positives and (mostly) every metric at once, so several code paths of the kernels never run
there. The strategy below reaches them:

* catalogues from 1 item to well over one counting chunk (the kernels count the items that
  outscore a positive in chunks of 1,024 and, when only @k metrics are asked, stop after the chunk
  where the count reaches K);
* users with 0 to a few hundred positives: 48 or more positives switch counting to a binary
  search over the sorted positive scores whenever whole-ranking metrics are asked or
  ``n_pos * 1024 > 4 * n_items``; each example runs twice, with every metric and with the @k
  metrics (and the list-based ones) only, so both the scan and the search run on the same data;
* train rows covering most of the catalogue (pools of a few items, K beyond the pool), cold-start
  users, thresholds;
* distinct, tied and heavily tied scores, -inf scores (a -inf positive beside masked train items
  takes its own counting path), NaN scores in train and in the pool, all-equal users;
* every tie policy; K from 1 to the whole catalogue, cumulative or not; float32 and float64;
* every registered metric: the @k and whole-ranking ones against :mod:`reference`, the top-K list
  itself (``Results.topk``, ``n_tied_topk``) against the reference's ranking, and the list-based
  and aggregate metrics recomputed from that list.

Noise tie-breaking has no reference ordering; its test checks that the top-K list is a ranking of
the pool by score and that every @k metric equals the reference's value on that very list (so a
list ordered without the noise key, or metrics counted with another key, disagree on ties).

Then one deterministic test per path, so that a failure names the path. The two kernel constants
they aim at are hard-coded here: the chunk of 1,024 items and the threshold of 48 positives for the
binary search (``_CHUNK`` and ``_BINARY_SEARCH_MIN_POS`` in recoeval_tracking/engine/kernels.py).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import reference as ref
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import TOPK_METRICS, metrics_at_k

import recoeval_tracking as rt

from . import _oracle as orc

#: Items per counting chunk (kernels.py ``_CHUNK``).
CHUNK = 1024
#: Positives from which counting may switch to the binary search (kernels.py
#: ``_BINARY_SEARCH_MIN_POS``): when whole-ranking metrics are asked or n_pos * CHUNK > 4 n_items.
SEARCH_MIN_POS = 48

ATOL = 1e-9
TEST_VALUES = np.array([-1.0, 0.0, 0.5, 1.0, 1.0, 2.0, 3.0, 1.0, 1.0])


def _close(got: Any, want: Any, msg: str = "") -> None:
    """Equal to ATOL, NaN where NaN. Arrays of one shape that are plainly within ATOL (equal,
    both NaN, or closer than ATOL) pass without numpy's assertion, whose set-up costs some 50 us
    a call over the tens of thousands of comparisons here; anything else goes to it."""
    try:
        g = np.asarray(got, dtype=np.float64)
        w = np.asarray(want, dtype=np.float64)
    except (TypeError, ValueError):
        g = w = None
    if g is not None and g.shape == w.shape:
        with np.errstate(invalid="ignore"):
            near = (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= ATOL)
        if near.all():
            return
    np.testing.assert_allclose(got, want, rtol=0, atol=ATOL, equal_nan=True, err_msg=msg)


def _cells(
    rng: np.random.Generator, m: int, n: int, train_below: float, test_above: float
) -> tuple[sp.csr_array, sp.csr_array]:
    """Train cells where a uniform draw is below ``train_below`` (value 1), test cells where it is
    above ``test_above`` (values drawn from TEST_VALUES)."""
    cells = rng.random((m, n))
    tr_r, tr_c = np.nonzero(cells < train_below)
    te_r, te_c = np.nonzero(cells > test_above)
    tr = sp.csr_array((np.ones(tr_r.size), (tr_r, tr_c)), shape=(m, n))
    te = sp.csr_array((rng.choice(TEST_VALUES, te_r.size), (te_r, te_c)), shape=(m, n))
    return tr, te


def _derandomized(max_examples: int, *also: HealthCheck) -> settings:
    """Hypothesis settings of these tests: the same examples on every run, no example database,
    no deadline."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, *also],
    )


def _registry_names(stage: str) -> list[str]:
    return [n for n, s in rt.METRICS.items() if s.stage == stage]


@functools.cache
def _topk_only_names(ties: str) -> tuple[str, ...]:
    return tuple(_topk_only_metrics_uncached(ties))


def _topk_only_metrics(ties: str) -> list[str]:
    """:func:`_topk_only_metrics_uncached`, read from the registry once per tie policy."""
    return list(_topk_only_names(ties))


def _topk_only_metrics_uncached(ties: str) -> list[str]:
    """The @k metrics the kernel computes, the list metrics and the aggregates built on them:
    everything that needs no whole-ranking metric. Asking only these lets the kernel stop
    counting early and keeps the binary search for catalogues under 256 items per positive."""
    names = [
        n
        for n, s in rt.METRICS.items()
        if (s.stage == "kernel" and s.at_k)
        or s.stage == "list"
        or (s.stage == "aggregate" and all(rt.METRICS[x].at_k for x in s.needs))
    ]
    if ties == "average":  # their expectation over tie orderings is not implemented (refused)
        names = [n for n in names if rt.METRICS[n].average_ties]
    return names


def test_registry_is_what_this_file_checks():
    """A metric added to the registry must get an oracle here before it counts as tested."""
    kernel = set(_registry_names("kernel"))
    assert kernel == set(orc.KERNEL_METRICS)
    assert set(_registry_names("list")) == set(orc.LIST_METRICS)
    assert set(_registry_names("aggregate")) == set(orc.AGGREGATE_METRICS)
    assert {n for n in kernel if rt.METRICS[n].at_k} == set(TOPK_METRICS)
    assert {n for n in kernel if not rt.METRICS[n].at_k} == set(orc.WHOLE_RANKING_METRICS)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


@dataclass
class Case:
    train: sp.csr_array | None
    test: sp.csr_array
    S: np.ndarray  # float64 holding exactly the values the engine sees
    dtype: type
    k: int
    cumulative: bool
    ties: str
    kw: dict
    features: np.ndarray
    top_n: int
    #: oracle values already computed for this case (see :func:`_list_expected`)
    memo: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def shape(self) -> tuple[int, int]:
        return self.S.shape

    def describe(self) -> str:
        m, n = self.shape
        npos = np.diff(self.test.indptr).tolist()
        ntr = [0] * m if self.train is None else np.diff(self.train.indptr).tolist()
        return (
            f"m={m} n={n} k={self.k} cumulative={self.cumulative} ties={self.ties} "
            f"dtype={self.dtype.__name__} n_pos={npos} n_train={ntr} {self.kw}"
        )


def _n_orderings(values: np.ndarray) -> int:
    _, counts = np.unique(values, return_counts=True)
    return math.prod(math.factorial(int(c)) for c in counts)


def make_case(seed: int, ties: list[str]) -> Case:
    """A random case drawn from ``seed``: every size, train, score and option mode is drawn with
    fixed probabilities, so that a modest number of examples spreads over all the paths (letting
    hypothesis draw each knob would favour the smallest catalogues)."""
    rng = np.random.default_rng(seed)
    weights = np.array([0.4 if t == "average" else 1.0 for t in ties])
    tie = str(rng.choice(ties, p=weights / weights.sum()))
    if tie == "average":  # the reference enumerates every ordering of the ties: small cases
        size = "tiny"
    else:
        size = rng.choice(["tiny", "small", "medium", "large"], p=[0.25, 0.2, 0.25, 0.3])
    lo, hi = {
        "tiny": (1, 8),
        "small": (9, 60),
        "medium": (61, 400),
        "large": (CHUNK + 1, 2 * CHUNK + 600),
    }[size]
    n = int(rng.integers(lo, hi + 1))
    m = int(rng.integers(1, (2 if size == "large" else 4) + 1))
    train_mode = rng.choice(["none", "some", "most", "mixed"])
    score_mode = rng.choice(["distinct", "ties", "heavy_ties", "positives_tied"])
    many_pos = rng.random() < 0.6
    tr_r, tr_c, te_r, te_c, te_v = [], [], [], [], []
    S = np.empty((m, n))
    for u in range(m):
        mode = rng.choice(["none", "some", "most"]) if train_mode == "mixed" else train_mode
        if mode == "none" or n == 1:
            n_train = 0
        elif mode == "some":
            n_train = int(rng.integers(0, n // 3 + 1))
        else:  # most of the catalogue: a pool of a few items
            n_train = n - int(rng.integers(1, min(n, 12) + 1))
        perm = rng.permutation(n)
        train_items, pool = perm[:n_train], perm[n_train:]
        pool_size = pool.size
        kind = rng.choice(["zero", "one", "few", "many"], p=[0.08, 0.2, 0.32, 0.4])
        if kind == "many" and many_pos and pool_size > SEARCH_MIN_POS:
            n_pos = int(rng.integers(SEARCH_MIN_POS, min(pool_size, 300) + 1))
        elif kind == "zero":
            n_pos = 0
        elif kind == "one":
            n_pos = min(1, pool_size)
        else:
            n_pos = int(rng.integers(1, min(pool_size, 6) + 1)) if pool_size else 0
        pos = rng.choice(pool, size=n_pos, replace=False) if n_pos else np.array([], int)
        tr_r += [u] * n_train
        tr_c += train_items.tolist()
        te_r += [u] * n_pos
        te_c += pos.tolist()
        te_v += rng.choice(TEST_VALUES, n_pos).tolist()
        # scores: on a grid of halves (exact in float32)
        if score_mode == "distinct":
            row = rng.permutation(n) * 0.5 - 3.0
        elif score_mode == "ties":
            row = rng.integers(0, max(2, n // 4), n) * 0.5
        elif score_mode == "heavy_ties":
            row = rng.integers(0, 3, n).astype(np.float64)
        else:  # the positives share one score, which negatives share too
            row = rng.integers(0, max(2, n // 3), n) * 0.5
            row[pos] = 1.0
            row[rng.random(n) < 0.2] = 1.0
        if rng.random() < 0.25:  # -inf scores, positives and train items included
            row[rng.random(n) < 0.3] = -np.inf
        if rng.random() < 0.05:
            row[:] = 2.0  # every score equal
        if rng.random() < 0.07:
            row[rng.integers(0, n)] = np.nan  # NaN in the pool (nan_score) or in train (ignored)
        if tie == "average" and not np.isnan(row[pool]).any() and _n_orderings(row[pool]) > 720:
            row = rng.permutation(n) * 0.5 - 3.0
            row[rng.choice(n, size=min(n, 3), replace=False)] = 0.25  # one tie of three
        S[u] = row
    with_train = train_mode != "none" or rng.random() < 0.5
    test = sp.csr_array((np.array(te_v, dtype=np.float64), (te_r, te_c)), shape=(m, n))
    train = sp.csr_array((np.ones(len(tr_r)), (tr_r, tr_c)), shape=(m, n)) if with_train else None
    dtype = np.float32 if rng.random() < 0.5 else np.float64
    S = S.astype(dtype).astype(np.float64)
    k = int(rng.integers(1, min(n, 12) + 1)) if rng.random() < 0.6 else int(rng.integers(1, n + 1))
    cumulative = bool(rng.random() < 0.5) and k <= 64
    kw = dict(
        min_pos_test=int(rng.choice([1, 1, 1, 2])),
        min_items_pool=int(rng.choice([1, 2, 2, 3])),
        consider_cold_start=bool(rng.random() < 0.7),
    )
    features = rng.integers(-2, 3, size=(n, 3)).astype(np.float64)
    return Case(train, test, S, dtype, k, cumulative, tie, kw, features, int(rng.choice([0, 1, 3])))


def cases(ties: list[str]) -> st.SearchStrategy[Case]:
    return st.integers(0, 2**63 - 1).map(lambda seed: make_case(seed, ties))


# --------------------------------------------------------------------------------------------
# Running the engine and the oracle
# --------------------------------------------------------------------------------------------


def _run(case: Case, metrics: Any, **extra: Any) -> rt.Results:
    return rt.evaluate(
        case.train,
        case.test,
        scores=case.S.astype(case.dtype),
        metrics=metrics,
        k=case.k,
        cumulative=case.cumulative,
        ties=case.ties,
        nthreads=1,
        return_topk=True,
        item_features=case.features,
        serendipity_top_n=case.top_n,
        **case.kw,
        **extra,
    )


def _column(res: rt.Results, name: str) -> np.ndarray | None:
    col = f"{name}_at_{res.k}" if rt.METRICS[name].at_k else name
    if col not in res.per_user.columns:
        return None
    return res.per_user[col].to_numpy(dtype=np.float64)


def _users(case: Case):
    m, n = case.shape
    test_rows = orc.rows_of(case.test, m)
    train_rows = orc.rows_of(case.train, m)
    for u in range(m):
        train_items = None if case.train is None else sorted(train_rows[u])
        pool = [i for i in range(n) if i not in train_rows[u]]
        yield u, train_items, pool, test_rows[u], train_rows


def _list_oracles(case: Case) -> dict[str, Any]:
    """The oracle of each per-user list metric of ``case``: ``fn(list, user) -> value``."""
    m, n = case.shape
    test_rows = orc.rows_of(case.test, m)
    train_rows = orc.rows_of(case.train, m)
    per_user = {
        "novelty": lambda L, u: orc.novelty(L, train_rows, n),
        "ils": lambda L, u: orc.ils(L, case.features),
        "diversity": lambda L, u: 1.0 - orc.ils(L, case.features),
        "serendipity": lambda L, u: orc.serendipity(L, test_rows[u], train_rows, n, case.top_n),
    }
    per_user.update(_popularity_and_list_ranks(train_rows, test_rows, n, case.k))
    return per_user


def _oracles_of(case: Case) -> dict[str, Any]:
    """:func:`_list_oracles` of ``case``, made once."""
    if "oracles" not in case.memo:
        case.memo["oracles"] = _list_oracles(case)
    return case.memo["oracles"]


def _list_expected(case: Case, lists: list[list[int]], name: str) -> tuple[np.ndarray, Any]:
    """The oracle's values of the list metric ``name`` on ``lists`` (per user, and per user and
    cutoff when ``case`` is cumulative, else None). Memoised on the case: both runs of a case
    (all metrics, @k metrics only) check the same lists against the same values."""
    key = (tuple(map(tuple, lists)), name)
    if key in case.memo:
        return case.memo[key]
    fn = _oracles_of(case)[name]
    m, k = case.shape[0], case.k
    want = np.array([fn(lists[u], u) for u in range(m)])
    curve = None
    if case.cumulative:
        if name in ("ils", "diversity"):
            sign, shift = (1.0, 0.0) if name == "ils" else (-1.0, 1.0)
            curve = np.array(
                [
                    shift + sign * np.array(orc.ils_prefixes(lists[u], case.features))
                    for u in range(m)
                ]
            )
        else:
            curve = np.array([[fn(lists[u][:j], u) for j in range(1, k + 1)] for u in range(m)])
    case.memo[key] = (want, curve)
    return want, curve


def _list_aggregates_expected(
    case: Case, lists: list[list[int]], defined: np.ndarray
) -> dict[str, float]:
    """The oracle's aggregates of the lists of the defined users, memoised as
    :func:`_list_expected`."""
    key = (tuple(map(tuple, lists)), defined.tobytes())
    if key not in case.memo:
        m, n = case.shape
        test_rows = orc.rows_of(case.test, m)
        train_rows = orc.rows_of(case.train, m)
        agg = orc.aggregates([lists[u] for u in range(m) if defined[u]], n, case.k)
        agg.update(_recbole_elliot_aggregates(lists, defined, train_rows, test_rows, n))
        case.memo[key] = agg
    return case.memo[key]


def _check_list_metrics(res: rt.Results, case: Case, lists: list[list[int]], what: str) -> None:
    """novelty, ils, diversity, serendipity (and their curves) from the given lists; the
    aggregates from the lists of the defined users."""
    for name in _oracles_of(case):
        got = _column(res, name)
        if got is None:
            continue
        want, curve = _list_expected(case, lists, name)
        _close(got, want, f"{name} ({what}; {case.describe()})")
        if case.cumulative:
            got_curve = res.curves_per_user[f"{name}_at_k"]
            _close(got_curve, curve, f"{name} curve ({what}; {case.describe()})")
    defined = res.per_user["nan_reason"].to_numpy() == ""
    for name, value in _list_aggregates_expected(case, lists, defined).items():
        key = f"{name}_at_{case.k}"
        if key in res.aggregates:
            _close(res.aggregates[key], value, f"{name} ({what})")


def _spark_graded_ndcg(listed: list[int], labels: dict[int, float], k: int) -> float:
    """Spark's ``RankingMetrics.ndcgAt`` on (prediction, label, relevance) triples, as its Scala
    loop reads: position i < min(max(|pred|, |labels|), k) adds (2^rel - 1) / ln(i + 2) to the DCG
    when the i-th prediction is a label, and the i-th label's (in the order given: item index
    here) to the ideal DCG; 0 when the ideal DCG is 0."""
    order = sorted(labels)
    dcg = ideal = 0.0
    for i in range(min(max(len(listed), len(order)), k)):
        gain = 1.0 / math.log(i + 2)
        if i < len(listed) and listed[i] in labels:
            dcg += (2.0 ** labels[listed[i]] - 1.0) * gain
        if i < len(order):
            ideal += (2.0 ** labels[order[i]] - 1.0) * gain
    return 0.0 if ideal == 0.0 else dcg / ideal


def _elliot_ndcg(listed: list[int], test: dict[int, float], k: int) -> float:
    """Elliot's ``nDCG`` as its code reads (relevance_threshold 0): the gain of a listed test
    item is ``2^(v + 1) - 1``, the ideal sums the ``min(|gains|, k)`` largest gains with the
    discount ``1 / log2(r + 2)`` at 0-based rank r; 0 when the DCG is 0."""
    gains = {i: 2.0 ** (v + 1.0) - 1.0 for i, v in test.items()}
    ideal_gains = sorted(gains.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal_gains))
    dcg = sum(gains.get(i, 0.0) / math.log2(r + 2) for r, i in enumerate(listed[:k]))
    return dcg / idcg if dcg > 0 else 0.0


def _elliot_map(listed: list[int], test: dict[int, float], k: int) -> float:
    """Elliot's ``MAP``: the average over n = 1..k of the precision of the first n items."""
    return sum(sum(1 for i in listed[:n] if i in test) / n for n in range(1, k + 1)) / k


def _popularity_and_list_ranks(train_rows, test_rows, n: int, k: int) -> dict[str, Any]:
    """Oracles of the list metrics of reference.py (default parameters: rbp persistence 0.8,
    RecBole tail_ratio 0.1, Elliot short head 0.8; no judged non-relevant item)."""
    counts = ref.train_counts(train_rows, n)
    tail = ref.recbole_tail(counts, 0.1)
    long_tail = ref.elliot_long_tail(counts, 0.8)

    def listed(L):
        return [i for i in L if i >= 0]

    return {
        "rbp": lambda L, u: (
            ref.rbp_at_k(listed(L), test_rows[u], k, 0.8) if listed(L) else math.nan
        ),
        "bpref": lambda L, u: (
            ref.bpref_at_k(listed(L), test_rows[u], [], k) if listed(L) else math.nan
        ),
        "ndcg_spark": lambda L, u: (
            # the list's width is the cutoff (a curve's prefix is ndcgAt(j))
            _spark_graded_ndcg(listed(L), test_rows[u], len(L)) if listed(L) else math.nan
        ),
        "ndcg_exp1": lambda L, u: (
            _elliot_ndcg(listed(L), test_rows[u], len(L)) if listed(L) else math.nan
        ),
        "ap_elliot": lambda L, u: (
            _elliot_map(listed(L), test_rows[u], len(L)) if listed(L) else math.nan
        ),
        "arp": lambda L, u: (
            sum(counts[i] for i in listed(L)) / len(listed(L)) if listed(L) else math.nan
        ),
        "tailpercentage": lambda L, u: ref.list_share(L, tail),
        "aplt": lambda L, u: ref.list_share(L, long_tail),
        "aclt": lambda L, u: (
            float(sum(1 for i in listed(L) if i in long_tail)) if listed(L) else math.nan
        ),
        **{
            name: (
                lambda L, u, name=name: (
                    orc.peer_list_metrics(listed(L), test_rows[u], len(L))[name]
                    if listed(L)
                    else math.nan
                )
            )
            for name in ("p_list", "tap_list", "ndcg_bin_jk", "ndcg_jk", "ndcg_bin_idealk")
            + ("ncrr", "unj")
        },
    }


def _recbole_elliot_aggregates(lists, defined, train_rows, test_rows, n: int) -> dict:
    users = [u for u in range(len(lists)) if defined[u]]
    dl = [[i for i in lists[u] if i >= 0] for u in users]
    if not any(dl):
        return {}
    long_tail = ref.elliot_long_tail(ref.train_counts(train_rows, n), 0.8)
    trains = [train_rows[u] for u in users]
    return {
        "gini_items": ref.recbole_gini(dl, n),
        "entropy_mean": ref.recbole_entropy(dl),
        "gini_complement": _elliot_gini(dl, n),
        "pop_rsp": ref.pop_parity(dl, trains, None, long_tail, n),
        "pop_reo": ref.pop_parity(dl, trains, [test_rows[u] for u in users], long_tail, n),
    }


def _elliot_gini(lists: list[list[int]], n: int) -> float:
    """Elliot's ``Gini`` as its code reads: over the recommended items' counts sorted
    ascending, each at its place j past the n - #recommended items never listed,
    ``1 - sum (2 (j + offset + 1) - n - 1) count / total / (n - 1)``."""
    counts: dict[int, int] = {}
    for L in lists:
        for i in L:
            counts[i] = counts.get(i, 0) + 1
    total = sum(counts.values())
    offset = n - len(counts)
    gini = sum(
        (2 * (j + offset + 1) - n - 1) * c / total for j, c in enumerate(sorted(counts.values()))
    )
    return 1.0 - gini / (n - 1)


def _check_aggregates_of_metrics(res: rt.Results, case: Case) -> None:
    k = case.k
    n_test = np.diff(case.test.indptr)
    roc = _column(res, "roc_auc")
    if roc is not None and "gauc" in res.aggregates:
        # RecBole's per-user AUC gives tied items their average rank, whatever the tie policy
        m, n = case.shape
        test_rows = orc.rows_of(case.test, m)
        train_rows = orc.rows_of(case.train, m)
        avg = [
            ref.auc_average_ranks(
                case.S[u], [i for i in range(n) if i not in train_rows[u]], test_rows[u]
            )
            if not np.isnan(roc[u])
            else math.nan
            for u in range(m)
        ]
        _close(res.aggregates["gauc"], orc.gauc(avg, n_test))
    pr = _column(res, "pr_auc")
    if pr is not None and "gm_map" in res.aggregates:
        _close(res.aggregates["gm_map"], ref.geometric_mean_ap(pr))
    p = _column(res, "p")
    tp = _column(res, "tp")
    if f"p_pooled_at_{k}" in res.aggregates and p is not None and tp is not None:
        want = orc.p_pooled(np.nan_to_num(p) * k, n_test, k, ~np.isnan(tp))
        _close(res.aggregates[f"p_pooled_at_{k}"], want)


def _compare_kernel(
    res: rt.Results, expected: dict[str, np.ndarray], case: Case, what: str
) -> None:
    for name in orc.KERNEL_METRICS:
        got = _column(res, name)
        if got is None:
            continue
        want = expected[name]
        if case.cumulative and name in TOPK_METRICS:
            curve = res.curves_per_user[f"{name}_at_k"]
            _close(curve, want, f"{name} curve ({what}; {case.describe()})")
            want = want[:, -1]
        _close(got, want, f"{name} ({what}; {case.describe()})")


def _expected(case: Case) -> tuple[list[str], dict[str, np.ndarray]]:
    m, _ = case.shape
    reasons = []
    rows = []
    for u, train_items, _pool, test, _ in _users(case):
        reason, values = orc.user_expected(
            case.S[u].tolist(),
            train_items,
            test,
            case.k,
            ties=case.ties,
            cumulative=case.cumulative,
            **case.kw,
        )
        reasons.append(reason)
        rows.append(values)
    expected = {
        name: np.array([r[name] for r in rows], dtype=np.float64) for name in orc.KERNEL_METRICS
    }
    return reasons, expected


# --------------------------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------------------------

DETERMINISTIC_TIES = ["index", "index_desc", "optimistic", "pessimistic", "average"]

SETTINGS = _derandomized(120, HealthCheck.data_too_large)


@SETTINGS
@given(case=cases(DETERMINISTIC_TIES))
def test_engine_matches_reference_on_every_path(case: Case) -> None:
    m, n = case.shape
    reasons, expected = _expected(case)
    runs = [("all metrics", "all"), ("@k metrics only", _topk_only_metrics(case.ties))]
    for what, metrics in runs:
        res = _run(case, metrics)
        assert res.per_user["nan_reason"].tolist() == reasons, f"{what}; {case.describe()}"
        _compare_kernel(res, expected, case, what)
        # the top-K list follows the ranking of the pool (ties by index, or by decreasing
        # index under index_desc), -1 padded; undefined users have no list
        lists = []
        n_tied = res.per_user["n_tied_topk"].to_numpy()
        for u, _, pool, _, _ in _users(case):
            if reasons[u]:
                want = [-1] * case.k
                assert n_tied[u] == -1
            else:
                want = orc.topk_list(pool, case.S[u], case.k, case.ties)
                assert n_tied[u] == orc.n_tied_with_list(pool, case.S[u], want), (
                    f"n_tied_topk of user {u} ({what}; {case.describe()})"
                )
            assert res.topk[u].tolist() == want, (
                f"top-K list of user {u} ({what}; {case.describe()})"
            )
            lists.append(want)
        _check_list_metrics(res, case, lists, what)
        _check_aggregates_of_metrics(res, case)


def _noise_order(L: list[int], pool: list[int], scores: np.ndarray) -> list[int]:
    listed = [i for i in L if i >= 0]
    rest = sorted(set(pool) - set(listed), key=lambda i: (-scores[i], i))
    return listed + rest


def _check_is_ranking_prefix(
    L: list[int], pool: list[int], scores: np.ndarray, k: int, msg: str
) -> None:
    listed = [i for i in L if i >= 0]
    assert L[len(listed) :] == [-1] * (k - len(listed)), msg  # padding only at the end
    assert len(listed) == min(k, len(pool)), msg
    assert len(set(listed)) == len(listed) and set(listed) <= set(pool), msg
    s = [scores[i] for i in listed]
    assert all(a >= b for a, b in zip(s, s[1:])), msg
    rest = set(pool) - set(listed)
    assert all(scores[i] <= s[-1] for i in rest), msg


@_derandomized(80, HealthCheck.data_too_large)
@given(case=cases(["noise"]), seed=st.integers(0, 2**31 - 1))
def test_noise_ties_agree_with_the_top_k_list(case: Case, seed: int) -> None:
    """Under noise, the list is a ranking of the pool by score, and every @k metric is the
    reference's value on that list: the accuracy metrics and the list are ranked by one key."""
    m, n = case.shape
    k = case.k
    cutoffs = list(range(1, k + 1)) if case.cumulative else [k]
    runs = [("all metrics", "all"), ("@k metrics only", _topk_only_metrics("noise"))]
    for what, metrics in runs:
        res = _run(case, metrics, seed=seed)
        lists = []
        n_tied = res.per_user["n_tied_topk"].to_numpy()
        for u, train_items, pool, test, _ in _users(case):
            msg = f"user {u} ({what}; {case.describe()})"
            reason = orc.reason_of(case.S[u].tolist(), train_items, test, **case.kw)
            assert res.per_user["nan_reason"][u] == reason, msg
            L = res.topk[u].tolist()
            lists.append(L)
            if reason:
                assert L == [-1] * k and n_tied[u] == -1, msg
                continue
            _check_is_ranking_prefix(L, pool, case.S[u], k, msg)
            assert n_tied[u] == orc.n_tied_with_list(pool, case.S[u], L), msg
            order = _noise_order(L, pool, case.S[u])
            rows = orc.at_cutoffs(order, test, cutoffs)
            for name in TOPK_METRICS:
                got = _column(res, name)
                if got is None:
                    continue
                if case.cumulative:
                    got_row = res.curves_per_user[f"{name}_at_k"][u]
                    _close(got_row, [r[name] for r in rows], f"{name} {msg}")
                _close(got[u], rows[-1][name], f"{name} {msg}")
            roc, pr = _column(res, "roc_auc"), _column(res, "pr_auc")
            if roc is None:
                continue
            if len(pool) <= k:  # the list is the whole ranking: every metric follows from it
                full = metrics_at_k(order, test, k)
                for name in orc.WHOLE_RANKING_METRICS:
                    _close(_column(res, name)[u], full[name], f"{name} {msg}")
            else:  # any ordering of the ties lies between the pessimistic and optimistic ones
                lo = metrics_at_k(orc.ranking(pool, case.S[u], test, "pessimistic"), test, k)
                hi = metrics_at_k(orc.ranking(pool, case.S[u], test, "optimistic"), test, k)
                for name, got in (("roc_auc", roc[u]), ("pr_auc", pr[u])):
                    if math.isnan(lo[name]):
                        assert math.isnan(got), f"{name} {msg}"
                    else:
                        assert lo[name] - ATOL <= got <= hi[name] + ATOL, f"{name} {msg}"
        _check_list_metrics(res, case, lists, what)
        _check_aggregates_of_metrics(res, case)


@_derandomized(40)
@given(
    n=st.integers(1, 40),
    m=st.integers(1, 4),
    seed=st.integers(0, 2**32 - 1),
    k=st.integers(1, 40),
    cumulative=st.booleans(),
    pad=st.integers(0, 3),
)
def test_ranked_lists_match_reference(n, m, seed, k, cumulative, pad):
    """Top-K lists as input (``ranked=``): train items are dropped from a list, the rest keep
    their order, and the @k metrics are the reference's on that order."""
    k = min(k, n)
    rng = np.random.default_rng(seed)
    train_cells = rng.random((m, n)) < 0.3
    test_cells = ~train_cells & (rng.random((m, n)) < 0.35)
    r, c = np.nonzero(train_cells)
    train = sp.csr_array((np.ones(r.size), (r, c)), shape=(m, n))
    r, c = np.nonzero(test_cells)
    test = sp.csr_array((rng.choice(TEST_VALUES, r.size), (r, c)), shape=(m, n))
    lists = np.full((m, n + pad), -1, dtype=np.int64)
    for u in range(m):
        order = rng.permutation(n)  # train items stay in the list: the engine drops them
        lists[u, :n] = order
    res = rt.evaluate(
        train,
        test,
        ranked=lists,
        metrics=_topk_only_metrics("index"),
        k=k,
        cumulative=cumulative,
        nthreads=1,
        return_topk=True,
    )
    cutoffs = list(range(1, k + 1)) if cumulative else [k]
    train_rows, test_rows = orc.rows_of(train, m), orc.rows_of(test, m)
    for u in range(m):
        reason = orc.reason_of([0.0] * n, sorted(train_rows[u]), test_rows[u])
        if reason in ("", "all_equal"):  # ranked lists have no scores: no score rule applies
            reason = ""
        assert res.per_user["nan_reason"][u] == reason
        order = [int(i) for i in lists[u] if i >= 0 and int(i) not in train_rows[u]]
        if reason:
            assert res.topk[u].tolist() == [-1] * k
            continue
        assert res.topk[u].tolist() == (order[:k] + [-1] * k)[:k]
        rows = orc.at_cutoffs(order, test_rows[u], cutoffs)
        for name in TOPK_METRICS:
            got = _column(res, name)
            if got is None:
                continue
            if cumulative:
                _close(res.curves_per_user[f"{name}_at_k"][u], [x[name] for x in rows], name)
            _close(got[u], rows[-1][name], name)


def test_strategy_reaches_every_path():
    """The generated cases reach the paths the properties are meant to cover."""
    seen: set[str] = set()

    @_derandomized(100, HealthCheck.data_too_large)
    @given(case=cases(DETERMINISTIC_TIES + ["noise"]))
    def collect(case: Case) -> None:
        m, n = case.shape
        seen.add(f"ties={case.ties}")
        seen.add(f"dtype={case.dtype.__name__}")
        if case.cumulative:
            seen.add("cumulative")
        for u, train_items, pool, test, _ in _users(case):
            reason = orc.reason_of(case.S[u].tolist(), train_items, test, **case.kw)
            seen.add(f"reason={reason}")
            if reason:
                continue
            npos = len(test)
            s = case.S[u]
            if n > 2 * CHUNK:
                seen.add("more than two chunks")
            elif n > CHUNK:
                seen.add("two chunks")
            if npos >= SEARCH_MIN_POS:
                seen.add("search (all metrics)")
                if npos * CHUNK > 4 * n:
                    seen.add("search (@k only)")
            if npos > 32:
                seen.add("over 32 positives")
            if len(pool) <= case.k:
                seen.add("pool <= k")
            if len(pool) == npos:
                seen.add("only positives")
            if train_items and any(s[i] == -np.inf for i in test):
                seen.add("-inf positive beside train")
            if any(s[i] == -np.inf for i in pool) and len(pool) <= case.k and train_items:
                seen.add("-inf listed beside train")
            if len(set(s[i] for i in pool)) < len(pool):
                seen.add("ties")
                if n > CHUNK:
                    gt = (s[pool][None, :] > s[list(test)][:, None]).sum(axis=1)
                    if (gt >= case.k).any():
                        seen.add("early stop")

    collect()
    expected = {f"ties={t}" for t in DETERMINISTIC_TIES + ["noise"]} | {
        "dtype=float32",
        "dtype=float64",
        "cumulative",
        "reason=",
        "reason=no_test",
        "reason=min_pos_test",
        "reason=cold_start",
        "reason=min_items_pool",
        "reason=nan_score",
        "reason=all_equal",
        "two chunks",
        "more than two chunks",
        "search (all metrics)",
        "search (@k only)",
        "over 32 positives",
        "pool <= k",
        "only positives",
        "-inf positive beside train",
        "-inf listed beside train",
        "ties",
        "early stop",
    }
    assert expected <= seen, f"never generated: {sorted(expected - seen)}"


# --------------------------------------------------------------------------------------------
# One deterministic test per path
# --------------------------------------------------------------------------------------------


def _one_user(scores, test: dict[int, float], train: list[int] | None = None):
    n = len(scores)
    S = np.asarray(scores, dtype=np.float64)[None, :]
    te = sp.csr_array(
        (np.array(list(test.values()), dtype=np.float64), ([0] * len(test), list(test))),
        shape=(1, n),
    )
    tr = (
        None
        if train is None
        else sp.csr_array((np.ones(len(train)), ([0] * len(train), train)), shape=(1, n))
    )
    return tr, te, S


def _assert_matches(tr, te, S, k, ties, metrics, cumulative=False, **kw):
    case = Case(tr, te, S, np.float64, k, cumulative, ties, {}, np.ones((S.shape[1], 2)), 1)
    _, expected = _expected(case)
    res = rt.evaluate(
        tr, te, scores=S, metrics=metrics, k=k, ties=ties, cumulative=cumulative, nthreads=1, **kw
    )
    _compare_kernel(res, expected, case, f"metrics={metrics}")
    return res


AT_K = ["p", "tp", "r", "ap", "tap", "ndcg", "ndcg_exp", "ndcg_bin", "hit", "rr", "auc_topk"]


@pytest.mark.parametrize("ties", ["index", "index_desc", "noise"])
@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_topk_only_rank_of_a_tied_positive_near_k(ties, k):
    """@k metrics alone skip resolving a tie whose positive is already known to be beyond K; a
    positive with exactly K-1 or K items above and tied items around it is at the boundary."""
    n = 12
    # items 0..2 score 9 (above); items 3..8 tie at 5 with the positives 4 and 7; the rest below
    scores = [9, 9, 9, 5, 5, 5, 5, 5, 5, 1, 1, 1]
    tr, te, S = _one_user(scores, {4: 1.0, 7: 2.0, 10: 1.0})
    for metrics in (AT_K, ["p"], ["rr"], ["ndcg"], "all"):
        if ties == "noise":
            res = rt.evaluate(
                tr, te, scores=S, metrics=metrics, k=k, ties="noise", nthreads=1, return_topk=True
            )
            listed = res.topk[0].tolist()
            rows = orc.at_cutoffs(
                _noise_order(listed, list(range(n)), S[0]), {4: 1.0, 7: 2.0, 10: 1.0}, [k]
            )
            for name in metrics if isinstance(metrics, list) else AT_K:
                assert _column(res, name)[0] == pytest.approx(rows[0][name], abs=ATOL), name
        else:
            _assert_matches(tr, te, S, k, ties, metrics)


@pytest.mark.parametrize("ties", ["index", "index_desc", "optimistic", "average"])
@pytest.mark.parametrize("layout", ["first_chunk", "across_boundary", "later_chunks"])
@pytest.mark.parametrize("k", [1, 5, 40])
def test_chunked_scan_early_stop(ties, layout, k):
    """Catalogues over one chunk with @k metrics only: counting stops after the chunk in which a
    positive's count of better items reaches K. Place those better items in the first chunk,
    across the chunk boundary or only in later chunks, with ties around the positives."""
    n = 2 * CHUNK + 700
    rng = np.random.default_rng(k)
    scores = rng.integers(0, 4, n).astype(np.float64)  # many ties among the low scores
    positives = {5: 1.0, CHUNK - 1: 2.0, CHUNK: 1.0, CHUNK + 3: 3.0, 2 * CHUNK + 10: 1.0}
    for i in positives:
        scores[i] = 10.0
    better = {
        "first_chunk": np.arange(100, 100 + k + 2),
        "across_boundary": np.arange(CHUNK - k // 2 - 2, CHUNK + k // 2 + 8),
        "later_chunks": np.arange(2 * CHUNK + 20, 2 * CHUNK + 20 + k + 3),
    }[layout]
    better = [i for i in better if i not in positives]
    scores[better] = 20.0
    scores[rng.choice(n, 30, replace=False)] = 10.0  # ties with the positives, everywhere
    for i in positives:
        scores[i] = 10.0
    scores[2 * CHUNK + 10] = 20.0  # one positive among the better items
    train = [i for i in rng.choice(n, 200, replace=False).tolist() if i not in positives]
    tr, te, S = _one_user(scores, positives, train)
    if ties == "average":  # too many ties for the brute-force reference: hit/rr by hand below
        res = rt.evaluate(
            tr, te, scores=S, metrics=["hit", "rr", "p"], k=k, ties="average", nthreads=1
        )
        full = rt.evaluate(tr, te, scores=S, metrics="all", k=k, ties="average", nthreads=1)
        for name in ("hit", "rr", "p"):
            assert _column(res, name)[0] == pytest.approx(_column(full, name)[0], abs=ATOL)
        return
    for metrics in (AT_K, ["p", "r"], "all"):
        _assert_matches(tr, te, S, k, ties, metrics, cumulative=k <= 5)


@pytest.mark.parametrize("k", [2, 3, 5, 8])
def test_early_stop_bound_at_every_count_of_the_first_chunk(k):
    """j items outscore the positive in the first chunk (j from 0 to K + 1) and more in later
    chunks: the scan may stop only once the count has reached K, whatever j is (a bound one
    short stops at K - 1 and ranks the positive at K)."""
    n = 2 * CHUNK + 300
    for j in range(0, k + 2):
        scores = np.linspace(0.0, 1.0, n)[::-1].copy() * 0.5  # distinct, all below 1
        scores[1 : 1 + j] = 3.0  # j better items in the first chunk
        scores[CHUNK + 5 : CHUNK + 7] = 3.0  # two more in the second chunk
        scores[2 * CHUNK + 50] = 3.0  # and one in the third
        scores[0] = 2.0  # the positive, then ties with it
        scores[[CHUNK + 100, 2 * CHUNK + 100]] = 2.0
        positives = {0: 1.0, 2 * CHUNK + 200: 2.0}
        tr, te, S = _one_user(scores, positives)
        for ties in ("index", "index_desc", "optimistic"):
            _assert_matches(tr, te, S, k, ties, AT_K, cumulative=True)


@pytest.mark.parametrize("n_pos", [SEARCH_MIN_POS - 1, SEARCH_MIN_POS, 120, 300])
@pytest.mark.parametrize("ties", ["index", "optimistic", "pessimistic"])
def test_counting_paths_with_many_positives(n_pos, ties):
    """Users with 47, 48 and hundreds of positives: the binary search (whole-ranking metrics, or
    @k metrics on a catalogue below 256 items per positive) and the scan must agree with the
    reference, tied positives, tied negatives and -inf scores included."""
    n = 900
    rng = np.random.default_rng(n_pos)
    scores = rng.integers(0, 40, n) * 0.5
    scores[rng.choice(n, 25, replace=False)] = -np.inf
    pool = rng.permutation(n)
    train = pool[:100].tolist()
    positives = {
        int(i): float(v) for i, v in zip(pool[100 : 100 + n_pos], rng.choice(TEST_VALUES, n_pos))
    }
    tr, te, S = _one_user(scores, positives, train)
    for metrics in (AT_K, "all", ["p", "ap"]):
        _assert_matches(tr, te, S, 7, ties, metrics, cumulative=True)


def test_scan_with_many_positives_on_a_large_catalogue():
    """48 positives with @k metrics only on a catalogue of over 256 items per positive: the scan
    (with early stops) runs, not the search; both must give the reference's values."""
    n = SEARCH_MIN_POS * CHUNK // 4 + 500  # n_pos * 1024 <= 4 n
    rng = np.random.default_rng(5)
    scores = rng.integers(0, 200, n) * 0.25
    positives = {int(i): 1.0 + (i % 3) for i in rng.choice(n, SEARCH_MIN_POS, replace=False)}
    tr, te, S = _one_user(scores, positives)
    _assert_matches(tr, te, S, 10, "index", AT_K)
    _assert_matches(tr, te, S, 10, "index", "all")


def _expected_by_positions(a: int, t: int, c: int, k: int) -> dict[str, float]:
    """Expected Hit@k and RR@k when the first c positives lie in one tie of t items with a items
    above it (none of them positive), every placement of the c positives in the tie equally
    likely: enumerated over the C(t, c) placements."""
    hit = rr = 0.0
    combos = list(itertools.combinations(range(1, t + 1), c))
    for pos in combos:
        first = a + min(pos)
        hit += first <= k
        rr += 1.0 / first if first <= k else 0.0
    return {"hit": hit / len(combos), "rr": rr / len(combos)}


@pytest.mark.parametrize(
    "a, t, c", [(0, 6, 2), (2, 9, 3), (0, 12, 5), (3, 10, 1), (1, 14, 9), (0, 7, 7)]
)
@pytest.mark.parametrize("k", [1, 2, 4, 7, 12])
def test_average_ties_rr_and_hit_follow_the_law_of_the_first_positive(a, t, c, k):
    """ties='average' takes RR and Hit from the distribution of the first positive's position
    in a tie (hypergeometric); check them against an enumeration of the placements."""
    n = a + t + 6
    scores = [10.0] * a + [5.0] * t + [1.0, 0.5, 0.0, -0.5, -1.0, -1.5]
    test = {a + j: 1.0 for j in range(c)}  # positives inside the tie (their indices are irrelevant)
    tr, te, S = _one_user(scores, test)
    k = min(k, n - 1)  # Hit is NaN once the list holds the whole pool
    res = rt.evaluate(
        tr, te, scores=S, metrics=["hit", "rr"], k=k, ties="average", nthreads=1, cumulative=True
    )
    for kc in range(1, k + 1):
        want = _expected_by_positions(a, t, c, kc)
        assert res.curves_per_user["rr_at_k"][0, kc - 1] == pytest.approx(want["rr"], abs=1e-12)
        assert res.curves_per_user["hit_at_k"][0, kc - 1] == pytest.approx(want["hit"], abs=1e-12)
    # and the other metrics against the brute-force reference where it is affordable
    if _n_orderings(np.array(scores)) <= 720:
        _assert_matches(tr, te, S, k, "average", "all", cumulative=True)


def test_average_rr_when_a_positive_group_follows_a_tie_without_positives():
    """The first positive is in the second tie: RR comes from that group, above it lie the whole
    first tie and the items between."""
    scores = [7.0, 7.0, 7.0, 6.0, 4.0, 4.0, 4.0, 4.0, 1.0, 1.0]
    test = {5: 1.0, 7: 1.0, 9: 2.0}
    tr, te, S = _one_user(scores, test)
    _assert_matches(tr, te, S, 8, "average", "all", cumulative=True)
    res = rt.evaluate(tr, te, scores=S, metrics=["rr"], k=8, ties="average", nthreads=1)
    # a = 4 items above, tie of 4 with 2 positives: P(first at 1) = 1/2, at 2: 1/3, at 3: 1/6
    assert _column(res, "rr")[0] == pytest.approx(1 / 2 / 5 + 1 / 3 / 6 + 1 / 6 / 7, abs=1e-12)


def test_top_k_list_and_novelty_follow_the_noise_ties():
    """With heavy ties, the beyond-accuracy metrics' list must be the noise ranking the accuracy
    metrics use: the same seed gives the same list, another seed another list, the list is not
    the index order, and P@K, novelty and the list agree."""
    m, n, k = 40, 30, 5
    rng = np.random.default_rng(3)
    S = rng.integers(0, 2, (m, n)).astype(np.float64)  # two score levels: ties everywhere
    cells = rng.random((m, n))
    tr_r, tr_c = np.nonzero(cells < 0.2)
    te_r, te_c = np.nonzero(cells > 0.75)
    train = sp.csr_array((np.ones(tr_r.size), (tr_r, tr_c)), shape=(m, n))
    test = sp.csr_array((np.ones(te_r.size), (te_r, te_c)), shape=(m, n))
    kw = dict(
        scores=S,
        k=k,
        ties="noise",
        nthreads=1,
        metrics=["p", "ap", "ndcg", "rr", "novelty", "serendipity", "coverage"],
        serendipity_top_n=2,
    )
    one = rt.evaluate(train, test, seed=1, **kw)
    again = rt.evaluate(train, test, seed=1, **kw)
    other = rt.evaluate(train, test, seed=2, **kw)
    np.testing.assert_array_equal(one.topk, again.topk)
    assert not np.array_equal(one.topk, other.topk)
    train_rows, test_rows = orc.rows_of(train, m), orc.rows_of(test, m)
    not_index = 0
    for res in (one, other):
        for u in range(m):
            if res.per_user["nan_reason"][u]:
                continue
            pool = [i for i in range(n) if i not in train_rows[u]]
            L = res.topk[u].tolist()
            _check_is_ranking_prefix(L, pool, S[u], k, f"user {u}")
            not_index += L != orc.topk_list(pool, S[u], k, "index")
            row = orc.at_cutoffs(_noise_order(L, pool, S[u]), test_rows[u], [k])[0]
            for name in ("p", "ap", "ndcg", "rr"):
                assert _column(res, name)[u] == pytest.approx(row[name], abs=ATOL), (u, name)
            assert _column(res, "novelty")[u] == pytest.approx(
                orc.novelty(L, train_rows, n), abs=ATOL
            )
            assert _column(res, "serendipity")[u] == pytest.approx(
                orc.serendipity(L, test_rows[u], train_rows, n, 2), abs=ATOL
            )
    assert not_index > m  # most lists break their ties otherwise than by index


def test_neg_inf_positive_beside_train_items():
    """A -inf positive with train items (masked to -inf by the kernel) counts only the pool's
    -inf items as tied; the top-K list reaching -inf items skips the train items."""
    scores = [3.0, -np.inf, 2.0, -np.inf, -np.inf, 1.0, -np.inf, -np.inf]
    test = {1: 1.0, 6: 2.0, 5: 1.0}
    train = [3, 7]
    tr, te, S = _one_user(scores, test, train)
    for ties in ("index", "index_desc", "optimistic", "pessimistic", "average"):
        for k in (1, 3, 6):
            res = _assert_matches(
                tr,
                te,
                S,
                k,
                ties,
                "all" if ties == "average" else AT_K + ["roc_auc", "pr_auc", "mpr"],
                return_topk=True,
            )
            pool = [i for i in range(8) if i not in train]
            want = orc.topk_list(pool, S[0], k, ties)
            assert res.topk[0].tolist() == want, (ties, k)
            assert res.per_user["n_tied_topk"][0] == orc.n_tied_with_list(pool, S[0], want)


def test_nan_rules_in_the_readme_order():
    """Each pair of rules that can apply together: the earlier one in the README wins (no_test,
    min_pos_test, cold_start, min_items_pool, nan_score, all_equal)."""
    n = 3
    # (train items, test items, scores), with min_pos_test=2, min_items_pool=4 (> n: every user
    # is short of pool items) and consider_cold_start=False
    users = {
        "no_test": ([], [], [1.0, np.nan, 1.0]),
        "min_pos_test": ([], [0], [np.nan, 1.0, 1.0]),
        "cold_start": ([], [0, 1], [np.nan, 1.0, 1.0]),
        "min_items_pool": ([2], [0, 1], [np.nan, 2.0, 1.0]),
    }
    tr_r, tr_c, te_r, te_c, S = [], [], [], [], []
    for u, (train, test, scores) in enumerate(users.values()):
        tr_r += [u] * len(train)
        tr_c += train
        te_r += [u] * len(test)
        te_c += test
        S.append(scores)
    m = len(users)
    tr = sp.csr_array((np.ones(len(tr_r)), (tr_r, tr_c)), shape=(m, n))
    te = sp.csr_array((np.ones(len(te_r)), (te_r, te_c)), shape=(m, n))
    res = rt.evaluate(
        tr,
        te,
        scores=np.array(S),
        metrics="all",
        k=1,
        nthreads=1,
        min_pos_test=2,
        min_items_pool=4,
        consider_cold_start=False,
    )
    assert res.per_user["nan_reason"].tolist() == list(users)
    # nan_score before all_equal: a NaN among equal pool scores
    tr2, te2, S2 = _one_user([1.0, 1.0, np.nan, 1.0], {0: 1.0})
    res = rt.evaluate(tr2, te2, scores=S2, metrics="all", k=1, nthreads=1)
    assert res.per_user["nan_reason"].tolist() == ["nan_score"]


def test_pessimistic_ties_with_early_stopped_counts():
    # a tied positive whose count stopped early (gt >= K) has seen only part of the tie: its
    # rank must still exceed K
    n = 2 * CHUNK + 600
    k = 3
    scores = np.zeros(n)
    scores[10 : 10 + k] = 5.0  # k items above the tie, in the first chunk
    positives = {0: 1.0, CHUNK + 400: 1.0, 2 * CHUNK + 500: 1.0}  # tied, in three chunks
    for i in positives:
        scores[i] = 1.0
    scores[700] = 1.0  # a tied negative
    tr, te, S = _one_user(scores, positives)
    # every positive is ranked after the k better items: no hit at k
    _assert_matches(tr, te, S, k, "pessimistic", AT_K)


def test_serial_kernel_with_threads_and_blocks_matches_reference():
    """Several worker threads each scoring a block and running the serial kernel (factors are a
    thread-safe score source) give the reference's values."""
    rng = np.random.default_rng(2)
    m, n, p = 30, 50, 3
    A = rng.integers(-2, 3, (m, p)).astype(np.float64)
    B = rng.integers(-2, 3, (n, p)).astype(np.float64)  # integer scores: many ties
    tr, te = _cells(rng, m, n, train_below=0.2, test_above=0.8)
    S = A @ B.T
    case = Case(tr, te, S, np.float64, 4, True, "index", {}, B, 1)
    _, expected = _expected(case)
    for nthreads, block_rows in ((2, 4), (2, 1), (1, 7)):
        res = rt.evaluate(
            tr,
            te,
            A=A,
            B=B,
            metrics="all",
            k=4,
            ties="index",
            cumulative=True,
            nthreads=nthreads,
            block_rows=block_rows,
        )
        _compare_kernel(res, expected, case, f"nthreads={nthreads} block_rows={block_rows}")


def test_each_metric_alone_equals_its_value_among_all():
    """Asking one metric fills only its output row (and, for an @k metric alone, lets the kernel
    stop counting early): every registered per-user metric alone must equal its value when
    everything is asked, and the reference's."""
    rng = np.random.default_rng(8)
    m, n = 6, CHUNK + 300
    S = rng.integers(0, 30, (m, n)) * 0.5
    tr, te = _cells(rng, m, n, train_below=0.1, test_above=0.985)
    case = Case(tr, te, S, np.float64, 6, True, "index", {}, np.ones((n, 2)), 1)
    _, expected = _expected(case)
    everything = rt.evaluate(
        tr, te, scores=S, metrics="all", k=6, ties="index", cumulative=True, nthreads=1
    )
    _compare_kernel(everything, expected, case, "all")
    for name in orc.KERNEL_METRICS:
        alone = rt.evaluate(
            tr, te, scores=S, metrics=[name], k=6, ties="index", cumulative=True, nthreads=1
        )
        assert [c for c in alone.metric_columns] == [
            f"{name}_at_6" if rt.METRICS[name].at_k else name
        ]
        np.testing.assert_array_equal(_column(alone, name), _column(everything, name), name)
        if rt.METRICS[name].at_k:
            np.testing.assert_array_equal(
                alone.curves_per_user[f"{name}_at_k"],
                everything.curves_per_user[f"{name}_at_k"],
                name,
            )


def test_driver_copies_odd_score_blocks_and_reports_progress():
    """A score source may break its contract and return blocks of another dtype, in Fortran
    order or read-only: the driver copies them before the kernel masks train items in place.
    Progress counts every user the kernel sees once, whatever the block size; with no evaluable
    user nothing is scored."""
    rng = np.random.default_rng(4)
    m, n = 25, 40
    S = rng.integers(0, 6, (m, n)).astype(np.float64)
    tr, te = _cells(rng, m, n, train_below=0.2, test_above=0.8)
    case = Case(tr, te, S, np.float64, 5, False, "index", {}, np.ones((n, 2)), 1)
    reasons, expected = _expected(case)

    class OddBlocks(rt.ScoreSource):
        def __init__(self, kind: str):
            self.kind, self.n_items, self.n_users, self.dtype = kind, n, m, np.dtype(np.float64)

        def block(self, users, out=None):
            got = S[users]
            if self.kind == "float32":
                return got.astype(np.float32)
            if self.kind == "fortran":
                return np.asfortranarray(got)
            got = got.copy()
            got.flags.writeable = False
            return got

    def in_blocks(block_rows: int, **source: Any) -> tuple[rt.Results, list[int]]:
        seen: list[int] = []
        every = dict(metrics="all", k=5, ties="index", nthreads=1)
        res = rt.evaluate(tr, te, **source, **every, block_rows=block_rows, progress=seen.append)
        return res, seen

    for kind in ("float32", "fortran", "read-only"):
        res, seen = in_blocks(4, scores=OddBlocks(kind))
        _compare_kernel(res, expected, case, f"blocks {kind}")
        # the users the kernel sees: those no threshold rule excludes beforehand
        assert sum(seen) == sum(1 for r in reasons if r in ("", "nan_score", "all_equal")), kind
        assert max(seen) <= 4
    res, seen = in_blocks(3, scorer=lambda users: S[users])
    _compare_kernel(res, expected, case, "scorer")
    assert sum(seen) == sum(1 for r in reasons if r in ("", "nan_score", "all_equal"))
    # no user with a test entry: nothing to score
    calls = []
    empty = sp.csr_array((m, n))
    res = rt.evaluate(
        tr,
        empty,
        scorer=lambda users: calls.append(users) or S[users],
        metrics="all",
        k=5,
        nthreads=1,
    )
    assert calls == [] and set(res.per_user["nan_reason"]) == {"no_test"}
    # nthreads=-1 takes every thread numba may use, with the same results
    res = rt.evaluate(tr, te, scores=S, metrics="all", k=5, ties="index", nthreads=-1)
    _compare_kernel(res, expected, case, "nthreads=-1")
