"""The ideal gains of a user's positives (engine/fill.py ``_all_ideal_gains``): each kind's
positive gains sorted descending, whether the test values are all alike (the path without a
sort) or graded, against a pure-Python reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from recoeval_tracking.engine import fill


def _reference(vals: np.ndarray) -> list[list[float]]:
    """Linear ``v``, exponential ``2^v - 1`` and binary ``1`` gains, the positive ones sorted
    descending (NDCG's ideal ranking)."""
    kinds = [lambda v: v, lambda v: 2.0**v - 1.0, lambda v: 1.0]
    return [sorted((g(float(v)) for v in vals if g(float(v)) > 0), reverse=True) for g in kinds]


def _check(vals: np.ndarray) -> None:
    got = fill._all_ideal_gains(np.asarray(vals, dtype=np.float64))
    for kind, (have, want) in enumerate(zip(got, _reference(vals), strict=True)):
        np.testing.assert_array_equal(have, np.array(want, dtype=np.float64), err_msg=str(kind))


@pytest.mark.parametrize(
    "vals",
    [
        [1.0],
        [1.0, 1.0, 1.0],
        [4.0, 4.0],
        [0.0, 0.0, 0.0],  # no linear or exponential gain: only the binary ones
        [-1.0, -1.0],  # negative values: likewise
        [0.5, 0.5, 0.5, 0.5],  # an exponential gain below 1
        [3.0, 1.0, 3.0, 2.0],
        [1.0, 1.0, 0.0],  # alike but one
    ],
)
def test_alike_and_graded_values(vals):
    _check(np.array(vals))


@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.integers(1, 12),
        elements=st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 5.0]),
    )
)
def test_any_values_give_the_references_gains(vals):
    _check(vals)
