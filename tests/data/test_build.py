"""``build_interactions`` (public: ids, values and timestamps as arrays): its errors name the
first bad row and count them all."""

from __future__ import annotations

import numpy as np
import pytest

from recoeval_tracking import InputError
from recoeval_tracking.data import build_interactions


def test_non_finite_values_name_the_first_row_and_the_count():
    users = np.array([1, 1, 2, 2, 3])
    items = np.array([1, 2, 1, 2, 1])
    values = np.array([1.0, np.nan, 2.0, np.inf, 1.0])
    with pytest.raises(
        InputError,
        match=r"non-finite value nan at row 1 \(2 rows with NaN or "
        r"infinite values\)",
    ):
        build_interactions(users, items, values)
    with pytest.raises(InputError, match=r"non-finite value -inf at line 12 of r\.csv \(1 rows"):
        build_interactions(
            users, items, np.array([1.0, 1.0, -np.inf, 1.0, 1.0]), source="r.csv", line_offset=10
        )
