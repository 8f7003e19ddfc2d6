"""The adapter for the `implicit` library's models (skipped when it is not installed)."""

from __future__ import annotations

import builtins
import importlib.util

import numpy as np
import pytest
import scipy.sparse as sp

from recoeval_tracking import FactorScores, InputError
from recoeval_tracking.models import ImplicitModel, PopularityModel, make_model

HAVE_IMPLICIT = importlib.util.find_spec("implicit") is not None
needs_implicit = pytest.mark.skipif(not HAVE_IMPLICIT, reason="implicit is not installed")


def test_missing_library_gives_install_command(monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "implicit" or name.startswith("implicit."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    monkeypatch.setattr(
        importlib, "import_module", lambda name, package=None: fake_import(name), raising=True
    )
    with pytest.raises(ImportError, match="pip install implicit"):
        ImplicitModel("als")


def test_unknown_model_name():
    with pytest.raises(InputError, match="'model_name' parameter of ImplicitModel.*'als'"):
        ImplicitModel("svd")


@needs_implicit
@pytest.mark.parametrize("model_name", ["als", "bpr", "lmf"])
def test_scores_are_the_fitted_factors(model_name):
    X = sp.random_array((40, 30), density=0.2, random_state=0, format="csr")
    model = make_model(
        "implicit", model_name=model_name, factors=4, iterations=3, random_state=1
    ).fit(X)
    src = model.score_source()
    assert isinstance(src, FactorScores)
    A = np.asarray(model.model_.user_factors)
    B = np.asarray(model.model_.item_factors)
    assert A.shape[0] == 40 and B.shape[0] == 30
    users = np.array([0, 39, 7])
    np.testing.assert_allclose(src.block(users), A[users] @ B.T, rtol=1e-5, atol=1e-6)
    assert model.params() == {
        "model_name": model_name,
        "progress": False,
        "factors": 4,
        "iterations": 3,
        "random_state": 1,
    }


@needs_implicit
def test_implicit_als_beats_popularity(low_rank, recall_at_10):
    train, test = low_rank
    users = np.arange(train.shape[0])
    model = ImplicitModel("als", factors=8, regularization=0.1, iterations=10, random_state=0)
    r_als = recall_at_10(model.fit(train).score_source().block(users), train, test)
    r_pop = recall_at_10(PopularityModel().fit(train).score_source().block(users), train, test)
    assert r_als > 1.5 * r_pop


@needs_implicit
def test_unknown_implicit_parameter():
    with pytest.raises(InputError, match="AlternatingLeastSquares"):
        ImplicitModel("als", factorz=3)
