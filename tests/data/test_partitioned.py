"""The partitioned layout: a split written by user and read back by part, by the whole, and by
row range of the factors; on a local path and a file:// URL; every broken file named."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp

from recoeval_tracking._validation import InputError
from recoeval_tracking.data import (
    FactorRows,
    Interactions,
    from_dataframe,
    open_partitioned,
    write_partitioned,
)
from recoeval_tracking.data._partitioned import ITEMS_FILE, LAYOUT_FILE, load_parquet_partitioned


def _split(m: int = 23, n: int = 11, seed: int = 0):
    rng = np.random.default_rng(seed)
    train = (rng.random((m, n)) < 0.3) * rng.integers(1, 5, (m, n)).astype(np.float64)
    test = ((rng.random((m, n)) < 0.2) & (train == 0)) * 2.5
    train[4] = 0
    test[4] = 0  # a user with no row at all stays a user
    test[9] = 0
    return sp.csr_array(train), sp.csr_array(test)


def test_parts_read_back_the_rows_ids_and_counts_written(tmp_path):
    train, test = _split()
    users = np.array([f"u{i:03d}" for i in range(23)], dtype=object)
    items = np.arange(100, 111) * 7
    ds = write_partitioned(
        tmp_path / "ds", train, test, user_ids=users, item_ids=items, users_per_part=5, name="tiny"
    )
    assert [p.users for p in ds.parts] == [5, 5, 5, 5, 3]
    assert [p.lo for p in ds.parts] == [0, 5, 10, 15, 20]
    assert [p.test for p in ds.parts] == [int(test[lo : lo + 5].nnz) for lo in range(0, 23, 5)]
    assert ds.n_users == 23 and ds.n_items == 11 and ds.name == "tiny"
    np.testing.assert_array_equal(ds.item_ids, items)
    # the popularity the list metrics read: train users per item, users with a train entry
    np.testing.assert_array_equal(ds.popularity[0], (train.toarray() > 0).sum(axis=0))
    assert ds.popularity[1] == int(((train.toarray() > 0).sum(axis=1) > 0).sum())
    tr, te, u = ds.read_parts(1, 3)  # users 5..14
    assert tr.shape == (10, 11) and tr.has_sorted_indices
    np.testing.assert_array_equal(tr.toarray(), train[5:15].toarray())
    np.testing.assert_array_equal(te.toarray(), test[5:15].toarray())
    assert list(u) == list(users[5:15])
    whole_train, whole_test = ds.load()
    assert isinstance(whole_train, Interactions)
    np.testing.assert_array_equal(whole_train.matrix.toarray(), train.toarray())
    np.testing.assert_array_equal(whole_test.matrix.toarray(), test.toarray())
    assert list(whole_test.user_ids) == list(users)
    # the stored item ids are the dataset's own, not column numbers
    part = pq.read_table(tmp_path / "ds" / "users" / "part-000000.parquet").to_pandas()
    assert set(np.concatenate(part["train_items"].to_list())) <= set(items)


def test_an_interactions_split_keeps_its_id_maps_through_a_file_url(tmp_path):
    df = pd.DataFrame(
        {
            "user": [30, 10, 10, 20, 30, 30],
            "item": ["b", "a", "c", "b", "a", "c"],
            "value": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        }
    )
    X = from_dataframe(df)
    test_mask = np.zeros(X.nnz, dtype=bool)
    test_mask[[1, 4]] = True
    train, test = X.subset(~test_mask), X.subset(test_mask)
    url = (tmp_path / "by url").as_uri()  # file://..., a space in the path
    ds = write_partitioned(url, train, test, users_per_part=2)
    assert ds.url.startswith("file://") and len(ds.parts) == 2
    back_train, back_test = open_partitioned(url).load()
    assert list(back_train.user_ids) == [10, 20, 30] and list(back_train.item_ids) == [
        "a",
        "b",
        "c",
    ]
    np.testing.assert_array_equal(back_train.matrix.toarray(), train.matrix.toarray())
    np.testing.assert_array_equal(back_test.matrix.toarray(), test.matrix.toarray())
    union = load_parquet_partitioned(url)
    np.testing.assert_array_equal(union.matrix.toarray(), X.matrix.toarray())


def test_factor_rows_are_read_by_range(tmp_path):
    A = np.arange(40, dtype=np.float32).reshape(10, 4) / 3
    np.save(tmp_path / "a.npy", A)
    rows = FactorRows.open(tmp_path / "a.npy")
    assert rows.shape == (10, 4) and np.dtype(rows.dtype) == np.float32
    np.testing.assert_array_equal(rows.read(3, 7), A[3:7])
    np.testing.assert_array_equal(
        FactorRows.open((tmp_path / "a.npy").as_uri()).read(9, 10), A[9:10]
    )
    np.save(tmp_path / "f.npy", np.asfortranarray(A))
    with pytest.raises(InputError, match="'user_factors'.*C-order.*Fortran"):
        FactorRows.open(tmp_path / "f.npy")
    with pytest.raises(InputError, match="'user_factors'.*does not exist"):
        FactorRows.open(tmp_path / "nope.npy")
    data = (tmp_path / "a.npy").read_bytes()
    (tmp_path / "a.npy").write_bytes(data[:-10])
    with pytest.raises(InputError, match=r"a\.npy is truncated: rows 8\.\.9"):
        rows.read(8, 10)


def test_missing_and_broken_files_are_named(tmp_path):
    train, test = _split()
    ds = write_partitioned(tmp_path / "ds", train, test, users_per_part=10)
    part1 = tmp_path / "ds" / "users" / "part-000001.parquet"
    data = part1.read_bytes()
    part1.write_bytes(data[: len(data) // 2])  # truncated
    with pytest.raises(
        InputError,
        match=r"part-000001\.parquet .*could not be read as "
        r"Parquet.*corrupt or truncated",
    ):
        ds.read_parts(0, 3)
    part1.unlink()
    with pytest.raises(
        InputError,
        match=r"part-000001\.parquet of the partitioned dataset .* "
        r"is missing .*users 10\.\.19",
    ):
        ds.check_files()
    with pytest.raises(InputError, match=r"part-000001\.parquet .* is missing"):
        ds.read_parts(1, 2)
    # a part replaced by another one of a different size
    (tmp_path / "ds" / "users" / "part-000000.parquet").rename(part1)
    with pytest.raises(
        InputError,
        match=r"part-000001\.parquet .* holds 10 users where the "
        r"manifest .* says 3",
    ):
        _read_as(ds, 2, "part-000001")
    (tmp_path / "ds" / ITEMS_FILE).unlink()
    with pytest.raises(
        InputError,
        match=r"items\.parquet of the partitioned dataset .* is "
        r"missing",
    ):
        open_partitioned(tmp_path / "ds")
    (tmp_path / "ds" / LAYOUT_FILE).write_text("{not json")
    with pytest.raises(InputError, match=r"_recoeval_layout\.json .* not valid JSON"):
        open_partitioned(tmp_path / "ds")
    with pytest.raises(
        InputError,
        match=r"is not a partitioned dataset: its manifest .* is "
        r"missing",
    ):
        open_partitioned(tmp_path / "elsewhere")


def _read_as(ds, index: int, stem: str):
    """Read part ``index`` of ``ds`` from the file ``users/<stem>.parquet``."""
    from dataclasses import replace

    return ds._read_part(replace(ds.parts[index], file=f"users/{stem}.parquet"))


def test_a_manifest_that_is_not_ours_is_refused(tmp_path):
    train, test = _split()
    write_partitioned(tmp_path / "ds", train, test)
    (tmp_path / "ds" / LAYOUT_FILE).write_text(json.dumps({"format": "other"}))
    with pytest.raises(InputError, match="not that of a partitioned dataset"):
        open_partitioned(tmp_path / "ds")


def test_bad_arguments_name_the_parameter(tmp_path):
    train, test = _split()
    with pytest.raises(InputError, match="'users_per_part'"):
        write_partitioned(tmp_path / "x", train, test, users_per_part=0)
    with pytest.raises(InputError, match="same shape"):
        write_partitioned(tmp_path / "x", train, test[:, :5])
    with pytest.raises(InputError, match="'user_ids'"):
        write_partitioned(tmp_path / "x", train, test, user_ids=np.arange(3))
    with pytest.raises(InputError, match="'train'"):
        write_partitioned(tmp_path / "x", train.toarray(), test)


def test_a_split_written_part_by_part_is_the_one_written_whole(tmp_path):
    from recoeval_tracking.data import PartitionedWriter

    train, test = _split()
    whole = write_partitioned(tmp_path / "whole", train, test, users_per_part=7)
    writer = PartitionedWriter(tmp_path / "parts", np.arange(11))
    assert not (tmp_path / "parts" / LAYOUT_FILE).exists()
    for lo in range(0, 23, 7):  # as a stream of user blocks would come
        writer.write_part(train[lo : lo + 7], test[lo : lo + 7], np.arange(lo, min(lo + 7, 23)))
    parts = writer.close()
    assert parts.manifest == whole.manifest
    np.testing.assert_array_equal(parts.item_train_users, whole.item_train_users)
    with pytest.raises(InputError, match="a part needs train and test of shape"):
        writer.write_part(train[:3], test[:3, :4], np.arange(3))


def _parquet_factors(path, A, layout, row_group_size=3):
    import pyarrow as pa
    import pyarrow.parquet as pq

    users = pa.array([f"u{i}" for i in range(A.shape[0])])
    if layout == "list":
        table = pa.table({"user": users, "factors": pa.array(list(A))})
    elif layout == "fixed":
        flat = pa.array(A.ravel())
        table = pa.table({"factors": pa.FixedSizeListArray.from_arrays(flat, A.shape[1])})
    else:
        table = pa.table({"user": users, **{f"f{j}": A[:, j] for j in range(A.shape[1])}})
    pq.write_table(table, path, row_group_size=row_group_size)


@pytest.mark.parametrize("layout", ["list", "fixed", "columns"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_parquet_factor_rows_are_read_by_row_group(tmp_path, layout, dtype):
    """User factors in Parquet: a list column or one column per factor, read by the row groups
    that hold the rows (groups of 3 rows here: ranges inside one group, across groups, at the
    ends), through a local path and through fsspec's memory file system (a remote store's
    code path, without a network)."""
    import fsspec

    A = (np.arange(44, dtype=np.float64).reshape(11, 4) / 7).astype(dtype)
    _parquet_factors(tmp_path / "u.parquet", A, layout)
    rows = FactorRows.open(tmp_path / "u.parquet")
    assert rows.shape == (11, 4) and np.dtype(rows.dtype) == dtype
    assert rows.groups == (0, 3, 6, 9, 11)
    for lo, hi in ((0, 11), (4, 5), (2, 7), (9, 11), (3, 6), (10, 11)):
        got = rows.read(lo, hi)
        assert got.dtype == dtype and got.flags.c_contiguous
        np.testing.assert_array_equal(got, A[lo:hi])
    with fsspec.open(f"memory://factors/{layout}-{np.dtype(dtype)}.parquet", "wb") as fh:
        fh.write((tmp_path / "u.parquet").read_bytes())
    remote = FactorRows.open(f"memory://factors/{layout}-{np.dtype(dtype)}.parquet")
    np.testing.assert_array_equal(remote.read(5, 9), A[5:9])


def test_a_parquet_file_that_is_not_a_factor_table_is_refused_with_its_columns(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"a": [1, 2], "b": [0.5, 1.5]}), tmp_path / "mixed.parquet")
    with pytest.raises(
        InputError,
        match=r"'user_factors'.*one list column of float32 or "
        r"float64.*mixed\.parquet.*a: int64",
    ):
        FactorRows.open(tmp_path / "mixed.parquet")
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(InputError, match=r"'user_factors'.*a Parquet file.*bad\.parquet"):
        FactorRows.open(tmp_path / "bad.parquet")
    with pytest.raises(InputError, match=r"'user_factors'.*an existing Parquet file"):
        FactorRows.open(tmp_path / "nope.parquet")
    pq.write_table(
        pa.table({"factors": pa.array([None, [1.0, 2.0]], pa.list_(pa.float64()))}),
        tmp_path / "nullfirst.parquet",
    )
    with pytest.raises(InputError, match=r"'user_factors'.*first row holds.*first list is null"):
        FactorRows.open(tmp_path / "nullfirst.parquet")
    ragged = pa.table({"factors": pa.array([[1.0, 2.0], [3.0], [4.0, 5.0]])})
    pq.write_table(ragged, tmp_path / "ragged.parquet")
    rows = FactorRows.open(tmp_path / "ragged.parquet")
    with pytest.raises(
        InputError,
        match=r"ragged\.parquet has a list of factors that is null "
        r"or not of length 2",
    ):
        rows.read(0, 3)
