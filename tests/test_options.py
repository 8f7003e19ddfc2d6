"""EvalOptions: the evaluation options declared once, and every place that takes them."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking import InputError
from recoeval_tracking.options import BACKENDS, EvalOptions, config_fields


def test_from_config_defaults():
    opts = EvalOptions.from_config({"names": ["all"]})
    assert opts.metrics == "all" and opts.k == 10
    assert opts.ties is None and opts.profile is None  # evaluate() defaults to noise
    assert EvalOptions.from_config({}).metrics == "all"  # no names and no profile: every metric
    picked = EvalOptions.from_config({"names": ["ndcg", "p"], "ties": "index"})
    assert picked.metrics == ["ndcg", "p"] and picked.ties == "index"
    assert EvalOptions.from_config({"profile": "recbole"}).metrics is None  # the profile's


def test_from_config_refuses_unknown_keys():
    with pytest.raises(InputError, match="unknown keys \\['kk'\\]"):
        EvalOptions.from_config({"kk": 3})


def test_evaluate_takes_every_option_with_the_same_default():
    params = inspect.signature(rt.evaluate).parameters
    for f in dataclasses.fields(EvalOptions):
        assert f.name in params, f.name
        assert params[f.name].default == f.default, f.name


def test_hydra_schema_is_derived_from_the_options():
    from recoeval_tracking.app.schema import MetricsConfig

    names = [f.name for f in dataclasses.fields(MetricsConfig)]
    assert names == [key for _, key in config_fields()]
    assert "names" in names and "nthreads" not in names and "backend" in names


def test_profile_and_checks():
    from recoeval_tracking.metrics.profiles import apply_profile

    opts = apply_profile(EvalOptions(profile="recbole"))
    assert opts.ties == "index" and "gauc" in list(opts.metrics)
    assert apply_profile(EvalOptions()).ties == "noise"
    assert apply_profile(EvalOptions(profile="recbole", ties="noise")).ties == "noise"
    with pytest.raises(InputError, match="'backend' parameter of evaluate must be one of"):
        EvalOptions(backend="tpu").checked()
    with pytest.raises(InputError, match="'block_rows'"):
        EvalOptions(block_rows=-3).checked()
    assert BACKENDS == ("cpu", "cuda")


def test_options_object_and_keywords_agree():
    rng = np.random.default_rng(0)
    Xtr = sp.random_array((30, 20), density=0.2, format="csr", rng=rng)
    Xte = sp.random_array((30, 20), density=0.15, format="csr", rng=rng)
    Xte = Xte - Xte.multiply(Xtr.astype(bool))
    Xte.eliminate_zeros()
    A, B = rng.normal(size=(30, 4)), rng.normal(size=(20, 4))
    opts = EvalOptions(metrics=["ndcg", "rr"], k=3, ties="index")
    a = rt.evaluate(Xtr, Xte, A=A, B=B, options=opts)
    b = rt.evaluate(Xtr, Xte, A=A, B=B, metrics=["ndcg", "rr"], k=3, ties="index")
    assert a.per_user.equals(b.per_user) and a.fingerprint == b.fingerprint
    c = rt.evaluate(Xtr, Xte, A=A, B=B, options=opts, k=2)  # keywords on top of the object
    assert c.k == 2 and list(c.per_user.columns[-2:]) == ["ndcg_at_2", "rr_at_2"]
