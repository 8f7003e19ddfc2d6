"""Factors and item biases handed over on a GPU: taken as they are with ``backend="cuda"``.

``A``, ``B`` and ``item_biases`` given as CuPy arrays, PyTorch CUDA tensors or any object with
``__cuda_array_interface__`` or a CUDA ``__dlpack__`` (see
:mod:`recoeval_tracking.engine.cuda_arrays`) become a :class:`DeviceFactorScores`: the ``cuda``
backend multiplies them on the device, block by block, and they are never copied to the host.

What is checked, from metadata only (no value is read, nothing is copied to the host):

* each array's number of dimensions (``A`` and ``B`` 2-d, ``item_biases`` 1-d) and dtype (a
  numeric type; float32 and float64 are taken as they are, other numeric types converted to
  float64 on the device, as the host path converts them);
* the shapes: ``A`` one row per user (test row), ``B`` one row per item (test column), the same
  number of factors in both, ``item_biases`` one value per item.

Finite values are not required, as for host factors: a user whose scores have a NaN is undefined
by the engine's NaN rule (``nan_score``), which the GPU kernel applies on the device.

Device copies: float32 and float64 factors in the dtype of the scores (float32 when both are) are
used in place; a factor of the other dtype is converted on the device; item biases are appended
to ``B`` as its last column on the device (a device copy of ``B``, recometrics' rule, as on the
host). A host (numpy) array given with a device array is copied to the device once.

With ``backend="cpu"`` a device array is refused with an error that names ``backend="cuda"`` and
the explicit host copy (``cupy.asnumpy(A)``, ``A.cpu().numpy()``): as CuPy and PyTorch refuse an
implicit transfer to the host, so does this package. A dense ``scores`` matrix on the GPU is
refused with either backend (give a ``scorer`` returning its rows).

Host copies made on purpose, each once and only when needed: the item factors when a metric
needs item vectors (ILS, diversity) and no ``item_features`` are given; a block of scores when an
option transforms scores on the host (``inf_scores="nan"``, sampled ``negatives``,
``ties="implicit"``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import InputError, param_error
from ..engine import cuda_arrays
from ..scores import FactorScores, ScoreSource, _float_array

__all__ = [
    "DeviceFactorScores",
    "DeviceBiasScores",
    "device_factors",
    "any_on_device",
    "refuse_device_scores",
]

_NUMERIC = "biuf"


def any_on_device(*arrays: Any) -> bool:
    """Whether one of ``arrays`` is a device array (metadata only)."""
    return any(cuda_arrays.is_device_array(x) for x in arrays)


class _DeviceScores(ScoreSource):
    """Scores ``[A, 1] @ B.T`` (the ones when ``_ones``) of device arrays, block by block."""

    A_device: Any
    B_device: Any
    _ones: bool

    def _setup(self, A_device: Any, B_device: Any, ones: bool, dtype: np.dtype, func: str) -> None:
        self.A_device, self.B_device = A_device, B_device
        self._ones, self.dtype, self.func = ones, np.dtype(dtype), func
        self.n_users, self.n_items = int(A_device.shape[0]), int(B_device.shape[0])

    def block(self, users: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """The block's scores computed on the device and copied to the host (for the options
        that transform scores on the host; the backend itself scores on the device)."""
        xp = cuda_arrays.array_module()
        S = xp.empty((len(users), self.n_items), dtype=self.dtype)
        cuda_arrays.gemm_block(xp, self.A_device, self.B_device, self._ones, xp.asarray(users), S)
        host = S if xp is np else S.get()
        if out is None:
            return np.ascontiguousarray(host)
        out[...] = host
        return out


class DeviceFactorScores(_DeviceScores, FactorScores):
    """``A @ B.T (+ item_biases)`` with the factors on a GPU: the ``cuda`` backend's GEMM reads
    :attr:`A_device` and :attr:`B_device` (item biases appended to ``B`` when ``_ones``).

    ``A`` and ``B`` (the host attributes of :class:`~recoeval_tracking.scores.FactorScores`) are
    host copies made on first use, for the host code that needs item vectors."""

    def __init__(
        self, A_device: Any, B_device: Any, ones: bool, dtype: np.dtype, func: str = "evaluate"
    ) -> None:
        self._setup(A_device, B_device, ones, dtype, func)
        self.item_biases = None
        self._host: dict[str, np.ndarray] = {}

    def _to_host(self, name: str) -> np.ndarray:
        if name not in self._host:
            x = getattr(self, f"{name}_device")
            self._host[name] = np.array(x) if isinstance(x, np.ndarray) else x.get()
        return self._host[name]

    @property
    def A(self) -> np.ndarray:  # type: ignore[override]
        """A host copy of the user factors (made once, on first use)."""
        return self._to_host("A")

    @property
    def B(self) -> np.ndarray:  # type: ignore[override]
        """A host copy of the item factors, biases appended (made once, on first use)."""
        return self._to_host("B")

    def _n_factors(self) -> int:  # read on the device: no host copy for a description
        return int(self.A_device.shape[1])

    def __repr__(self) -> str:
        return (
            f"DeviceFactorScores(users={self.n_users}, items={self.n_items}, "
            f"dtype={self.dtype}, item_biases={self._ones})"
        )


class DeviceBiasScores(_DeviceScores):
    """Item biases alone on a GPU (every user scores ``item_biases``): a GEMM of a column of
    ones by the biases, exact (``1 * b = b``)."""

    def __init__(self, bias: Any, n_users: int, func: str = "evaluate") -> None:
        xp = cuda_arrays.array_module()
        self._setup(xp.zeros((n_users, 0), dtype=bias.dtype), bias[:, None], True, bias.dtype, func)

    def describe(self) -> dict[str, Any]:
        return {"kind": "item_biases", "dtype": str(self.dtype)}


def _on_device(x: Any, name: str, ndim: int, func: str) -> Any:
    """``x`` as a device array of the backend's array module, its dimensions and dtype
    checked: a view of a device array, a copy of a host one."""
    xp = cuda_arrays.array_module()
    if cuda_arrays.is_device_array(x):
        try:
            v = cuda_arrays.device_view(x)
        except Exception as err:  # noqa: BLE001 - the library says why it cannot view it
            raise param_error(
                name,
                func,
                "a GPU array CuPy can view (CUDA Array Interface or DLPack on a CUDA device)",
                f"{cuda_arrays.describe(x)} ({type(err).__name__}: {err})",
                got_is_text=True,
            ) from None
        got = cuda_arrays.describe(x)
    else:
        v = xp.asarray(_float_array(x, name, func, ndim))
        got = f"an array of shape {tuple(v.shape)}"
    if v.ndim != ndim:
        raise param_error(name, func, f"a {ndim}-d array", got, got_is_text=True)
    if v.dtype.kind not in _NUMERIC:
        raise param_error(name, func, "a numeric (float32 or float64) array", got, got_is_text=True)
    if v.dtype not in (np.float32, np.float64):
        v = v.astype(np.float64)
    return v


def device_factors(
    A: Any, B: Any, item_biases: Any, m: int, n: int, backend: str, func: str
) -> DeviceFactorScores | DeviceBiasScores:
    """The score source of factors (or item biases alone, ``A`` and ``B`` None) of which one
    at least is on a GPU: checked as the module docstring says, refused unless ``backend`` is
    ``"cuda"``."""
    if backend != "cuda":
        name, x = next(
            (k, v)
            for k, v in (("A", A), ("B", B), ("item_biases", item_biases))
            if cuda_arrays.is_device_array(v)
        )
        raise param_error(
            name,
            func,
            f"a host (numpy) array with backend={backend!r}",
            cuda_arrays.describe(x),
            'Pass backend="cuda" to evaluate it on the GPU without a copy, or copy it to the '
            "host first (cupy.asnumpy(x), tensor.cpu().numpy()).",
            got_is_text=True,
        )
    xp = cuda_arrays.array_module()
    bias = None if item_biases is None else _on_device(item_biases, "item_biases", 1, func)
    if bias is not None and bias.shape[0] != n:
        raise param_error(
            "item_biases",
            func,
            f"a 1-d array with one value per item ({n})",
            f"an array of shape {tuple(bias.shape)}",
            got_is_text=True,
        )
    if A is None and B is None:
        return DeviceBiasScores(bias, m, func)
    Ad, Bd = _on_device(A, "A", 2, func), _on_device(B, "B", 2, func)
    if Ad.shape[1] != Bd.shape[1]:
        raise InputError(
            f"The 'A' and 'B' parameters of {func} must have the same number of factors "
            f"(columns). Got A with shape {tuple(Ad.shape)} and B with shape {tuple(Bd.shape)} "
            "instead."
        )
    for name, x, rows, per in (("A", Ad, m, "user"), ("B", Bd, n, "item")):
        if x.shape[0] != rows:
            as_test = "X_test" if per == "user" else "the columns of X_test"
            raise param_error(
                name,
                func,
                f"an array with one row per {per} ({rows} rows, as {as_test})",
                f"an array of shape {tuple(x.shape)}",
                got_is_text=True,
            )
    dtype = np.dtype(
        np.float32 if Ad.dtype == np.float32 and Bd.dtype == np.float32 else np.float64
    )
    Ad, Bd = Ad.astype(dtype, copy=False), Bd.astype(dtype, copy=False)
    if bias is not None:
        Bd = xp.hstack([Bd, bias.astype(dtype)[:, None]])
    return DeviceFactorScores(Ad, Bd, bias is not None, dtype, func)


def refuse_device_scores(scores: Any, func: str) -> None:
    """A dense score matrix on the GPU is not taken (it would be all users x items on the
    device): the error says to give a scorer of its rows."""
    if cuda_arrays.is_device_array(scores):
        raise param_error(
            "scores",
            func,
            "a host array or a ScoreSource",
            cuda_arrays.describe(scores),
            "For scores on the GPU give scorer=lambda users: S[users] (with "
            'backend="cuda" the rows stay on the device).',
            got_is_text=True,
        )
