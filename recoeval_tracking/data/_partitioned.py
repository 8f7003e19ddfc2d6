"""What a Dask task reads from storage, each task only its own range: a split stored by user in
Parquet parts (the partitioned layout, below) and the factor matrices beside it, read by row
range (:class:`FactorRows`).

Layout of a partitioned dataset (a folder on any fsspec file system: a local or shared disk,
``file://``, ``s3://``, ``gs://``; credentials come from fsspec's usual environment and are never
written anywhere)::

    <root>/_recoeval_layout.json   the manifest: sizes, the parts in user order with their counts
    <root>/items.parquet           the item side: ``item`` (the dataset's own item ids, in column
                                   order) and ``train_users`` (train users of each item)
    <root>/users/part-000000.parquet ...
                                   one row per user, users in row order: ``user`` (the dataset's
                                   own id), ``train_items`` / ``test_items`` (lists of item ids)
                                   and ``train_values`` / ``test_values`` (lists of float64)

Each part holds a contiguous range of users; a user's train and test rows are in one row of
one part, so a task reads only its parts. The manifest gives, per part, its users and its train
and test entries: that is all a client needs to cut shards (without opening a part). The ids
are the dataset's own: a worker maps item ids to columns with the one item map of
``items.parquet``; user rows are global positions (part offsets plus the row in the part).

:func:`write_partitioned` writes the layout from a split (two :class:`Interactions` or two CSR
matrices with their id maps); :func:`open_partitioned` reads the manifest and the item side;
:meth:`PartitionedDataset.read_parts` reads a range of parts as CSR rows. A missing or
unreadable file is an :class:`~recoeval_tracking.InputError` naming the file.

Factor files (:class:`FactorRows`, :func:`read_whole`) follow the layout's user order but are
not part of it: a ``.npy`` matrix (C order, float32 or float64), read by one ranged read of its
bytes; or a Parquet file (``.parquet``), one row per user in the dataset's user order, with the
factors in one list column (each a list of ``d`` floats) or in ``d`` float columns (a column
named ``user`` is left aside), read by the row groups that hold the rows. :func:`read_whole`
reads a whole file (the item factors every task needs; a factors file of the app's models).
"""

from __future__ import annotations

import hashlib
import json
import os
import posixpath
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import InputError, checked_sparse, param_error, relative_under
from ._manifest import check_manifest
from ._relevance import Relevance

__all__ = [
    "write_partitioned",
    "PartitionedWriter",
    "open_partitioned",
    "PartitionedDataset",
    "PartInfo",
    "load_parquet_partitioned",
    "LAYOUT_FILE",
    "ITEMS_FILE",
    "LAYOUT_FORMAT",
    "FactorRows",
    "read_whole",
    "PARQUET_SUFFIXES",
]

#: The manifest's file name inside a partitioned dataset.
LAYOUT_FILE = "_recoeval_layout.json"
#: The item side of a partitioned dataset.
ITEMS_FILE = "items.parquet"
#: The ``format`` field of the manifest.
LAYOUT_FORMAT = "recoeval-partitioned-split"
_VERSION = 1
_COLUMNS = ("user", "train_items", "train_values", "test_items", "test_values")
_REWRITE = "Rewrite the dataset with recoeval_tracking.data.write_partitioned, or restore the file."


def _fs(url: str, storage_options: dict[str, Any] | None) -> tuple[Any, str]:
    """The fsspec file system of ``url`` and the path in it (credentials: fsspec's own)."""
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec comes with dask and pandas' extras
        raise InputError(
            "Partitioned datasets need fsspec: pip install 'recoeval_tracking[dask]'."
        ) from None
    return fsspec.core.url_to_fs(str(url), **dict(storage_options or {}))


def _join(root: str, *names: str) -> str:
    return posixpath.join(root.rstrip("/") or "/", *names)


def _read_table(fs: Any, path: str, columns: list[str], what: str, holds: str = "") -> Any:
    """The ``columns`` of the Parquet file ``path``; a missing file, or one that does not read as
    Parquet, is an :class:`InputError` that starts with ``what`` (the file and its dataset),
    says what the file ``holds`` when given, and how to mend it."""
    import pyarrow.parquet as pq

    try:
        with fs.open(path, "rb") as fh:
            return pq.read_table(fh, columns=columns)
    except FileNotFoundError:
        raise InputError(f"{what} is missing{holds}. {_REWRITE}") from None
    except Exception as err:  # noqa: BLE001 - pyarrow raises several types on bad input
        raise InputError(
            f"{what} could not be read as Parquet ({type(err).__name__}: "
            f"{' '.join(str(err).split())[:200]}); it is corrupt or truncated. {_REWRITE}"
        ) from None


