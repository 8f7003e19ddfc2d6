"""Implicit ALS with conjugate-gradient updates (Hu, Koren & Volinsky 2008; Takács et al. 2011)."""

from __future__ import annotations

import numba
import numpy as np
import pytest
import scipy.sparse as sp

from recoeval_tracking import FactorScores, InputError
from recoeval_tracking.models import ALSModel, PopularityModel
from recoeval_tracking.models._als import _kernel_csr, _Sweeps


def _small(seed: int = 0) -> sp.csr_array:
    X = sp.random_array((60, 40), density=0.15, random_state=seed, format="csr")
    X.data = np.ceil(X.data * 5)  # counts 1..5
    return X


def _dense_loss(X: sp.csr_array, U: np.ndarray, V: np.ndarray, alpha: float, reg: float) -> float:
    """The HKV objective written out over every (user, item) pair, in float64."""
    R = X.toarray()
    P = (R > 0).astype(float)
    C = 1.0 + alpha * R
    S = U.astype(np.float64) @ V.astype(np.float64).T
    return float(
        np.sum(C * (P - S) ** 2)
        + reg * (np.sum(U.astype(np.float64) ** 2) + np.sum(V.astype(np.float64) ** 2))
    )


def test_loss_matches_definition_and_decreases():
    X = _small()
    model = ALSModel(
        factors=6,
        regularization=0.1,
        alpha=2.0,
        iterations=8,
        seed=1,
        progress=False,
        compute_loss=True,
    ).fit(X)
    loss = np.array(model.loss_history_)
    assert loss.shape == (8,)
    ref = _dense_loss(X, model.user_factors_, model.item_factors_, 2.0, 0.1)
    assert loss[-1] == pytest.approx(ref, rel=1e-9)
    assert model.training_loss(X) == pytest.approx(ref, rel=1e-9)
    # every CG step lowers each row's quadratic, so the loss never goes up (up to rounding)
    assert np.all(np.diff(loss) <= 1e-7 * loss[0])
    assert loss[-1] < 0.9 * loss[0]


def test_many_cg_steps_solve_the_normal_equations():
    rng = np.random.default_rng(0)
    X = _small(2)
    k, alpha, reg = 5, 3.0, 0.5
    Y = rng.standard_normal((X.shape[1], k)).astype(np.float32)
    U = rng.standard_normal((X.shape[0], k)).astype(np.float32)
    with _Sweeps(numba.get_num_threads()) as sweeps:
        sweeps.cg(_kernel_csr(X, alpha), U, Y, sweeps.gram(Y), reg, 3 * k)
    Y64 = Y.astype(np.float64)
    R = X.toarray()
    for u in range(X.shape[0]):
        c = 1.0 + alpha * R[u]
        p = (R[u] > 0).astype(float)
        A = Y64.T @ (c[:, None] * Y64) + reg * np.eye(k)
        x = np.linalg.solve(A, Y64.T @ (c * p))
        np.testing.assert_allclose(U[u], x, rtol=1e-4, atol=1e-5)


def test_gram_equals_matrix_product():
    Y = np.random.default_rng(1).standard_normal((50, 7)).astype(np.float32)
    Y64 = Y.astype(np.float64)
    with _Sweeps(numba.get_num_threads()) as sweeps:
        np.testing.assert_allclose(sweeps.gram(Y), Y64.T @ Y64, rtol=1e-12)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_factors_do_not_depend_on_thread_count():
    X = _small(3)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = ALSModel(factors=8, iterations=3, seed=5, progress=False).fit(X)
        numba.set_num_threads(2)
        two = ALSModel(factors=8, iterations=3, seed=5, progress=False).fit(X)
    finally:
        numba.set_num_threads(before)
    assert one.user_factors_.tobytes() == two.user_factors_.tobytes()
    assert one.item_factors_.tobytes() == two.item_factors_.tobytes()


def test_seeded_and_float32():
    X = _small(4)
    a = ALSModel(factors=4, iterations=2, seed=9, progress=False).fit(X)
    b = ALSModel(factors=4, iterations=2, seed=9, progress=False).fit(X)
    c = ALSModel(factors=4, iterations=2, seed=10, progress=False).fit(X)
    assert np.array_equal(a.user_factors_, b.user_factors_)
    assert not np.array_equal(a.user_factors_, c.user_factors_)
    src = a.score_source()
    assert isinstance(src, FactorScores) and src.dtype == np.float32
    assert a.user_factors_.shape == (60, 4) and a.item_factors_.shape == (40, 4)
    users = np.array([3, 0, 59])
    np.testing.assert_allclose(
        src.block(users), a.user_factors_[users] @ a.item_factors_.T, rtol=1e-6
    )


def test_zero_iterations_keep_the_seeded_initialisation():
    X = _small(4)
    model = ALSModel(factors=3, iterations=0, seed=2, progress=False).fit(X)
    rng = np.random.default_rng(2)
    np.testing.assert_array_equal(
        model.user_factors_, (rng.standard_normal((60, 3)) * 0.01).astype(np.float32)
    )
    np.testing.assert_array_equal(
        model.item_factors_, (rng.standard_normal((40, 3)) * 0.01).astype(np.float32)
    )


def test_als_beats_popularity_on_low_rank_data(low_rank, recall_at_10):
    train, test = low_rank
    als = ALSModel(
        factors=8, regularization=0.1, alpha=5.0, iterations=10, seed=0, progress=False
    ).fit(train)
    users = np.arange(train.shape[0])
    r_als = recall_at_10(als.score_source().block(users), train, test)
    r_pop = recall_at_10(PopularityModel().fit(train).score_source().block(users), train, test)
    assert r_als > 1.5 * r_pop
    assert r_als > r_pop + 0.05


def test_no_progress_output_when_not_a_terminal(capsys):
    ALSModel(factors=2, iterations=2, progress=True).fit(_small())
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


@pytest.mark.parametrize(
    "params, bad",
    [
        ({"factors": 0}, "factors"),
        ({"regularization": -1.0}, "regularization"),
        ({"alpha": float("nan")}, "alpha"),
        ({"iterations": 2.0}, "iterations"),
        ({"cg_steps": 0}, "cg_steps"),
        ({"progress": 1}, "progress"),
    ],
)
def test_bad_parameters(params, bad):
    with pytest.raises(InputError, match=f"'{bad}' parameter of ALSModel"):
        ALSModel(**params)


def test_negative_confidences_are_rejected():
    X = sp.csr_array(np.array([[1.0, -2.0], [0.0, 1.0]]))
    with pytest.raises(InputError, match="non-negative confidences.*-2.0"):
        ALSModel(factors=2, progress=False).fit(X)


def test_a_cold_kernel_cache_is_said_before_the_fit(monkeypatch, caplog):
    import logging

    from recoeval_tracking.models import _als

    X = sp.csr_array(np.eye(6, 5))
    monkeypatch.setattr(_als, "is_cached", lambda f: False)
    with caplog.at_level(logging.INFO, logger="recoeval_tracking.models._als"):
        ALSModel(factors=2, iterations=1, progress=False).fit(X)
    assert "compiling the ALS kernels" in caplog.text
    monkeypatch.undo()
    assert _als.is_cached(_als._cg_rows)  # the fit above wrote the cache
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="recoeval_tracking.models._als"):
        ALSModel(factors=2, iterations=1, progress=False).fit(X)
    assert "compiling" not in caplog.text
