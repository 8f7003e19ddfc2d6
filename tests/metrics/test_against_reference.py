"""Property tests: the engine equals the slow reference on random small problems.

Each example draws a small train/test pair (disjoint CSR matrices, with empty rows, cold-start
users, graded, zero and negative test values), scores with or without ties (ties drawn from a small
integer set; then ties are broken by item index, which the reference implements; tie-free scores
are also run with seeded noise, which cannot change a tie-free ranking), a cutoff, thresholds,
cumulative or not, and float32 or float64 inputs. The engine, through calc_reco_metrics and
through evaluate, must give the reference's values to 1e-9 (1e-6 for float32 inputs), the same NaN
pattern, and a NaN reason that is one of the rules that apply (the first one when only one does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import (
    METRICS,
    NAN_REASONS,
    applicable_reasons,
    reference_metrics,
    scores_from_factors,
)

from ._engine_adapter import calc, run_evaluate

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

TEST_VALUES = np.array([-1.0, 0.0, 0.5, 1.0, 1.0, 2.0, 3.0, 1.0])
TRAIN_VALUES = np.array([1.0, 2.0, 5.0])


@dataclass
class Case:
    X_train: Any
    X_test: sp.csr_array
    S: np.ndarray  # dense scores, float64 (exactly representable in float32)
    k: int
    cumulative: bool
    min_pos_test: int
    min_items_pool: int
    consider_cold_start: bool
    tied: bool
    dtype: type

    @property
    def kw(self) -> dict[str, Any]:
        return dict(
            min_pos_test=self.min_pos_test,
            min_items_pool=self.min_items_pool,
            consider_cold_start=self.consider_cold_start,
        )


@st.composite
def cases(draw, *, max_users: int = 6, max_items: int = 9, allow_ties: bool = True) -> Case:
    m = draw(st.integers(1, max_users))
    n = draw(st.integers(2, max_items))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    p_train = draw(st.sampled_from([0.0, 0.2, 0.4]))
    p_test = draw(st.sampled_from([0.25, 0.4, 0.6]))
    cell = rng.choice(3, size=(m, n), p=[1 - p_train - p_test, p_train, p_test])
    # Users with no test entries and users with no train entries (cold start).
    no_test = rng.random(m) < 0.1
    cell[no_test] = np.where(cell[no_test] == 2, 0, cell[no_test])
    cold = rng.random(m) < 0.15
    cell[cold] = np.where(cell[cold] == 1, 0, cell[cold])

    with_train = draw(st.booleans()) or draw(st.booleans())  # 3 in 4 with a train matrix
    if not with_train:
        cell = np.where(cell == 1, 0, cell)
    r_tr, c_tr = np.nonzero(cell == 1)
    r_te, c_te = np.nonzero(cell == 2)
    X_test = sp.csr_array((rng.choice(TEST_VALUES, r_te.size), (r_te, c_te)), shape=(m, n))
    X_train = (
        sp.csr_array((rng.choice(TRAIN_VALUES, r_tr.size), (r_tr, c_tr)), shape=(m, n))
        if with_train
        else None
    )

    tied = allow_ties and draw(st.booleans())
    if tied:
        S = rng.integers(0, draw(st.integers(2, 4)), size=(m, n)).astype(np.float64)
    else:
        # distinct scores on a grid of halves: exact in float32, gaps far above any tie noise
        S = np.stack([rng.permutation(n) for _ in range(m)]).astype(np.float64) * 0.5 - 1.0
    if draw(st.booleans()):
        S[rng.random(m) < 0.3] = 1.5  # some users with every score equal
    if draw(st.booleans()):
        rows = np.nonzero(rng.random(m) < 0.3)[0]
        S[rows, rng.integers(0, n, rows.size)] = np.nan
    return Case(
        X_train=X_train,
        X_test=X_test,
        S=S,
        k=draw(st.integers(1, n)),
        cumulative=draw(st.booleans()),
        min_pos_test=draw(st.sampled_from([1, 1, 1, 1, 2, 3])),
        min_items_pool=draw(st.sampled_from([1, 2, 2, 2, 2, 3, n, n + 1])),
        consider_cold_start=draw(st.booleans()),
        tied=tied,
        dtype=draw(st.sampled_from([np.float64, np.float32])),
    )


def _reference(case: Case, scores: np.ndarray, ties: str = "index"):
    return reference_metrics(
        case.X_train, case.X_test, scores, case.k, ties=ties, cumulative=case.cumulative, **case.kw
    )


def _calc(case: Case, A: np.ndarray, B: np.ndarray, **kw: Any) -> dict[str, np.ndarray]:
    return calc(
        case.X_train, case.X_test, A, B, case.k, cumulative=case.cumulative, **kw, **case.kw
    )


def _evaluate(case: Case, **kw: Any):
    return run_evaluate(
        case.X_train, case.X_test, case.k, cumulative=case.cumulative, **kw, **case.kw
    )


def _tol(case: Case) -> float:
    return 1e-9 if case.dtype is np.float64 else 1e-6


def _compare(got: dict[str, np.ndarray], ref, case: Case, what: str) -> None:
    assert set(METRICS) <= set(got), f"{what} lacks {set(METRICS) - set(got)}"
    for name in got:  # the core metrics and every further variant the engine offers
        np.testing.assert_allclose(
            got[name],
            ref[name],
            rtol=0,
            atol=_tol(case),
            equal_nan=True,
            err_msg=f"{name} via {what} (k={case.k}, cumulative={case.cumulative}, "
            f"{case.kw}, dtype={case.dtype.__name__})",
        )


def _check_reasons(reasons: np.ndarray, case: Case, scores: np.ndarray) -> None:
    Xte = case.X_test
    Xtr = case.X_train
    for u in range(case.S.shape[0]):
        test = {
            int(j): float(v)
            for j, v in zip(
                Xte.indices[Xte.indptr[u] : Xte.indptr[u + 1]],
                Xte.data[Xte.indptr[u] : Xte.indptr[u + 1]],
            )
        }
        train = None if Xtr is None else Xtr.indices[Xtr.indptr[u] : Xtr.indptr[u + 1]].tolist()
        rules = applicable_reasons(scores[u].tolist(), train, test, **case.kw)
        if not rules:
            assert reasons[u] == "", f"user {u}: engine says {reasons[u]!r}, no rule applies"
        elif len(rules) == 1:
            assert reasons[u] == rules[0], f"user {u}: engine says {reasons[u]!r}, rule {rules}"
        else:
            assert reasons[u] in rules, f"user {u}: engine says {reasons[u]!r}, rules {rules}"


@SETTINGS
@given(case=cases())
def test_calc_reco_metrics_matches_reference(case: Case) -> None:
    n = case.S.shape[1]
    A = case.S.astype(case.dtype)
    B = np.eye(n, dtype=case.dtype)  # A @ B.T == S exactly, NaN rows included
    scores = scores_from_factors(A, B)
    ref = _reference(case, scores)
    got = _calc(case, A, B, noise=False)
    _compare(got, ref, case, "calc_reco_metrics(noise=False)")
    if not case.tied:
        got = _calc(case, A, B, noise=True)
        _compare(got, ref, case, "calc_reco_metrics(noise=True)")


@SETTINGS
@given(case=cases(), bias_seed=st.integers(0, 2**32 - 1), bias_shift=st.integers(-2, 2))
def test_calc_reco_metrics_with_item_biases(case: Case, bias_seed: int, bias_shift: int) -> None:
    n = case.S.shape[1]
    rng = np.random.default_rng(bias_seed)
    bias = (rng.integers(0, 3, n) * 0.25 + bias_shift).astype(case.dtype)
    A = case.S.astype(case.dtype)
    B = np.eye(n, dtype=case.dtype)
    scores = scores_from_factors(A, B, bias)
    ref = _reference(case, scores)
    got = _calc(case, A, B, item_biases=bias)
    _compare(got, ref, case, "calc_reco_metrics(item_biases)")


@SETTINGS
@given(case=cases())
def test_evaluate_matches_reference(case: Case) -> None:
    # metrics="all": the linear, exponential and binary NDCG gains are compared as ndcg,
    # ndcg_exp and ndcg_bin, with auc_topk and mpr
    S = case.S.astype(case.dtype)
    ref = _reference(case, S)
    for ties in ("index",) if case.tied else ("index", "noise"):
        got, reasons, res = _evaluate(case, scores=S, ties=ties)
        assert {"ndcg_exp", "ndcg_bin", "auc_topk", "mpr"} <= set(got)
        _compare(got, ref, case, f"evaluate(ties={ties})")
        _check_reasons(reasons, case, S.astype(np.float64))
        np.testing.assert_array_equal(res.per_user["n_test"].to_numpy(), ref.n_test)
        np.testing.assert_array_equal(res.per_user["n_train"].to_numpy(), ref.n_train)
        # a user with a reason has every metric NaN; NDCG alone may be defined without one
        defined = reasons == ""
        for name in got:
            vals = got[name] if got[name].ndim == 1 else got[name][:, -1]
            assert np.all(np.isnan(vals[~defined])), name


@SETTINGS
@given(case=cases())
def test_evaluate_scorer_matches_reference(case: Case) -> None:
    S = case.S.astype(case.dtype)
    ref = _reference(case, S)
    got, _, _ = _evaluate(case, scorer=lambda users: S[users], ties="index")
    _compare(got, ref, case, "evaluate(scorer)")


@pytest.mark.parametrize("ties", ["optimistic", "pessimistic", "average"])
def test_evaluate_other_tie_policies(ties: str) -> None:
    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(case=cases(max_users=4, max_items=6))
    def run(case: Case) -> None:
        S = case.S
        ref = _reference(case, S, ties=ties)
        got, _, _ = _evaluate(case, scores=S, ties=ties)
        _compare(got, ref, case, f"evaluate(ties={ties})")

    run()


def test_reference_cases_cover_the_rules() -> None:
    """The strategy reaches every NaN rule, ties, cold start and pool <= k (so the properties bite)."""
    seen: set[str] = set()

    @settings(
        max_examples=150,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(case=cases())
    def collect(case: Case) -> None:
        ref = reference_metrics(case.X_train, case.X_test, case.S, case.k, ties="index", **case.kw)
        seen.update(str(r) for r in ref.nan_reason if r)
        p = ref["p"]
        if np.any(np.isnan(p) & ~np.isnan(ref["ap"])):
            seen.add("pool<=k")
        if np.any(np.isnan(ref["ap"]) & ~np.isnan(ref["ndcg"])):
            seen.add("only_positives")
        if case.tied:
            seen.add("tied")

    collect()
    expected = {*NAN_REASONS, "pool<=k", "only_positives", "tied"}
    assert expected <= seen, f"never generated: {expected - seen}"