def _csr_part(X: sp.csr_array, lo: int, hi: int, item_ids: np.ndarray) -> tuple[Any, Any]:
    """List arrays ``(items, values)`` of rows ``[lo, hi)`` of ``X`` (item ids, not columns)."""
    import pyarrow as pa

    start, end = int(X.indptr[lo]), int(X.indptr[hi])
    offsets = np.asarray(X.indptr[lo : hi + 1], dtype=np.int64) - start
    if end - start >= 2**31:
        raise InputError(
            "write_partitioned: a part holds 2**31 entries or more; lower 'users_per_part'."
        )
    offsets = pa.array(offsets.astype(np.int32))
    items = pa.ListArray.from_arrays(offsets, pa.array(item_ids[X.indices[start:end]]))
    values = pa.ListArray.from_arrays(
        offsets, pa.array(np.asarray(X.data[start:end], dtype=np.float64))
    )
    return items, values


def _unwrap(x: Any, name: str) -> tuple[sp.csr_array, np.ndarray | None, np.ndarray | None]:
    if hasattr(x, "matrix") and not sp.issparse(x):
        return sp.csr_array(x.matrix), np.asarray(x.user_ids), np.asarray(x.item_ids)
    if not sp.issparse(x):
        raise param_error(
            name,
            "write_partitioned",
            "an Interactions or a scipy.sparse CSR matrix (users x items)",
            x,
        )
    X = checked_sparse(x, name, "write_partitioned").copy()  # checked before scipy reads it
    X.sum_duplicates()
    X.sort_indices()
    return X, None, None


def _first_ids(size: int, *candidates: Any) -> np.ndarray:
    """The first ids given (the argument's, the train's, the test's), else ``0..size-1``."""
    for ids in candidates:
        if ids is not None:
            return np.asarray(ids)
    return np.arange(size, dtype=np.int64)


def write_partitioned(
    path: str | os.PathLike,
    train: Any,
    test: Any,
    *,
    user_ids: Any = None,
    item_ids: Any = None,
    users_per_part: int = 100_000,
    row_group_users: int | None = None,
    name: str = "",
    storage_options: dict[str, Any] | None = None,
) -> PartitionedDataset:
    """Write a train/test split as a partitioned dataset (the layout of this module).

    Parameters
    ----------
    path : str or os.PathLike
        The dataset's folder (created; a local path or an fsspec URL such as ``s3://b/x``).
    train, test : Interactions or scipy.sparse matrix
        The split, users x items, with the same shape (and id maps, for Interactions).
    user_ids, item_ids : array-like, optional
        The dataset's own ids of the rows and columns (default: those of the Interactions,
        else ``0..m-1`` / ``0..n-1``).
    users_per_part : int
        Users per part file (a Dask task reads one or more whole parts).
    row_group_users : int, optional
        Users per Parquet row group (default: the part's).
    name : str
        A label kept in the manifest, with the relevance rule of ``test`` (an Interactions'
        ``relevance``; a matrix: every entry a positive), which the dataset's readers apply.
    storage_options : dict, optional
        Passed to fsspec (never written to the dataset).

    Returns
    -------
    PartitionedDataset
        The dataset, opened.

    See Also
    --------
    PartitionedWriter : the same layout written one part at a time (data bigger than memory).
    """
    func = "write_partitioned"
    A, a_users, a_items = _unwrap(train, "train")
    T, t_users, t_items = _unwrap(test, "test")
    if A.shape != T.shape:
        raise InputError(
            f"The 'train' and 'test' matrices passed to {func} must have the same "
            f"shape. Got train {A.shape} and test {T.shape} instead."
        )
    m, n = A.shape
    users = _first_ids(m, user_ids, a_users, t_users)
    items = _first_ids(n, item_ids, a_items, t_items)
    if users.shape != (m,):
        raise param_error("user_ids", func, f"one id per row ({m})", users)
    if (
        isinstance(users_per_part, bool)
        or not isinstance(users_per_part, int)
        or users_per_part < 1
    ):
        raise param_error("users_per_part", func, "an int >= 1", users_per_part)
    writer = PartitionedWriter(
        path,
        items,
        name=name,
        row_group_users=row_group_users,
        storage_options=storage_options,
        func=func,
        relevance=getattr(test, "relevance", None),
    )
    for lo in range(0, max(m, 1), users_per_part):
        hi = min(lo + users_per_part, m)
        writer.write_part(A[lo:hi], T[lo:hi], users[lo:hi])
    return writer.close()


