"""Popularity, random, the registry and make_model."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from recoeval_tracking import BiasScores, CallableScores, InputError
from recoeval_tracking.models import (
    MODELS,
    Model,
    NotFittedError,
    PopularityModel,
    RandomModel,
    make_model,
)


@pytest.fixture
def tiny() -> sp.csr_array:
    # users x items; item 0: users 0, 2; item 1: user 1; item 2: none; item 3: users 0, 1, 2
    dense = np.array([[1.0, 0.0, 0.0, 2.0], [0.0, 5.0, 0.0, 1.0], [3.0, 0.0, 0.0, 1.0]])
    return sp.csr_array(dense)


def test_popularity_counts_users_per_item(tiny):
    src = PopularityModel().fit(tiny).score_source()
    assert isinstance(src, BiasScores)
    block = src.block(np.array([2, 0]))
    np.testing.assert_array_equal(block, [[2, 1, 0, 3], [2, 1, 0, 3]])


def test_popularity_weighted_sums_values(tiny):
    block = PopularityModel(weighted=True).fit(tiny).score_source().block(np.array([1]))
    np.testing.assert_array_equal(block, [[4.0, 5.0, 0.0, 4.0]])


def test_popularity_ignores_explicit_zeros():
    X = sp.csr_array((np.array([0.0, 1.0]), np.array([0, 1]), np.array([0, 2])), shape=(1, 2))
    block = PopularityModel().fit(X).score_source().block(np.array([0]))
    np.testing.assert_array_equal(block, [[0.0, 1.0]])


def test_random_is_reproducible_and_block_independent(tiny):
    X = sp.random_array((40, 25), density=0.2, random_state=3, format="csr")
    src = RandomModel(seed=7).fit(X).score_source()
    assert isinstance(src, CallableScores)
    whole = src.block(np.arange(40))
    # the definition: user u's scores come from default_rng([seed, u]) alone
    expected = np.stack([np.random.default_rng([7, u]).random(25) for u in range(40)])
    np.testing.assert_array_equal(whole, expected)
    pieces = np.vstack([src.block(np.arange(s, min(s + 7, 40))) for s in range(0, 40, 7)])
    np.testing.assert_array_equal(pieces, whole)
    np.testing.assert_array_equal(src.block(np.array([31, 4])), whole[[31, 4]])
    again = RandomModel(seed=7).fit(X).score_source().block(np.arange(40))
    np.testing.assert_array_equal(again, whole)
    other = RandomModel(seed=8).fit(X).score_source().block(np.arange(40))
    assert not np.array_equal(other, whole)


def test_registry_names_and_round_trip():
    assert set(MODELS) == {
        "popularity",
        "random",
        "als",
        "item_knn",
        "factors_file",
        "implicit",
        "ranked_file",
    }
    for name, cls in MODELS.items():
        assert issubclass(cls, Model)
        assert cls.name == name
    for name, params in [
        ("popularity", {"weighted": True}),
        ("random", {"seed": 3}),
        ("als", {"factors": 8, "iterations": 2}),
        ("item_knn", {"neighbours": 5, "shrinkage": 1.5}),
    ]:
        model = make_model(name, **params)
        assert isinstance(model, MODELS[name])
        rebuilt = make_model(name, **model.params())
        assert rebuilt.params() == model.params()
        for key, value in params.items():
            assert model.params()[key] == value


def test_make_model_unknown_name_lists_registry():
    with pytest.raises(InputError) as info:
        make_model("svd")
    msg = str(info.value)
    assert "'name' parameter of make_model" in msg and "'svd'" in msg
    for name in MODELS:
        assert repr(name) in msg


def test_make_model_unknown_parameter_lists_accepted():
    with pytest.raises(InputError, match="factorz") as info:
        make_model("als", factorz=3)
    assert "regularization" in str(info.value)


@pytest.mark.parametrize(
    "name, params, bad",
    [
        ("popularity", {"weighted": "yes"}, "weighted"),
        ("random", {"seed": -1}, "seed"),
        ("random", {"seed": 1.5}, "seed"),
    ],
)
def test_bad_parameters_name_the_argument(name, params, bad):
    with pytest.raises(InputError, match=f"'{bad}' parameter"):
        make_model(name, **params)


def test_score_source_before_fit_and_bad_train(tiny):
    with pytest.raises(NotFittedError, match="before fit"):
        PopularityModel().score_source()
    with pytest.raises(InputError, match="'train' parameter of PopularityModel.fit"):
        PopularityModel().fit(tiny.toarray())
    with pytest.raises(InputError, match="'user_ids' parameter of RandomModel.fit"):
        RandomModel().fit(tiny, user_ids=np.arange(2))
