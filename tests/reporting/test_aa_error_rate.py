"""A/A simulation: the default paired test holds its nominal error rate at 20, 200 and 2,000 users.

Real per-user NDCG@10 differences of two models (popularity and item k-NN) on MovieLens 100K are
made null by random sign flips (the distribution of each difference becomes symmetric about 0,
so the true mean difference is 0 and the users keep their real spread, zeros and skew); 1,000
draws per sample size; the rejection rate at alpha = 0.05 must lie within alpha +- 2 standard
errors, ``sqrt(alpha (1 - alpha) / 1000) = 0.0069``. Without the shared data a synthetic
difference distribution with the same features (mean, spread, share of zeros) stands in. The
draws are seeded: a bound of two standard errors is missed by chance in about 5% of seeds.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest

from recoeval_tracking import stats as st
from recoeval_tracking.stats import DEFAULT_TEST

ALPHA = 0.05
DRAWS = 1000


def _data_file() -> Path:
    env = os.environ.get("RECOEVAL_SHARED_DATA")
    root = Path(env) if env else Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
    return root.resolve() / "ml-100k" / "u.data"


@pytest.fixture(scope="module")
def differences() -> np.ndarray:
    path = _data_file()
    if not path.exists():  # stand-in with the real differences' features: mean 0.13, sd 0.2,
        # bounded, 9% zeros (their excess kurtosis is near 0)
        rng = np.random.default_rng(7)
        d = np.clip(rng.normal(0.13, 0.2, 943), -1.0, 1.0)
        d[rng.random(943) < 0.09] = 0.0
        return d
    import recoeval_tracking as rt
    from recoeval_tracking.data import load_movielens_100k

    X = load_movielens_100k(path)
    split = rt.make_split("random", X, test_fraction=0.2, seed=0)
    cols = {}
    for name in ("popularity", "item_knn"):
        model = rt.make_model(name).fit(split.train.matrix)
        res = rt.evaluate(
            split.train, split.test, scores=model.score_source(), metrics=["ndcg"], k=10
        )
        cols[name] = res.per_user.set_index("user_id")["ndcg_at_10"]
    d = (cols["item_knn"] - cols["popularity"]).dropna().to_numpy()
    assert d.size > 900 and np.mean(d == 0) < 0.5  # real, mostly non-zero differences
    return d


def test_the_default_test_is_the_paired_t_and_compare_uses_it():
    import inspect

    import recoeval_tracking as rt

    assert DEFAULT_TEST == "t"
    assert inspect.signature(rt.compare).parameters["test"].default == DEFAULT_TEST


@pytest.mark.parametrize("n", [20, 200, 2000])
def test_aa_rejection_rate_is_nominal(differences, n):
    rng = np.random.default_rng(1000 + n)
    pool = differences
    if n <= pool.size:  # users drawn without replacement
        idx = np.argsort(rng.random((DRAWS, pool.size)), axis=1)[:, :n]
    else:  # more users than the data set has: drawn with replacement from its differences
        idx = rng.integers(0, pool.size, (DRAWS, n))
    signs = rng.choice([-1.0, 1.0], (DRAWS, n))
    D = signs * pool[idx]
    zeros = np.zeros(n)
    p = np.array([st.paired_t_test(row, zeros)[1] for row in D])
    assert np.all(np.isfinite(p))
    rate = float(np.mean(p < ALPHA))
    se = math.sqrt(ALPHA * (1 - ALPHA) / DRAWS)
    assert abs(rate - ALPHA) <= 2 * se, (n, rate)


def _null_draws(differences: np.ndarray, n: int, draws: int) -> np.ndarray:
    """``draws`` rows of ``n`` sign-flipped differences (two systems that do not differ)."""
    rng = np.random.default_rng(2000 + n)
    if n <= differences.size:
        idx = np.argsort(rng.random((draws, differences.size)), axis=1)[:, :n]
    else:
        idx = rng.integers(0, differences.size, (draws, n))
    return rng.choice([-1.0, 1.0], (draws, n)) * differences[idx]


@pytest.mark.parametrize("n", [20, 200, 2000])
def test_aa_the_default_verdict_says_better_or_worse_in_at_most_5_percent(differences, n):
    """The verdict over users (the Bayesian paired t, :func:`~.equivalence.decide`) on equal
    systems: "better" or "worse" in at most alpha of the draws, within two standard errors,
    at a rope of 0 (where it is the two-sided t-test) and at ropes of 1% and 5% of a mean
    NDCG@10 of 0.2; a direction needs P >= 0.975, so each one is a one-sided test at 2.5%.
    (P >= 0.95 per direction said so in about 10% of the draws at rope 0.) And the verdict is
    "equivalent" exactly when TOST p < alpha: the page's two columns agree."""
    from recoeval_tracking.stats import bayesian_paired_t, tost_paired

    D = _null_draws(differences, n, DRAWS)
    zeros = np.zeros(n)
    se = math.sqrt(ALPHA * (1 - ALPHA) / DRAWS)
    for rope in (0.0, 0.002, 0.01):
        verdicts = [bayesian_paired_t(row, zeros, rope).verdict for row in D]
        wrong = np.mean([v in ("better", "worse") for v in verdicts])
        assert wrong <= ALPHA + 2 * se, (n, rope, wrong)
        if rope == 0.0:  # the two-sided t-test: its nominal rate
            assert abs(wrong - ALPHA) <= 2 * se, (n, wrong)
        equivalent = np.array([v == "equivalent" for v in verdicts])
        tost = np.array([tost_paired(row, zeros, rope)[0] < ALPHA for row in D])
        assert np.array_equal(equivalent, tost), (n, rope)