class PartitionedWriter:
    """Write a partitioned dataset one part at a time, users in row order: for a split bigger
    than memory (each part is a CSR block of consecutive users, columns in the order of
    ``item_ids``). :meth:`close` writes the item side and the manifest, and opens the dataset;
    a writer not closed leaves no manifest, so the folder is never read as a dataset.

    Parameters
    ----------
    path : str or os.PathLike
        The dataset's folder or fsspec URL.
    item_ids : array-like
        The dataset's own item ids, one per column.
    name, row_group_users, storage_options
        As for :func:`write_partitioned`.
    relevance : Relevance, optional
        The relevance rule kept in the manifest (default: every entry a positive).
    """

    def __init__(
        self,
        path: str | os.PathLike,
        item_ids: Any,
        *,
        name: str = "",
        row_group_users: int | None = None,
        storage_options: dict[str, Any] | None = None,
        func: str = "PartitionedWriter",
        relevance: Relevance | None = None,
    ) -> None:
        self.path, self.func, self.relevance = path, func, relevance or Relevance()
        self.items = np.asarray(item_ids)
        if self.items.ndim != 1:
            raise param_error("item_ids", func, "a 1-d array of item ids", self.items)
        self.name, self.row_group_users = str(name or ""), row_group_users
        self.storage_options = dict(storage_options or {})
        self.fs, self.root = _fs(os.fspath(path), storage_options)
        self.fs.makedirs(_join(self.root, "users"), exist_ok=True)
        self.digest = hashlib.sha256()
        self.parts: list[dict[str, Any]] = []
        self.counts = np.zeros(self.items.shape[0], dtype=np.int64)
        self.sizes = {
            "n_users": 0,
            "train_users": 0,
            "test_users": 0,
            "train_interactions": 0,
            "test_interactions": 0,
        }

    def write_part(self, train: Any, test: Any, user_ids: Any) -> None:
        """Append the next part: ``train`` and ``test`` (CSR, users x items) of the users
        ``user_ids`` (the dataset's own ids, following the previous part's)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        A, _, _ = _unwrap(train, "train")
        T, _, _ = _unwrap(test, "test")
        users = np.asarray(user_ids)
        n = self.items.shape[0]
        if A.shape != T.shape or A.shape[1] != n or users.shape != (A.shape[0],):
            raise InputError(
                f"{self.func}: a part needs train and test of shape (users, {n}) "
                f"and one user id per row. Got train {A.shape}, test {T.shape} and "
                f"{users.shape[0] if users.ndim == 1 else users.shape} user ids "
                "instead."
            )
        m = A.shape[0]
        tr_items, tr_values = _csr_part(A, 0, m, self.items)
        te_items, te_values = _csr_part(T, 0, m, self.items)
        table = pa.table(
            {
                "user": pa.array(users),
                "train_items": tr_items,
                "train_values": tr_values,
                "test_items": te_items,
                "test_values": te_values,
            }
        )
        rel = f"users/part-{len(self.parts):06d}.parquet"
        with self.fs.open(_join(self.root, rel), "wb") as fh:
            pq.write_table(table, fh, row_group_size=self.row_group_users or max(m, 1))
        self.parts.append({"file": rel, "users": m, "train": int(A.nnz), "test": int(T.nnz)})
        for arr in (A.indptr, A.indices, T.indptr, T.indices):
            self.digest.update(np.asarray(arr, dtype=np.int64).tobytes())
        self.digest.update(np.asarray(A.data, np.float64).tobytes())
        self.digest.update(np.asarray(T.data, np.float64).tobytes())
        self.counts += np.bincount(A.indices, minlength=n).astype(np.int64)
        sizes = self.sizes
        sizes["n_users"] += m
        sizes["train_users"] += int((np.diff(A.indptr) > 0).sum())
        sizes["test_users"] += int((np.diff(T.indptr) > 0).sum())
        sizes["train_interactions"] += int(A.nnz)
        sizes["test_interactions"] += int(T.nnz)

    def close(self) -> PartitionedDataset:
        """Write the item side and, last, the manifest; return the dataset opened."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        items = self.items
        with self.fs.open(_join(self.root, ITEMS_FILE), "wb") as fh:
            pq.write_table(
                pa.table({"item": pa.array(items), "train_users": pa.array(self.counts)}), fh
            )
        self.digest.update(
            items.astype(str).tobytes()
            if items.dtype.kind in "OUS"
            else np.asarray(items, dtype=np.int64).tobytes()
        )
        manifest = {
            "format": LAYOUT_FORMAT,
            "version": _VERSION,
            "name": self.name,
            **self.sizes,
            "n_items": int(items.shape[0]),
            "fingerprint": self.digest.hexdigest()[:16],
            "parts": self.parts,
            "relevance": self.relevance.record(),
        }
        with self.fs.open(_join(self.root, LAYOUT_FILE), "w") as fh:  # last: marks it done
            fh.write(json.dumps(manifest, indent=1))
        return open_partitioned(self.path, storage_options=self.storage_options)


