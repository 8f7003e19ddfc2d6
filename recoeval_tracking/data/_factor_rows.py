"""A factor matrix read by row range on any fsspec file system: the users' factors of a
partitioned dataset, each Dask task reading only its own rows.

Two formats: a ``.npy`` matrix (C order, float32 or float64), read by one ranged read of its
bytes; or a Parquet file (``.parquet``), one row per user in the dataset's user order, with the
factors in one list column (each a list of ``d`` floats) or in ``d`` float columns (a column
named ``user`` is left aside), read by the row groups that hold the rows. :func:`read_whole`
reads a whole file (the item factors every task needs; a factors file of the app's models).

A factor file is not part of the partitioned layout (:mod:`._partitioned`, the interactions
split by user): it follows the layout's user order and takes only its file-system lookup from
there.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import InputError, param_error
from ._partitioned import _fs

__all__ = ["FactorRows", "read_whole", "PARQUET_SUFFIXES"]

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
