"""Practical equivalence: the Bayesian signed-rank test against baycomp and an exact double
sum, TOST against its definition and statsmodels, the one verdict rule of the three Bayesian
tests, and the rope's forms."""

from __future__ import annotations

import time

import numpy as np
import pytest

from recoeval_tracking import InputError
from recoeval_tracking.stats import (
    bayesian_paired_t,
    bayesian_signed_rank,
    correlated_t_verdict,
    decide,
    resolve_rope,
    tost_paired,
)
from recoeval_tracking.stats._equivalence import _signed_rank_samples


def _pairs(n, shift, seed):
    rng = np.random.default_rng(seed)
    b = rng.beta(2, 5, n)
    a = b + rng.normal(shift, 0.05, n)
    a[: n // 10] = b[: n // 10]  # ties at zero difference, as users with equal scores give
    return a, b


@pytest.mark.parametrize(
    "n, shift, rope",
    [(12, 0.01, 0.0), (12, 0.01, 0.02), (40, -0.02, 0.01), (40, 0.0, 0.05), (150, 0.004, 0.005)],
)
def test_signed_rank_matches_baycomp_draw_for_draw(n, shift, rope):
    baycomp = pytest.importorskip("baycomp")
    a, b = _pairs(n, shift, n)
    mine = bayesian_signed_rank(a, b, rope, n_samples=4000, seed=11)
    # baycomp's orientation: right means y - x > rope, i.e. a better than b for (x=b, y=a)
    ref = baycomp.SignedRankTest.probs(b, a, rope, nsamples=4000, random_state=11)
    if rope > 0:
        assert (mine.p_worse, mine.p_equivalent, mine.p_better) == pytest.approx(ref, abs=1e-12)
    else:
        assert (mine.p_worse, mine.p_better) == pytest.approx(ref, abs=1e-12)
        assert mine.p_equivalent == 0.0


def test_over_users_the_verdict_is_about_pairs_of_users_not_the_mean():
    # Walsh averages (z_i + z_j) / 2 decide: with a per-user spread far wider than the rope,
    # most of them fall outside it even when the mean difference lies inside
    rng = np.random.default_rng(2)
    d = rng.normal(0.002, 0.05, 400)
    v = bayesian_signed_rank(d, np.zeros(400), rope=0.01, seed=0)
    walsh = (d[:, None] + d[None, :]) / 2
    shares = [np.mean(walsh < -0.01), np.mean(np.abs(walsh) <= 0.01), np.mean(walsh > 0.01)]
    assert abs(d.mean()) < 0.01 and max(shares) != shares[1]
    assert v.p_equivalent < 0.05


def test_signed_rank_runs_over_thousands_of_users():
    rng = np.random.default_rng(5)
    b = rng.beta(2, 5, 3000)
    a = b + rng.normal(0.001, 0.002, 3000)
    t0 = time.perf_counter()
    v = bayesian_signed_rank(a, b, rope=0.01, seed=0)
    assert time.perf_counter() - t0 < 20
    assert v.n == 3000 and v.verdict == "equivalent" and v.p_equivalent > 0.99
    assert bayesian_signed_rank(a, b, rope=0.01, seed=0) == v  # seeded


def test_verdicts_follow_the_data():
    a, b = _pairs(60, 0.05, 1)
    assert bayesian_signed_rank(a, b, 0.01).verdict == "better"
    assert bayesian_signed_rank(b, a, 0.01).verdict == "worse"
    assert bayesian_signed_rank(a, b, 0.5).verdict == "equivalent"
    small = bayesian_signed_rank(a[10:14], b[10:14], 0.01)
    assert small.verdict == "undecided"


def test_tost_matches_statsmodels():
    weightstats = pytest.importorskip("statsmodels.stats.weightstats")
    for n, shift, rope in [(30, 0.0, 0.03), (200, 0.01, 0.02), (500, 0.002, 0.005)]:
        a, b = _pairs(n, shift, n)
        p, p_low, p_up = tost_paired(a, b, rope)
        ref = weightstats.ttost_paired(a, b, -rope, rope)
        assert p == pytest.approx(ref[0], rel=1e-10)
        assert (p_low, p_up) == pytest.approx((ref[1][1], ref[2][1]), rel=1e-10)


def test_rope_forms_and_errors():
    assert resolve_rope(0.02) == 0.02
    assert resolve_rope("10%", -0.3) == pytest.approx(0.03)
    assert resolve_rope({"ndcg_at_10": 0.01}, 0.3, "recall_at_10") == 0.0
    a, b = _pairs(50, 0.0, 3)
    assert tost_paired(a, b, "5%") == tost_paired(a, b, 0.05 * b.mean())
    with pytest.raises(InputError, match="'rope'"):
        resolve_rope("five percent")
    with pytest.raises(InputError, match="'rope'"):
        resolve_rope(-0.1)


def test_edge_cases_and_named_errors():
    nan = float("nan")
    v = bayesian_signed_rank([nan, nan], [0.1, 0.2], 0.01)
    assert v.n == 0 and v.verdict == "undecided"
    assert all(np.isnan(x) for x in tost_paired([0.1], [0.2], 0.01))
    # no spread: every difference 0.1, outside the rope (NaN before: p is 0 or 1 there)
    assert tost_paired([0.1, 0.2], [0.0, 0.1], 0.01) == (1.0, 0.0, 1.0)
    with pytest.raises(InputError, match="'prior'"):
        bayesian_signed_rank([0.1, 0.2], [0.2, 0.1], prior=0)
    with pytest.raises(InputError, match="'threshold'"):
        bayesian_signed_rank([0.1, 0.2], [0.2, 0.1], threshold=1.5)
    with pytest.raises(InputError, match="'b'"):
        bayesian_signed_rank([0.1, 0.2], [0.2])


def _tost_by_definition(d, rope, ratio=0.0):
    """TOST from its definition: the larger of the two one-sided paired t-tests' p-values."""
    from scipy.stats import t

    d = np.asarray(d, dtype=float)
    n = d.size
    se = np.sqrt(1.0 / n + ratio) * d.std(ddof=1)
    p_low = t.sf((d.mean() + rope) / se, n - 1)  # H0: mean <= -rope
    p_up = t.cdf((d.mean() - rope) / se, n - 1)  # H0: mean >= rope
    return max(p_low, p_up), p_low, p_up


@pytest.mark.parametrize("n, shift, rope", [(30, 0.0, 0.03), (200, 0.015, 0.02), (12, -0.01, 0.02)])
def test_tost_is_the_larger_one_sided_p_value(n, shift, rope):
    a, b = _pairs(n, shift, n)
    p, p_low, p_up = tost_paired(a, b, rope)
    ref = _tost_by_definition(a - b, rope)
    assert (p, p_low, p_up) == pytest.approx(ref, rel=1e-12)
    # the two one-sided p-values differ here: the smaller one is not TOST's p
    assert min(p_low, p_up) < 0.5 * p


def test_tost_over_replicates_inflates_the_variance():
    a, b = _pairs(10, 0.005, 4)
    ref = _tost_by_definition(a - b, 0.02, ratio=0.25)
    assert tost_paired(a, b, 0.02, test_train_ratio=0.25) == pytest.approx(ref, rel=1e-12)
    assert tost_paired(a, b, 0.02, test_train_ratio=0.25)[0] > tost_paired(a, b, 0.02)[0]


def test_tost_without_spread_is_0_inside_the_rope_and_1_outside_or_on_it():
    # P@10 values: every difference 0.1 (in floats 0.1, 0.09999999999999998, ...)
    a, b = np.array([0.3, 0.5, 0.1, 0.7]), np.array([0.2, 0.4, 0.0, 0.6])
    assert tost_paired(a, b, 0.2) == (0.0, 0.0, 0.0)
    assert tost_paired(a, b, 0.1)[0] == 1.0  # on the boundary: not inside
    assert tost_paired(a, b, 0.05) == (1.0, 0.0, 1.0)
    assert tost_paired(a, a, 0.0) == (1.0, 1.0, 1.0)
    assert bayesian_paired_t(a, b, 0.2).verdict == "equivalent"
    assert bayesian_paired_t(a, b, 0.1).verdict == "undecided"  # half a point on the boundary
    assert bayesian_paired_t(a, b, 0.05).verdict == "better"


def test_identical_systems_at_rope_0_get_one_verdict_from_every_test():
    """No difference anywhere and no room for equivalence: undecided, P(better) = P(worse)."""
    a = np.random.default_rng(0).beta(2, 5, 40)
    sr = bayesian_signed_rank(a, a, 0.0, n_samples=2000)
    pt = bayesian_paired_t(a, a, 0.0)
    ct = correlated_t_verdict(a[:5], a[:5], 0.0, n_folds=5)
    assert (sr.p_worse, sr.p_better, sr.verdict) == (0.5, 0.5, "undecided")
    assert (pt.p_worse, pt.p_better, pt.verdict) == (0.5, 0.5, "undecided")
    assert (ct[0], ct[2], ct[3]) == (0.5, 0.5, "undecided")
    # with a rope they are equivalent, by every test
    assert bayesian_signed_rank(a, a, 0.01).verdict == "equivalent"
    assert bayesian_paired_t(a, a, 0.01).verdict == "equivalent"
    assert correlated_t_verdict(a[:5], a[:5], 0.01, n_folds=5)[3] == "equivalent"


def test_the_verdict_rule():
    # a direction needs (1 + c) / 2 = 0.975 (one-sided 2.5% each way); equivalence needs both
    # tails outside the rope below 1 - c = 0.05 (TOST at 5%); a tie is undecided
    assert decide(0.0, 0.03, 0.97) == "undecided"
    assert decide(0.0, 0.025, 0.975) == "better"
    assert decide(0.975, 0.025, 0.0) == "worse"
    assert decide(0.049, 0.902, 0.049) == "equivalent"
    assert decide(0.05, 0.94, 0.01) == "undecided"
    assert decide(0.5, 0.0, 0.5) == "undecided"
    assert decide(float("nan"), float("nan"), float("nan")) == "undecided"
    assert decide(0.0, 0.09, 0.91, threshold=0.8) == "better"


def _exact_signed_rank(tenths, rope_tenths, prior, n_samples, seed):
    """θ_worse, θ_better of every draw by the O(n^2) double sum, every comparison of
    z_i + z_j with ±2r in integers (tenths), on the same Dirichlet draws."""
    z = np.concatenate(([0], tenths)).astype(np.int64)
    weights = np.ones(z.size)
    weights[0] = prior
    w = np.random.RandomState(seed).dirichlet(weights, n_samples)
    s = z[:, None] + z[None, :]
    up = np.where(s > 2 * rope_tenths, 1.0, np.where(s == 2 * rope_tenths, 0.5, 0.0))
    lo = np.where(s < -2 * rope_tenths, 1.0, np.where(s == -2 * rope_tenths, 0.5, 0.0))
    pairs = w[:, :, None] * w[:, None, :]
    return (pairs * lo).sum(axis=(1, 2)), (pairs * up).sum(axis=(1, 2))


def test_signed_rank_on_a_lattice_metric_decides_the_boundary_exactly():
    # P@10 of two systems, rope 0.05: a pair of differences summing to exactly 0.1 lies on the
    # boundary and counts half; in floats most such sums land just above or below 0.1
    rng = np.random.default_rng(4)
    a_t, b_t = rng.integers(0, 6, 60), rng.integers(0, 6, 60)
    a, b = a_t / 10.0, b_t / 10.0
    z = a - b
    zz = np.concatenate(([0.0], z))
    exact = (a_t - b_t)[:, None] + (a_t - b_t)[None, :] == 1
    assert exact.sum() > 50 and np.sum(exact & (zz[1:, None] + zz[None, 1:] != 0.1)) > 10
    got = _signed_rank_samples(z, 0.05, 0.5, 200, 3)
    worse, better = _exact_signed_rank(a_t - b_t, 0.5, 0.5, 200, 3)
    assert got[:, 0] == pytest.approx(worse, abs=1e-12)
    assert got[:, 2] == pytest.approx(better, abs=1e-12)