@dataclass(frozen=True)
class PartInfo:
    """One part of a partitioned dataset: its file (relative to the root), its first global
    user row ``lo``, and its users and train and test entries."""

    file: str
    lo: int
    users: int
    train: int
    test: int


@dataclass(eq=False)
class PartitionedDataset:
    """A partitioned dataset opened by :func:`open_partitioned`: the manifest and the item side
    (item ids in column order, train users per item), never the users' rows.

    It is small and picklable (a Dask task or a scattered input holds it); the file system is
    rebuilt from ``url`` and the storage options where it is used. Its ``repr`` shows neither.
    """

    url: str
    manifest: dict[str, Any]
    item_ids: np.ndarray
    item_train_users: np.ndarray
    storage_options: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        lo, parts, where = 0, [], f"The manifest {LAYOUT_FILE} of {self.url}"
        for p in self.manifest["parts"]:  # a part's file must stay in users/
            parts.append(
                PartInfo(
                    relative_under(str(p["file"]), "users", what=where),
                    lo,
                    int(p["users"]),
                    int(p["train"]),
                    int(p["test"]),
                )
            )
            lo += int(p["users"])
        self.parts: list[PartInfo] = parts
        self._lookup: Any = None

    def __repr__(self) -> str:
        return (
            f"PartitionedDataset({self.url!r}, {self.n_users} users x {self.n_items} items, "
            f"{len(self.parts)} parts)"
        )

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_lookup"] = None
        return state

    @property
    def n_users(self) -> int:
        return int(self.manifest["n_users"])

    @property
    def n_items(self) -> int:
        return int(self.manifest["n_items"])

    @property
    def name(self) -> str:
        return str(self.manifest.get("name") or "")

    @property
    def relevance(self) -> Relevance:
        """The relevance rule of the stored split (the manifest's; the default before it was
        recorded)."""
        return Relevance.from_record(self.manifest.get("relevance"))

    @property
    def popularity(self) -> tuple[np.ndarray, int]:
        """``(train users per item, users with a train entry)``, as
        :func:`recoeval_tracking.metrics.beyond.train_popularity` of the whole train matrix."""
        return self.item_train_users, int(self.manifest["train_users"])

    def path_of(self, part: PartInfo) -> str:
        """The full path (URL) of a part's file."""
        return _join(self.url, part.file)

    def check_files(self) -> None:
        """Raise :class:`InputError` naming the first part file that is missing (one listing
        of the ``users`` folder; no part is opened)."""
        fs, root = _fs(self.url, self.storage_options)
        folder = _join(root, "users")
        try:
            present = {posixpath.basename(str(p).rstrip("/")) for p in fs.ls(folder, detail=False)}
        except FileNotFoundError:
            present = set()
        for part in self.parts:
            if posixpath.basename(part.file) not in present:
                raise InputError(
                    f"The part file {self.path_of(part)} of the partitioned dataset {self.url} "
                    f"is missing (the manifest {LAYOUT_FILE} lists {len(self.parts)} parts; "
                    f"this one holds users {part.lo}..{part.lo + part.users - 1}). {_REWRITE}"
                )

    def _item_lookup(self) -> Any:
        if self._lookup is None:
            import pandas as pd

            self._lookup = pd.Index(self.item_ids)
        return self._lookup

    def read_parts(self, first: int, last: int) -> tuple[sp.csr_array, sp.csr_array, np.ndarray]:
        """Train and test rows (CSR with the dataset's columns) and user ids of parts
        ``[first, last)``: users ``parts[first].lo`` up to the end of part ``last - 1``."""
        trains, tests, ids = [], [], []
        for part in self.parts[first:last]:
            tr, te, u = self._read_part(part)
            trains.append(tr)
            tests.append(te)
            ids.append(u)
        train = sp.csr_array(sp.vstack(trains, format="csr")) if len(trains) > 1 else trains[0]
        test = sp.csr_array(sp.vstack(tests, format="csr")) if len(tests) > 1 else tests[0]
        return train, test, np.concatenate(ids) if len(ids) > 1 else ids[0]

    def _read_part(self, part: PartInfo) -> tuple[sp.csr_array, sp.csr_array, np.ndarray]:
        where = self.path_of(part)
        fs, root = _fs(self.url, self.storage_options)
        table = _read_table(
            fs,
            _join(root, part.file),
            list(_COLUMNS),
            f"The part file {where} of the partitioned dataset {self.url}",
            f" (it holds users {part.lo}..{part.lo + part.users - 1})",
        )
        if table.num_rows != part.users:
            raise InputError(
                f"The part file {where} of the partitioned dataset {self.url} holds "
                f"{table.num_rows} users where the manifest {LAYOUT_FILE} says {part.users}; "
                f"the file was replaced or truncated. {_REWRITE}"
            )
        users = table.column("user").to_numpy()
        mats = []
        for role, expected in (("train", part.train), ("test", part.test)):
            items = table.column(f"{role}_items").combine_chunks()
            values = table.column(f"{role}_values").combine_chunks()
            offsets = np.asarray(items.offsets, dtype=np.int64)
            ids = items.flatten().to_numpy(zero_copy_only=False)
            data = np.asarray(values.flatten().to_numpy(zero_copy_only=False), dtype=np.float64)
            if (
                ids.shape[0] != expected
                or data.shape != ids.shape
                or not np.array_equal(np.asarray(values.offsets, dtype=np.int64), offsets)
            ):
                raise InputError(
                    f"The part file {where} of the partitioned dataset {self.url} holds "
                    f"{ids.shape[0]} {role} entries where the manifest {LAYOUT_FILE} says "
                    f"{expected} (or its item and value lists differ in length). {_REWRITE}"
                )
            cols = self._item_lookup().get_indexer(ids)
            if np.any(cols < 0):
                bad = ids[cols < 0][:3].tolist()
                raise InputError(
                    f"The part file {where} of the partitioned dataset {self.url} names "
                    f"{int(np.sum(cols < 0))} {role} items missing from {ITEMS_FILE} (e.g. "
                    f"{bad}). {_REWRITE}"
                )
            X = sp.csr_array(
                (
                    data,
                    cols.astype(np.int32 if self.n_items < 2**31 else np.int64),
                    offsets - offsets[0],
                ),
                shape=(part.users, self.n_items),
            )
            X.sort_indices()
            mats.append(X)
        return mats[0], mats[1], users

    def load(self) -> tuple[Any, Any]:
        """The whole split in memory, as two :class:`Interactions` (train, test) sharing the
        dataset's id maps (the user side of every part: for small data and checks)."""
        from ._interactions import Interactions

        self.check_files()
        train, test, users = self.read_parts(0, len(self.parts))
        name = self.name or self.url
        return (
            Interactions(train, users, self.item_ids, name=name, relevance=self.relevance),
            Interactions(test, users, self.item_ids, name=name, relevance=self.relevance),
        )

    def stats(self) -> dict[str, Any]:
        """Sizes from the manifest (no part is read)."""
        cells = self.n_users * self.n_items
        nnz = int(self.manifest["train_interactions"]) + int(self.manifest["test_interactions"])
        return {
            "n_users": self.n_users,
            "n_items": self.n_items,
            "interactions": nnz,
            "train_interactions": int(self.manifest["train_interactions"]),
            "test_interactions": int(self.manifest["test_interactions"]),
            "density": float(nnz / cells) if cells else float("nan"),
            "parts": len(self.parts),
            "fingerprint": str(self.manifest["fingerprint"]),
        }


