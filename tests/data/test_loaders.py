"""Loaders: real MovieLens counts, id maps, column mappings and clear errors on bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from shared_paths import shared_file

from recoeval_tracking import InputError
from recoeval_tracking.data import (
    DATASETS,
    Interactions,
    from_dataframe,
    load_csv,
    load_dataset,
    load_movielens_1m,
    load_movielens_100k,
    load_movielens_latest,
    load_parquet,
)


def test_movielens_100k_counts():
    X = load_movielens_100k(shared_file("ml-100k", "u.data"))
    assert (X.n_users, X.n_items, X.nnz) == (943, 1682, 100_000)
    # the dataset README: ratings 1..5 with these counts, timestamps in this range
    vals, counts = np.unique(X.matrix.data, return_counts=True)
    assert vals.tolist() == [1, 2, 3, 4, 5]
    assert counts.tolist() == [6110, 11370, 27145, 34174, 21201]
    assert X.timestamps.data.min() == 874724710 and X.timestamps.data.max() == 893286638
    assert X.user_ids.tolist() == list(range(1, 944))
    assert X.matrix.has_canonical_format and X.matrix.dtype == np.float64


def test_movielens_100k_entries_match_file_lines():
    path = shared_file("ml-100k", "u.data")
    X = load_movielens_100k(path)
    # first line of u.data: "196\t242\t3\t881250949"
    first = path.read_text().splitlines()[0].split("\t")
    u, i = X.user_index(int(first[0]))[0], X.item_index(int(first[1]))[0]
    assert X.matrix[u, i] == float(first[2])
    assert X.timestamps[u, i] == int(first[3])


def test_movielens_latest_counts():
    X = load_movielens_latest(shared_file("ml-latest-small", "ratings.csv"))
    assert (X.n_users, X.n_items, X.nnz) == (610, 9724, 100_836)
    assert X.matrix.data.min() == 0.5 and X.matrix.data.max() == 5.0
    assert X.timestamps.data.min() == 828124615


def test_movielens_1m_subset_counts():
    X = load_movielens_1m(shared_file("ml-1m-subset-users-1-2999", "ratings.dat"))
    assert (X.n_users, X.n_items, X.nnz) == (2999, 3615, 487_650)
    vals, counts = np.unique(X.matrix.data, return_counts=True)
    assert counts.tolist() == [27472, 53838, 127216, 170579, 108545]
    # "1::1193::5::978300760" is the file's first line
    assert X.matrix[X.user_index(1)[0], X.item_index(1193)[0]] == 5.0


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_csv_ids_sorted_and_mapped(tmp_path):
    p = _write(tmp_path, "r.csv", "u,i,r,t\nzed,b,1,10\namy,a,2,20\nzed,a,3,30\n")
    X = load_csv(p, {"user": "u", "item": "i", "value": "r", "timestamp": "t"})
    assert X.user_ids.tolist() == ["amy", "zed"]
    assert X.item_ids.tolist() == ["a", "b"]
    assert X.matrix.toarray().tolist() == [[2.0, 0.0], [3.0, 1.0]]
    assert X.timestamps.toarray().tolist() == [[20, 0], [30, 10]]
    df = X.to_dataframe()
    assert sorted(zip(df.user, df.item, df.value)) == [
        ("amy", "a", 2.0),
        ("zed", "a", 3.0),
        ("zed", "b", 1.0),
    ]
    assert X.user_index(["zed", "amy"]).tolist() == [1, 0]
    with pytest.raises(InputError, match="unknown ids"):
        X.user_index(["bob"])


def test_tsv_without_value_gives_ones(tmp_path):
    p = _write(tmp_path, "r.tsv", "1\t5\n2\t5\n2\t7\n")
    X = load_csv(p, {"user": 0, "item": 1}, sep="\t", header=False)
    assert X.matrix.toarray().tolist() == [[1.0, 0.0], [1.0, 1.0]]
    assert X.timestamps is None


def test_duplicate_policies(tmp_path):
    p = _write(tmp_path, "d.csv", "user,item,value,timestamp\n1,1,2,5\n1,1,4,3\n1,1,1,4\n2,1,3,1\n")
    with pytest.raises(InputError, match=r"duplicate \(user, item\) pair \(1, 1\) at line 3"):
        load_csv(p)
    expected = {"sum": (7.0, 5), "max": (4.0, 5), "last": (1.0, 4)}
    for policy, (value, ts) in expected.items():
        X = load_csv(p, duplicates=policy)
        assert X.nnz == 2
        assert X.matrix[0, 0] == value and X.timestamps[0, 0] == ts
        rep = X.reports[-1]
        assert rep.step == "duplicates" and rep.details["pairs_merged"] == 2
        assert rep.interactions_removed == 2


def test_parquet_and_dataframe_agree(tmp_path):
    df = pd.DataFrame({"uid": [3, 1, 3], "iid": [10, 10, 20], "score": [1.0, 2.0, 3.0]})
    p = tmp_path / "x.parquet"
    df.to_parquet(p)
    a = load_parquet(p, {"user": "uid", "item": "iid", "value": "score"})
    b = from_dataframe(df, {"user": "uid", "item": "iid", "value": "score"})
    assert a.fingerprint() == b.fingerprint()
    assert b.matrix.toarray().tolist() == [[2.0, 0.0], [1.0, 3.0]]


def test_load_dataset_registry(tmp_path):
    assert set(DATASETS) == {
        "synthetic",
        "movielens_100k",
        "movielens_1m",
        "movielens_latest",
        "csv",
        "parquet",
        "parquet_partitioned",
        "dataframe",
    }
    X = load_dataset("synthetic", n_users=50, n_items=40, seed=3)
    assert isinstance(X, Interactions) and X.n_users == 50
    with pytest.raises(InputError, match="'kind' parameter of load_dataset"):
        load_dataset("nope")


# ----------------------------------------------------------------------------- bad input
def test_missing_file_named(tmp_path):
    with pytest.raises(InputError, match="no such file") as e:
        load_csv(tmp_path / "absent.csv")
    assert "absent.csv" in str(e.value)


@pytest.mark.parametrize(
    "name, text, columns, match",
    [
        pytest.param(
            "semi.csv",
            "user;item;value\n1;2;3\n",
            None,
            r"line 1 of .*semi\.csv.*sep=';'",
            id="wrong_separator_named",
        ),
        pytest.param(
            "r.csv",
            "userId,movieId,rating\n1,2,3\n",
            {"user": "userId", "item": "movieId", "timestamp": "timestamp"},
            r"\['timestamp'\] not found in the header",
            id="missing_column_named",
        ),
        pytest.param(
            "ratings.csv",
            "\n".join(
                ["userId,movieId,rating"] + [f"{u},{u + 1},4" for u in range(15)] + ["7,8,good"]
            )
            + "\n",
            {"user": "userId", "item": "movieId", "value": "rating"},
            r"'good' in column 'rating' at line 17 of .*ratings\.csv",
            id="non_numeric_value_names_line_and_column",
        ),
        pytest.param(
            "r.csv",
            "user,item\n1,2\n,3\n",
            None,
            r"missing \(NaN\) user id in column 'user' at line 3",
            id="nan_id_names_line",
        ),
    ],
)
def test_a_bad_file_is_named_with_the_place(tmp_path, name, text, columns, match):
    p = _write(tmp_path, name, text)
    with pytest.raises(InputError, match=match):
        load_csv(p) if columns is None else load_csv(p, columns)


def test_empty_data(tmp_path):
    p = _write(tmp_path, "e.csv", "user,item\n")
    with pytest.raises(InputError, match="empty"):
        load_csv(p)
    with pytest.raises(InputError, match="empty"):
        from_dataframe(pd.DataFrame({"user": [], "item": []}))


def test_interactions_rejects_bad_containers():
    m = sp.csr_array(np.eye(2))
    with pytest.raises(InputError, match="'user_ids' parameter of Interactions"):
        Interactions(m, np.arange(3), np.arange(2))
    wide = sp.csr_array(np.ones((2, 3)))
    with pytest.raises(InputError) as err:
        Interactions(wide, np.arange(2), np.arange(2))
    text = str(err.value)
    assert "'item_ids' parameter of Interactions" in text
    assert "a 1-d array of length 3 (one id per column)" in text and "shape (2,)" in text
    ts = sp.csr_array(np.ones((2, 2)))
    with pytest.raises(InputError, match="same sparsity pattern"):
        Interactions(m, np.arange(2), np.arange(2), timestamps=ts)
