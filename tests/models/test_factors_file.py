"""Factors loaded from .npz / .npy files and matched to the dataset by id."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import scipy.sparse as sp

from recoeval_tracking import FactorScores, InputError
from recoeval_tracking.models import FactorsFileModel, make_model

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 3)).astype(np.float32)
B = RNG.standard_normal((5, 3)).astype(np.float32)
BIAS = RNG.standard_normal(5).astype(np.float32)
TRAIN = sp.csr_array(np.eye(4, 5))


def test_npz_round_trip_without_ids(tmp_path):
    path = tmp_path / "f.npz"
    np.savez(path, user_factors=A, item_factors=B, item_biases=BIAS)
    src = make_model("factors_file", path=str(path)).fit(TRAIN).score_source()
    assert isinstance(src, FactorScores)
    users = np.array([2, 0])
    np.testing.assert_allclose(src.block(users), A[users] @ B.T + BIAS[None, :], rtol=1e-6)


def test_npy_pair_round_trip(tmp_path):
    np.save(tmp_path / "u.npy", A)
    np.save(tmp_path / "i.npy", B)
    model = FactorsFileModel(
        user_factors=str(tmp_path / "u.npy"), item_factors=str(tmp_path / "i.npy")
    ).fit(TRAIN)
    np.testing.assert_array_equal(model.user_factors_, A)
    np.testing.assert_array_equal(model.item_factors_, B)
    np.testing.assert_allclose(model.score_source().block(np.arange(4)), A @ B.T, rtol=1e-6)


def test_parquet_pair_round_trip_and_a_wrong_suffix(tmp_path):
    """Parquet factor files (a list column for the users, one column per factor for the items)
    load as the .npy pair does; a file of any other suffix is refused with the expected ones."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(
        pa.table({"user": list("abcd"), "factors": pa.array(list(A))}),
        tmp_path / "u.parquet",
        row_group_size=3,
    )
    pq.write_table(pa.table({f"f{j}": B[:, j] for j in range(3)}), tmp_path / "i.parquet")
    model = FactorsFileModel(
        user_factors=str(tmp_path / "u.parquet"), item_factors=str(tmp_path / "i.parquet")
    ).fit(TRAIN)
    np.testing.assert_array_equal(model.user_factors_, A)
    np.testing.assert_array_equal(model.item_factors_, B)
    assert model.user_factors_.dtype == np.float32
    (tmp_path / "u.csv").write_text("1,2,3\n")
    with pytest.raises(InputError, match=r"'user_factors'.*a \.npy or \.parquet file.*u\.csv"):
        FactorsFileModel(
            user_factors=str(tmp_path / "u.csv"), item_factors=str(tmp_path / "i.parquet")
        )


def test_ids_are_matched_and_missing_rows_get_zeros(tmp_path, caplog):
    # file rows in another order, one extra user ("zz") and item 50 missing from the file
    path = tmp_path / "f.npz"
    np.savez(
        path,
        user_factors=A,
        item_factors=B[:4],
        item_biases=BIAS[:4],
        user_ids=np.array(["c", "a", "zz", "b"]),
        item_ids=np.array([40, 10, 30, 20]),
    )
    dataset_users = np.array(["a", "b", "c"])
    dataset_items = np.array([10, 20, 30, 40, 50])
    train = sp.csr_array((3, 5))
    with caplog.at_level(logging.WARNING, logger="recoeval_tracking.models._factors_file"):
        model = FactorsFileModel(str(path)).fit(
            train, user_ids=dataset_users, item_ids=dataset_items
        )
    np.testing.assert_array_equal(model.user_factors_, A[[1, 3, 0]])
    np.testing.assert_array_equal(
        model.item_factors_, np.vstack([B[[1, 3, 2, 0]], np.zeros((1, 3))])
    )
    np.testing.assert_array_equal(model.item_biases_, [BIAS[1], BIAS[3], BIAS[2], BIAS[0], 0.0])
    warnings = [r.getMessage() for r in caplog.records]
    assert any("1 of 5 items" in w and "zero factors" in w for w in warnings)
    assert not any("users" in w for w in warnings)


def test_shape_mismatch_names_file_and_shapes(tmp_path):
    path = tmp_path / "f.npz"
    np.savez(path, user_factors=A, item_factors=B)
    with pytest.raises(InputError) as info:
        FactorsFileModel(str(path)).fit(sp.csr_array((4, 6)))
    msg = str(info.value)
    assert "f.npz" in msg and "expected 6 rows" in msg and "(5, 3)" in msg


def test_no_common_ids_is_an_error(tmp_path):
    path = tmp_path / "f.npz"
    np.savez(path, user_factors=A, item_factors=B, user_ids=np.arange(4))
    with pytest.raises(InputError, match="None of the 4 dataset user ids"):
        FactorsFileModel(str(path)).fit(TRAIN, user_ids=np.array(["a", "b", "c", "d"]))


def test_file_errors(tmp_path):
    with pytest.raises(InputError, match="'path' parameter of FactorsFileModel.*existing .npz"):
        FactorsFileModel(str(tmp_path / "missing.npz"))
    with pytest.raises(InputError, match="either 'path'"):
        FactorsFileModel()
    np.savez(tmp_path / "f.npz", user_factors=A)
    with pytest.raises(InputError, match="key 'item_factors'"):
        FactorsFileModel(str(tmp_path / "f.npz")).fit(TRAIN)
    np.savez(tmp_path / "g.npz", user_factors=A, item_factors=B[:, :2])
    with pytest.raises(InputError, match="same number of columns"):
        FactorsFileModel(str(tmp_path / "g.npz")).fit(TRAIN)
    np.savez(tmp_path / "h.npz", user_factors=A, item_factors=B, user_ids=np.array([1, 1, 2, 3]))
    with pytest.raises(InputError, match="must be unique"):
        FactorsFileModel(str(tmp_path / "h.npz")).fit(TRAIN, user_ids=np.arange(4))