def open_partitioned(
    path: str | os.PathLike, *, storage_options: dict[str, Any] | None = None
) -> PartitionedDataset:
    """Open a partitioned dataset: read its manifest and its item side (nothing user-sized).

    Raises
    ------
    InputError
        The folder has no manifest, or the manifest or ``items.parquet`` cannot be read; the
        message names the file.
    """

    url = os.fspath(path)
    fs, root = _fs(url, storage_options)
    where = _join(url, LAYOUT_FILE)
    try:
        with fs.open(_join(root, LAYOUT_FILE), "r") as fh:
            manifest = json.loads(fh.read())
    except FileNotFoundError:
        raise InputError(
            f"{url} is not a partitioned dataset: its manifest {where} is missing. "
            "Write one with recoeval_tracking.data.write_partitioned (an "
            "unfinished write has no manifest)."
        ) from None
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(
            f"The manifest {where} of the partitioned dataset {url} is not valid "
            f"JSON ({err}). {_REWRITE}"
        ) from None
    if (
        not isinstance(manifest, dict)
        or manifest.get("format") != LAYOUT_FORMAT
        or not isinstance(manifest.get("parts"), list)
    ):
        raise InputError(
            f"The manifest {where} is not that of a partitioned dataset (format "
            f"{LAYOUT_FORMAT!r} with a list of parts). {_REWRITE}"
        )
    check_manifest(manifest, where, _REWRITE)
    items_where = _join(url, ITEMS_FILE)
    items = _read_table(
        fs,
        _join(root, ITEMS_FILE),
        ["item", "train_users"],
        f"The item file {items_where} of the partitioned dataset {url}",
    )
    item_ids = items.column("item").to_numpy(zero_copy_only=False)
    counts = np.asarray(items.column("train_users").to_numpy(), dtype=np.int64)
    if item_ids.shape[0] != int(manifest["n_items"]):
        raise InputError(
            f"The item file {items_where} holds {item_ids.shape[0]} items where the "
            f"manifest says {manifest['n_items']}. {_REWRITE}"
        )
    return PartitionedDataset(url, manifest, item_ids, counts, dict(storage_options or {}))


