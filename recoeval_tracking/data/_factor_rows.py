"""A ``.npy`` matrix read by row range on any fsspec file system: the users' factors of a
partitioned dataset, each Dask task reading only its own rows."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import InputError, param_error
from ._partitioned import _fs

__all__ = ["FactorRows"]


@dataclass(frozen=True)
class FactorRows:
    """A ``.npy`` matrix read by row range (``shape``, ``dtype`` and the data offset from its
    header; rows ``[lo, hi)`` by one ranged read), on any fsspec file system.

    Made by :meth:`open`; small and picklable (a task holds it).
    """

    url: str
    shape: tuple[int, int]
    dtype: str
    offset: int
    storage_options: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def open(cls, url: str | os.PathLike, *, name: str = "user_factors",
             func: str = "evaluate_from_storage",
             storage_options: dict[str, Any] | None = None) -> FactorRows:
        """Read the header of the ``.npy`` file at ``url`` (C order, 2-d, float32 or float64)."""
        fmt = np.lib.format
        url = os.fspath(url)
        fs, path = _fs(url, storage_options)
        try:
            with fs.open(path, "rb") as fh:
                version = fmt.read_magic(fh)
                reader = fmt.read_array_header_1_0 if version == (1, 0) else \
                    fmt.read_array_header_2_0
                shape, fortran, dtype = reader(fh)
                offset = fh.tell()
        except FileNotFoundError:
            raise param_error(name, func, "an existing .npy file", f"{url!r}, which does not "
                              "exist", got_is_text=True) from None
        except ValueError as err:
            raise param_error(name, func, "a .npy file", f"{url!r}, which is not one ({err})",
                              got_is_text=True) from None
        if len(shape) != 2 or fortran or np.dtype(dtype) not in (np.float32, np.float64):
            raise param_error(name, func, "a 2-d C-order float32 or float64 .npy matrix",
                              f"{url!r} of shape {shape}, dtype {dtype}"
                              f"{' in Fortran order' if fortran else ''}", got_is_text=True)
        return cls(url, (int(shape[0]), int(shape[1])), np.dtype(dtype).str, int(offset),
                   dict(storage_options or {}))

    def read(self, lo: int, hi: int) -> np.ndarray:
        """Rows ``[lo, hi)`` as a new array."""
        dtype = np.dtype(self.dtype)
        row = self.shape[1] * dtype.itemsize
        fs, path = _fs(self.url, self.storage_options)
        try:
            with fs.open(path, "rb") as fh:
                fh.seek(self.offset + lo * row)
                buf = fh.read((hi - lo) * row)
        except FileNotFoundError:
            raise InputError(f"The factor file {self.url} is missing (rows {lo}..{hi - 1} "
                             "were to be read from it).") from None
        if len(buf) != (hi - lo) * row:
            raise InputError(f"The factor file {self.url} is truncated: rows {lo}..{hi - 1} of "
                             f"its {self.shape[0]} need {(hi - lo) * row} bytes, {len(buf)} "
                             "were read. Write it again (numpy.save).")
        return np.frombuffer(buf, dtype=dtype).reshape(hi - lo, self.shape[1]).copy()
