"""Practical equivalence: the Bayesian signed-rank test against baycomp, TOST against
statsmodels, and the rope's forms."""

from __future__ import annotations

import time

import numpy as np
import pytest

from recoeval_tracking import InputError
from recoeval_tracking.reporting.equivalence import (
    bayesian_signed_rank,
    resolve_rope,
    tost_paired,
)


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
    assert all(np.isnan(x) for x in tost_paired([0.1, 0.2], [0.0, 0.1], 0.01))  # no spread
    with pytest.raises(InputError, match="'prior'"):
        bayesian_signed_rank([0.1, 0.2], [0.2, 0.1], prior=0)
    with pytest.raises(InputError, match="'threshold'"):
        bayesian_signed_rank([0.1, 0.2], [0.2, 0.1], threshold=1.5)
    with pytest.raises(InputError, match="'b'"):
        bayesian_signed_rank([0.1, 0.2], [0.2])
