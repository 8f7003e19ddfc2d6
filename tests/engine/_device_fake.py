"""A stand-in for a GPU array: host memory behind the CUDA Array Interface, that counts every
conversion to a numpy array (``__array__``), so a test can assert that none was made."""

from __future__ import annotations

from typing import Any

import numpy as np


class FakeDeviceArray:
    """Exposes ``data`` (a numpy array it keeps) through ``__cuda_array_interface__`` only:
    no ``shape`` or ``dtype`` attribute, so its metadata is read from the interface. Under numba's
    CUDA simulator the backend's device views of it are views of ``data``."""

    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        self.host_copies = 0

    @property
    def __cuda_array_interface__(self) -> dict[str, Any]:
        return {
            "shape": self.data.shape,
            "typestr": self.data.dtype.str,
            "data": (self.data.__array_interface__["data"][0], False),
            "strides": None if self.data.flags.c_contiguous else self.data.strides,
            "version": 3,
        }

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        self.host_copies += 1
        return np.asarray(self.data, dtype=dtype)