def load_parquet_partitioned(
    path: str | os.PathLike, *, duplicates: str = "error", name: str | None = None
) -> Any:
    """The ``parquet_partitioned`` dataset kind loaded whole: train and test together as one
    :class:`Interactions` (the union of the stored split).

    The app does not call this for ``dataset=parquet_partitioned``: it reads the stored split
    by reference (``backend=dask`` with a ``factors_file`` model) or whole
    (:meth:`PartitionedDataset.load`), and never splits it again.
    """
    from ._interactions import Interactions

    train, test = open_partitioned(path).load()
    both = sp.csr_array(train.matrix + test.matrix)
    both.sort_indices()
    return Interactions(
        both, train.user_ids, train.item_ids, name=name or train.name, relevance=train.relevance
    )


# ---------------------------------------------------------------------------------------------
# Factor files, read by row range
# ---------------------------------------------------------------------------------------------

#: File names read as Parquet (every other name as ``.npy``).
PARQUET_SUFFIXES = (".parquet", ".pq")


@dataclass(frozen=True)
class FactorRows:
    """A factor matrix read by row range, on any fsspec file system: a ``.npy`` file (``shape``,
    ``dtype`` and the data ``offset`` from its header; rows ``[lo, hi)`` by one ranged read) or a
    Parquet file (``columns``, and ``groups``: the first row of each row group).

    Made by :meth:`open`; small and picklable (a task holds it).
    """

    url: str
    shape: tuple[int, int]
    dtype: str
    offset: int
    storage_options: dict[str, Any] = field(default_factory=dict, repr=False)
    columns: tuple[str, ...] = ()
    groups: tuple[int, ...] = ()

    @classmethod
    def open(
        cls,
        url: str | os.PathLike,
        *,
        name: str = "user_factors",
        func: str = "evaluate_from_storage",
        storage_options: dict[str, Any] | None = None,
    ) -> FactorRows:
        """Read the header of the ``.npy`` file at ``url`` (C order, 2-d, float32 or float64),
        or the metadata of the Parquet file at ``url`` (``.parquet``)."""
        fmt = np.lib.format
        url = os.fspath(url)
        if url.lower().endswith(PARQUET_SUFFIXES):
            return _open_parquet(cls, url, name, func, dict(storage_options or {}))
        fs, path = _fs(url, storage_options)
        try:
            with fs.open(path, "rb") as fh:
                version = fmt.read_magic(fh)
                reader = (
                    fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
                )
                shape, fortran, dtype = reader(fh)
                offset = fh.tell()
        except FileNotFoundError:
            raise param_error(
                name,
                func,
                "an existing .npy file",
                f"{url!r}, which does not exist",
                got_is_text=True,
            ) from None
        except ValueError as err:
            raise param_error(
                name, func, "a .npy file", f"{url!r}, which is not one ({err})", got_is_text=True
            ) from None
        if len(shape) != 2 or fortran or np.dtype(dtype) not in (np.float32, np.float64):
            raise param_error(
                name,
                func,
                "a 2-d C-order float32 or float64 .npy matrix",
                f"{url!r} of shape {shape}, dtype {dtype}{' in Fortran order' if fortran else ''}",
                got_is_text=True,
            )
        return cls(
            url,
            (int(shape[0]), int(shape[1])),
            np.dtype(dtype).str,
            int(offset),
            dict(storage_options or {}),
        )

    def read(self, lo: int, hi: int) -> np.ndarray:
        """Rows ``[lo, hi)`` as a new array."""
        if self.columns:
            return _read_parquet(self, lo, hi)
        dtype = np.dtype(self.dtype)
        row = self.shape[1] * dtype.itemsize
        fs, path = _fs(self.url, self.storage_options)
        try:
            with fs.open(path, "rb") as fh:
                fh.seek(self.offset + lo * row)
                buf = fh.read((hi - lo) * row)
        except FileNotFoundError:
            raise InputError(
                f"The factor file {self.url} is missing (rows {lo}..{hi - 1} "
                "were to be read from it)."
            ) from None
        if len(buf) != (hi - lo) * row:
            raise InputError(
                f"The factor file {self.url} is truncated: rows {lo}..{hi - 1} of "
                f"its {self.shape[0]} need {(hi - lo) * row} bytes, {len(buf)} "
                "were read. Write it again (numpy.save)."
            )
        return np.frombuffer(buf, dtype=dtype).reshape(hi - lo, self.shape[1]).copy()


