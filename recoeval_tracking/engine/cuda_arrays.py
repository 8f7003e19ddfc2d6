"""Arrays that live on a GPU, as the ``cuda`` backend takes them: seen, described and viewed
without a copy to the host.

A *device array* is any object other than a numpy array that

* exports DLPack (``__dlpack__``) and says, through ``__dlpack_device__``, that its memory is on a
  CUDA device (``kDLCUDA`` = 2 or ``kDLCUDAManaged`` = 13): PyTorch CUDA tensors, CuPy, JAX...;
* or has the CUDA Array Interface (``__cuda_array_interface__``, read on the class so that a
  property which refuses, as PyTorch's does for a tensor that requires grad, is not run): CuPy,
  numba-cuda device arrays, RAPIDS...

:func:`device_view` gives an array of the backend's array library over the same memory: a CuPy
array (``cupy.from_dlpack`` or ``cupy.asarray`` of the interface: no copy, no transfer). Under
numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, no GPU) the "device" memory that the
interface points to is host memory, and the view is a numpy array over that pointer: still no
copy, so the tests can check that nothing was copied.

:func:`describe` reads only metadata (type, shape, dtype, device), never the values: an error
message about a GPU array never pulls it to the host.

This module imports numpy only; CuPy when a view is asked for on a GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "CUDA_DLPACK_DEVICES",
    "is_device_array",
    "device_view",
    "describe",
    "array_module",
    "gemm_block",
]

#: DLPack device types whose memory a CUDA kernel reads: kDLCUDA, kDLCUDAManaged.
CUDA_DLPACK_DEVICES = (2, 13)


def _dlpack_device(x: Any) -> int | None:
    """The DLPack device type of ``x``, or None when it exports none."""
    probe = getattr(type(x), "__dlpack_device__", None)
    if probe is None:
        return None
    try:
        return int(x.__dlpack_device__()[0])
    except Exception:  # noqa: BLE001 - an exporter that cannot say is not a device array
        return None


def is_device_array(x: Any) -> bool:
    """Whether ``x`` is an array in GPU memory (see the module docstring); reads no values."""
    if x is None or isinstance(x, np.ndarray):
        return False
    kind = _dlpack_device(x)
    if kind is not None:
        return kind in CUDA_DLPACK_DEVICES
    return hasattr(type(x), "__cuda_array_interface__")


def _simulated() -> bool:
    from numba.core import config

    return bool(config.ENABLE_CUDASIM)


def array_module() -> Any:
    """The array library of device views: CuPy on a GPU, numpy under the simulator."""
    if _simulated():
        return np
    import cupy

    return cupy


class _HostInterface:
    """The simulator's stand-in: the CUDA Array Interface of ``owner`` read as numpy's array
    interface (the same pointer, shape, strides and type), ``owner`` kept alive."""

    def __init__(self, owner: Any, cai: dict[str, Any]) -> None:
        self.owner = owner
        self.__array_interface__ = {
            "shape": tuple(cai["shape"]),
            "typestr": cai["typestr"],
            "data": tuple(cai["data"]),
            "strides": cai.get("strides"),
            "version": 3,
        }


def device_view(x: Any) -> Any:
    """A CuPy array over the memory of device array ``x`` (no copy); under the simulator a
    numpy array over the pointer of its CUDA Array Interface.

    A PyTorch tensor that requires grad is detached first (the view shares its memory)."""
    if _simulated():
        cai = getattr(x, "__cuda_array_interface__", None)
        if cai is None:
            raise TypeError(
                f"{type(x).__name__} exports no __cuda_array_interface__: the CUDA "
                "simulator can view only those"
            )
        return np.asarray(_HostInterface(x, cai))
    import cupy

    if _dlpack_device(x) is not None:
        detach = getattr(x, "detach", None)
        return cupy.from_dlpack(detach() if callable(detach) else x)
    return cupy.asarray(x)


def describe(x: Any) -> str:
    """``a GPU array (<library>.<type>) of shape (..) and dtype ..``, from metadata only."""
    shape, dtype = getattr(x, "shape", None), getattr(x, "dtype", None)
    cai = None
    if shape is None or dtype is None:
        try:
            cai = x.__cuda_array_interface__
        except Exception:  # noqa: BLE001 - no interface: say what is known
            cai = None
    if cai is not None:
        shape, dtype = cai.get("shape"), np.dtype(cai.get("typestr", "|V0"))
    shape_text = tuple(int(d) for d in shape) if shape is not None else "unknown"
    return (
        f"a GPU array ({type(x).__module__.split('.')[0]}.{type(x).__name__}) of shape "
        f"{shape_text} and dtype {dtype}"
    )


def gemm_block(xp: Any, A: Any, B: Any, ones: bool, users: Any, out: Any) -> Any:
    """``out = [A[users], 1] @ B.T`` (the column of ones when ``ones``: item biases appended to
    ``B`` as its last factor, recometrics' rule, as :class:`~recoeval_tracking.scores.FactorScores`
    computes it on the host), with array module ``xp`` on arrays it owns; returns ``out``."""
    Ab = A[users]
    if ones:
        Ab = xp.hstack([Ab, xp.ones((Ab.shape[0], 1), dtype=Ab.dtype)])
    xp.matmul(Ab, B.T, out=out)
    return out