def read_whole(
    url: str | os.PathLike, *, name: str, func: str, storage_options: dict[str, Any] | None = None
) -> np.ndarray:
    """A whole array from a ``.npy`` file (any shape) or a Parquet factor file (as
    :meth:`FactorRows.open` reads one), on any fsspec file system; a missing or unreadable file
    is an :class:`~recoeval_tracking.InputError` naming ``name`` and the file."""
    url = os.fspath(url)
    if url.lower().endswith(PARQUET_SUFFIXES):
        rows = FactorRows.open(url, name=name, func=func, storage_options=storage_options)
        return rows.read(0, rows.shape[0])
    fs, path = _fs(url, storage_options)
    try:
        with fs.open(path, "rb") as fh:
            return np.load(fh, allow_pickle=False)
    except FileNotFoundError:
        raise param_error(
            name, func, "an existing .npy file", f"{url!r}, which does not exist", got_is_text=True
        ) from None
    except ValueError as err:
        raise param_error(
            name, func, "a .npy file", f"{url!r}, which is not one ({err})", got_is_text=True
        ) from None


def _open_parquet(
    cls: type[FactorRows], url: str, name: str, func: str, storage_options: dict[str, Any]
) -> FactorRows:
    """:meth:`FactorRows.open` of a Parquet file: its schema, row count and row groups."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    fs, path = _fs(url, storage_options)
    try:
        with fs.open(path, "rb") as fh:
            pf = pq.ParquetFile(fh)
            meta = pf.metadata
            schema = meta.schema.to_arrow_schema()
            fields = [f for f in schema if f.name != "user"]
            floats = (pa.float32(), pa.float64())
            lists = [f for f in fields if _is_list(f.type)]
            if len(fields) == 1 and lists and lists[0].type.value_type in floats:
                dtype = lists[0].type.value_type.to_pandas_dtype()
                width = _list_width(pf, lists[0])
                if width < 0:
                    raise param_error(
                        name,
                        func,
                        "a Parquet file of user factors whose first row holds its factors",
                        f"{url!r}, whose first list is null",
                        got_is_text=True,
                    )
            elif (
                fields
                and not lists
                and len({f.type for f in fields}) == 1
                and fields[0].type in floats
            ):
                dtype, width = fields[0].type.to_pandas_dtype(), len(fields)
            else:
                raise param_error(
                    name,
                    func,
                    "a Parquet file of user factors: one list column "
                    "of float32 or float64, or one float column per factor (all "
                    "of one type), besides an optional 'user' column",
                    f"{url!r} with columns {schema}",
                    got_is_text=True,
                )
    except FileNotFoundError:
        raise param_error(
            name,
            func,
            "an existing Parquet file",
            f"{url!r}, which does not exist",
            got_is_text=True,
        ) from None
    except (OSError, pa.ArrowException) as err:
        raise param_error(
            name, func, "a Parquet file", f"{url!r}, which is not one ({err})", got_is_text=True
        ) from None
    starts = np.concatenate(
        [[0], np.cumsum([meta.row_group(g).num_rows for g in range(meta.num_row_groups)])]
    )
    return cls(
        url,
        (int(meta.num_rows), int(width)),
        np.dtype(dtype).str,
        0,
        storage_options,
        tuple(f.name for f in fields),
        tuple(int(x) for x in starts),
    )


def _list_width(pf: Any, column: Any) -> int:
    """The length of the lists of ``column`` (a field of the open Parquet file ``pf``): from its
    type when the lists have a fixed size, else from its first row (-1 when that is null)."""
    import pyarrow as pa

    if pa.types.is_fixed_size_list(column.type):
        return int(column.type.list_size)
    if pf.metadata.num_rows == 0:
        return 0
    first = pf.read_row_group(0, columns=[column.name]).column(0)[0].as_py()
    return -1 if first is None else len(first)


def _read_parquet(rows: FactorRows, lo: int, hi: int) -> np.ndarray:
    """Rows ``[lo, hi)`` of a Parquet factor file: the row groups that hold them, then a slice."""
    import pyarrow.parquet as pq

    starts = np.asarray(rows.groups)
    first = max(int(np.searchsorted(starts, lo, side="right")) - 1, 0)
    last = int(np.searchsorted(starts, hi, side="left"))
    fs, path = _fs(rows.url, rows.storage_options)
    try:
        with fs.open(path, "rb") as fh:
            table = pq.ParquetFile(fh).read_row_groups(
                list(range(first, last)), columns=list(rows.columns)
            )
    except FileNotFoundError:
        raise InputError(
            f"The factor file {rows.url} is missing (rows {lo}..{hi - 1} were to be read from it)."
        ) from None
    dtype = np.dtype(rows.dtype)
    if _is_list(table.schema.field(0).type):
        column = table.column(0).combine_chunks()
        flat = column.flatten().to_numpy()
        if column.null_count or flat.shape[0] != len(column) * rows.shape[1]:
            raise InputError(
                f"The factor file {rows.url} has a list of factors that is null or "
                f"not of length {rows.shape[1]} in its row groups {first}..{last - 1}"
                f". Write every user's {rows.shape[1]} factors."
            )
        out = flat.astype(dtype, copy=False).reshape(-1, rows.shape[1])
    else:
        out = np.column_stack([table.column(c).to_numpy() for c in rows.columns]).astype(dtype)
    skip = lo - int(starts[first])
    if out.shape[0] < skip + hi - lo:
        raise InputError(
            f"The factor file {rows.url} holds {out.shape[0] + int(starts[first])} "
            f"rows where its metadata promised {rows.shape[0]}: rows {lo}..{hi - 1} "
            "cannot be read. Write it again."
        )
    return np.ascontiguousarray(out[skip : skip + hi - lo])


def _is_list(t: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_list(t) or pa.types.is_fixed_size_list(t) or pa.types.is_large_list(t))
