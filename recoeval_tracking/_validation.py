"""Validation helpers shared by every public boundary.

All messages follow one template: the parameter, the function, what was expected, what was got,
and the fix when it is known, e.g. ``The 'k' parameter of calc_reco_metrics must be an int >= 1.
Got 0 instead.``
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "InputError",
    "param_error",
    "describe",
    "check_int",
    "check_seed",
    "check_float",
    "check_in_range",
    "check_fraction",
    "check_unit_open",
    "check_bool",
    "check_optional",
    "check_type",
    "check_file",
    "as_csr",
    "checked_sparse",
    "resolve_under",
    "relative_under",
    "artifact_path_problem",
]


class InputError(ValueError):
    """Bad input given to a public function of recoeval_tracking."""


def describe(value: Any) -> str:
    """Short description of a value for error messages."""
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape} and dtype {value.dtype}"
    if sp.issparse(value):
        return (
            f"a scipy.sparse {value.format.upper()} of shape {value.shape} and dtype {value.dtype}"
        )
    text = repr(value)
    if len(text) > 80:  # its start and its end: a long path's file name and suffix stay shown
        text = f"{text[:38]}...{text[-39:]}"
    return f"{text} (type {type(value).__name__})"


def param_error(
    name: str,
    func: str,
    expected: str,
    got: Any,
    fix: str | None = None,
    *,
    got_is_text: bool = False,
) -> InputError:
    """Build the project's standard error for a bad parameter."""
    got_text = got if got_is_text else describe(got)
    msg = f"The '{name}' parameter of {func} must be {expected}. Got {got_text} instead."
    if fix:
        msg += f" {fix}"
    return InputError(msg)


def check_int(
    value: Any, name: str, func: str, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """Return ``value`` as a Python int, or raise the standard error.

    A ``maximum`` of 2**31 or more is a storage bound (what the engine keeps in 64 bits): the
    message names it only to a value beyond it, so ``k=0`` reads "an int >= 1".
    """
    shown = maximum if maximum is not None and maximum < 2**31 else None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise param_error(name, func, f"an int{_bounds_text(minimum, shown)}", value)
    value = int(value)
    if maximum is not None and value > maximum:
        raise param_error(name, func, f"an int{_bounds_text(minimum, maximum)}", value)
    if minimum is not None and value < minimum:
        raise param_error(name, func, f"an int{_bounds_text(minimum, shown)}", value)
    return value


def check_seed(seed: Any, func: str, name: str = "seed") -> int:
    """A seed (for ``numpy.random.default_rng`` and the tie keys): an int >= 0."""
    return check_int(seed, name, func, minimum=0)


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def check_float(
    value: Any, name: str, func: str, *, minimum: float | None = None, strict: bool = False
) -> float:
    """Return ``value`` as a finite Python float (>= or > ``minimum``), or raise the standard
    error."""
    bound = ""
    if minimum is not None:
        bound = f" {'>' if strict else '>='} {minimum:g}"
    expected = f"a finite number{bound}"
    if not _is_real(value):
        raise param_error(name, func, expected, value)
    value = float(value)
    if not math.isfinite(value):
        raise param_error(name, func, expected, value)
    if minimum is not None and (value < minimum or (strict and value == minimum)):
        raise param_error(name, func, expected, value)
    return value


def check_in_range(
    value: Any,
    name: str,
    func: str,
    lo: float,
    hi: float,
    *,
    lo_open: bool = False,
    hi_open: bool = False,
) -> float:
    """Return ``value`` as a finite float in the interval from ``lo`` to ``hi`` (each end closed
    unless said open), or raise the standard error naming the interval."""
    v = float(value) if _is_real(value) else float("nan")
    if not np.isfinite(v) or v < lo or v > hi or (lo_open and v == lo) or (hi_open and v == hi):
        lb = "(" if lo_open else "["
        hb = ")" if hi_open else "]"
        raise param_error(name, func, f"a number in {lb}{lo}, {hi}{hb}", value)
    return v


def check_fraction(
    value: Any, name: str, func: str, *, allow_zero: bool = False, allow_none: bool = False
) -> float | None:
    """A fraction in (0, 1) (or [0, 1) with ``allow_zero``), or None when allowed."""
    if value is None and allow_none:
        return None
    ok = _is_real(value)
    v = float(value) if ok else float("nan")
    lo_ok = v >= 0.0 if allow_zero else v > 0.0
    if not ok or not (lo_ok and v < 1.0):
        bounds = "[0, 1)" if allow_zero else "(0, 1)"
        raise param_error(
            name, func, f"a number in {bounds}" + (" or None" if allow_none else ""), value
        )
    return v


def check_unit_open(value: Any, name: str, func: str) -> float:
    """A number strictly between 0 and 1 (a confidence level, a test fraction)."""
    if not _is_real(value) or not 0.0 < float(value) < 1.0:
        raise param_error(name, func, "a number strictly between 0 and 1", value)
    return float(value)


def check_bool(value: Any, name: str, func: str) -> bool:
    """Return ``value`` as a Python bool, or raise the standard error."""
    if not isinstance(value, (bool, np.bool_)):
        raise param_error(name, func, "a bool (True or False)", value)
    return bool(value)


def check_optional(value: Any, kind: type | tuple[type, ...], name: str, func: str) -> None:
    """Raise the standard error unless ``value`` is None or an instance of ``kind`` (``str``:
    "a str or None"; ``Mapping``: "a dict or None")."""
    if value is not None and not isinstance(value, kind):
        text = "a dict" if kind is Mapping else f"a {getattr(kind, '__name__', kind)}"
        raise param_error(name, func, f"{text} or None", value)


def check_known_params(target: Any, params: Mapping[str, Any], call: str, skip: int = 0) -> None:
    """Refuse keyword ``params`` that ``target`` (a function or class) does not take, naming
    the ones it does; ``skip`` leading parameters are the caller's own (the data). A target
    taking ``**kwargs`` takes anything."""
    import inspect

    sig = inspect.signature(target)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return
    accepted = [
        name
        for name, p in list(sig.parameters.items())[skip:]
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    ]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise InputError(
            f"The parameters of {call} must be among {', '.join(accepted) or '(none)'}. "
            f"Got {', '.join(map(repr, unknown))} instead."
        )


def check_type(
    value: Any, kind: type, name: str, func: str, expected: str, fix: str | None = None
) -> Any:
    """Return ``value`` when it is an instance of ``kind``, else raise the standard error."""
    if not isinstance(value, kind):
        raise param_error(name, func, expected, value, fix)
    return value


def check_file(
    path: Any, name: str, func: str, *, suffix: str | None = None, fix: str | None = None
) -> Path:
    """An existing regular file (with the given ``suffix``, lower-cased, when one is asked)."""
    if not isinstance(path, (str, os.PathLike)):
        raise param_error(name, func, "a path to a file (str or os.PathLike)", path)
    p = Path(path)
    if suffix is not None:
        if p.suffix.lower() != suffix:
            raise param_error(name, func, f"a path to a {suffix} file", str(path))
        if not p.is_file():
            raise param_error(name, func, f"an existing {suffix} file", str(path), fix)
        return p
    if not p.exists():
        raise param_error(name, func, "an existing file", f"'{p}' (no such file)", got_is_text=True)
    if not p.is_file():
        raise param_error(name, func, "a file", f"'{p}' (not a regular file)", got_is_text=True)
    return p


def _bounds_text(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f" between {minimum} and {maximum}"
    if minimum is not None:
        return f" >= {minimum}"
    if maximum is not None:
        return f" <= {maximum}"
    return ""


_REBUILD = (
    "Rebuild it from its entries, e.g. scipy.sparse.csr_array((data, (rows, cols)), "
    "shape=...), instead of editing indptr, indices or data by hand."
)


def _structure_error(name: str, func: str, expected: str, got: str) -> InputError:
    return param_error(
        name, func, f"a sparse matrix whose {expected}", got, _REBUILD, got_is_text=True
    )


def _index_array(x: Any, part: str, name: str, func: str) -> np.ndarray:
    """An index array of a sparse matrix (``indptr``, ``indices``, ``row``...) checked to be 1-d
    integers that int64 holds; unsigned ones (which scipy refuses) are converted to int64."""
    arr = np.asarray(x)
    if arr.ndim != 1 or arr.dtype.kind not in "iu":
        raise _structure_error(
            name,
            func,
            f"{part} is a 1-d integer array",
            f"{part} of dtype {arr.dtype} and shape {arr.shape}",
        )
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise _structure_error(
            name, func, f"{part} values fit in int64", f"a {part} value {int(arr.max())}"
        )
    return arr.astype(np.int64) if arr.dtype.kind == "u" else arr


def _compressed_parts(
    X: Any, n_major: int, n_minor: int, name: str, func: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, data)`` of a CSR/CSC/BSR checked with numpy only (no scipy method,
    whose C++ code trusts them), the entries past ``indptr[-1]`` dropped."""
    major = "row" if X.format != "csc" else "column"
    indptr = _index_array(X.indptr, "indptr", name, func)
    indices = _index_array(X.indices, "indices", name, func)
    data = np.asarray(X.data)
    if indptr.shape[0] != n_major + 1:
        raise _structure_error(
            name,
            func,
            f"indptr has n_{major}s + 1 = {n_major + 1} values",
            f"an indptr of length {indptr.shape[0]}",
        )
    if indptr[0] != 0:
        raise _structure_error(
            name, func, "indptr starts at 0", f"an indptr starting at {int(indptr[0])}"
        )
    drops = np.flatnonzero(np.diff(indptr) < 0)
    if drops.size:
        r = int(drops[0])
        raise _structure_error(
            name,
            func,
            "indptr is non-decreasing",
            f"an indptr that decreases after {major} {r} (from "
            f"{int(indptr[r])} to {int(indptr[r + 1])})",
        )
    if data.shape[:1] != indices.shape:
        raise _structure_error(
            name,
            func,
            "data and indices have the same length",
            f"{data.shape[0] if data.ndim else 0} stored values for {indices.shape[0]} indices",
        )
    nnz = int(indptr[-1])
    if nnz > indices.shape[0]:
        raise _structure_error(
            name,
            func,
            f"indptr ends at most at the number of stored entries ({indices.shape[0]})",
            f"indptr[-1] = {nnz}",
        )
    indices, data = indices[:nnz], data[:nnz]
    if nnz and (indices.min() < 0 or indices.max() >= n_minor):
        bad = int(indices.min()) if indices.min() < 0 else int(indices.max())
        other = "column" if major == "row" else "row"
        raise param_error(
            name,
            func,
            f"a sparse matrix whose {other} indices lie in [0, {n_minor})",
            f"a {other} index {bad}",
            got_is_text=True,
        )
    return indptr, indices, data


def _coo_to_csr(
    rows: np.ndarray, cols: np.ndarray, data: np.ndarray, shape: tuple[int, int]
) -> sp.csr_array:
    """Checked COO entries as a CSR in their order within each row (duplicates kept: the
    caller counts them)."""
    order = np.argsort(rows, kind="stable")
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    return sp.csr_array((data[order], cols[order], indptr), shape=shape)


def checked_sparse(X: Any, name: str, func: str) -> sp.csr_array:
    """``X``, a scipy sparse array or matrix, as a CSR array whose structure was checked with
    numpy before any scipy method touched it (duplicates and index order as given).

    scipy's compiled routines (``sum_duplicates``, ``sort_indices``, the format conversions,
    even ``has_canonical_format``) trust ``indptr`` and ``indices``: one inflated ``indptr``
    value makes them write out of bounds, and the process crashes. So every structural fact
    they rely on is checked here first, each failure naming the parameter: real (not complex)
    numeric values; ``indptr`` of length n_rows + 1, from 0, non-decreasing, ending within the
    stored entries; ``data`` as long as ``indices``; indices within the shape; integer index
    arrays (unsigned ones are converted). COO input is checked the same way (``row``, ``col``,
    ``data`` of one length, within the shape).
    """
    if not sp.issparse(X):
        raise param_error(
            name,
            func,
            "a scipy.sparse CSR array or matrix (users as rows)",
            X,
            "Convert it with scipy.sparse.csr_array(X).",
        )
    if len(X.shape) != 2:
        raise param_error(name, func, "two-dimensional", X)
    kind = np.dtype(X.dtype).kind
    if kind == "c":
        raise param_error(
            name,
            func,
            "real-valued (a complex value's imaginary part would be dropped)",
            X,
            "Pass the real part (X.real) or the magnitude (abs(X)) explicitly.",
        )
    if kind not in "biuf":
        raise param_error(name, func, "numeric", X)
    shape = (int(X.shape[0]), int(X.shape[1]))
    fmt = X.format
    if fmt in ("csr", "csc"):
        n_major, n_minor = shape if fmt == "csr" else shape[::-1]
        indptr, indices, data = _compressed_parts(X, n_major, n_minor, name, func)
        if fmt == "csr":
            return sp.csr_array((data, indices, indptr), shape=shape)
        cols = np.repeat(np.arange(n_major, dtype=np.int64), np.diff(indptr))
        return _coo_to_csr(indices, cols, data, shape)
    if fmt == "coo":
        coords = [
            _index_array(c, part, name, func) for c, part in zip((X.row, X.col), ("row", "col"))
        ]
        data = np.asarray(X.data)
        if not (coords[0].shape == coords[1].shape == data.shape[:1]):
            raise _structure_error(
                name,
                func,
                "row, col and data have the same length",
                f"lengths {coords[0].shape[0]}, {coords[1].shape[0]} and "
                f"{data.shape[0] if data.ndim else 0}",
            )
        for c, size, part in zip(coords, shape, ("row", "column")):
            if c.size and (c.min() < 0 or c.max() >= size):
                bad = int(c.min()) if c.min() < 0 else int(c.max())
                raise param_error(
                    name,
                    func,
                    f"a sparse matrix whose {part} indices lie in [0, {size})",
                    f"a {part} index {bad}",
                    got_is_text=True,
                )
        return _coo_to_csr(coords[0], coords[1], data, shape)
    if fmt == "bsr":
        R, C = X.blocksize
        _compressed_parts(X, shape[0] // R, shape[1] // C, name, func)
    return checked_sparse(X.tocoo(), name, func)


def as_csr(
    X: Any, name: str, func: str, *, shape: tuple[int, int] | None = None, allow_none: bool = False
) -> sp.csr_array | None:
    """Return ``X`` as a canonical CSR array with sorted indices, without touching the caller's
    object.

    Accepts any scipy sparse array or matrix (other formats are converted). Raises the standard
    error for dense input, a broken structure (:func:`checked_sparse`, checked before any scipy
    method runs), bad shapes, complex, non-finite or non-numeric values and out-of-range
    indices.
    """
    if X is None:
        if allow_none:
            return None
        raise param_error(name, func, "a scipy.sparse CSR array or matrix", X)
    X = checked_sparse(X, name, func)
    if shape is not None and tuple(X.shape) != tuple(shape):
        raise param_error(name, func, f"of shape {shape}", X)
    data = np.asarray(X.data)
    if data.dtype.kind == "f" and not np.all(np.isfinite(data)):
        raise param_error(
            name,
            func,
            "free of NaN and infinite stored values",
            X,
            "Drop those entries or replace them before evaluating.",
        )
    if not X.has_sorted_indices or not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
        X.sort_indices()
    return X


def resolve_under(
    base: str | os.PathLike, rel: str | os.PathLike, *, what: str, func: str | None = None
) -> Path:
    """``base / rel`` resolved (``..`` and symbolic links followed), checked to lie inside
    ``base``: the one rule for every path taken from a config value or a manifest. "Inside" is
    judged by path components on the resolved paths (:meth:`pathlib.Path.is_relative_to`),
    never by text: ``report2/x`` is not inside ``report``.

    Parameters
    ----------
    base : path
        The folder the path must stay in.
    rel : path
        The path as given (relative to ``base``; an absolute one must lie inside it too).
    what : str
        The config key or parameter the path came from, named by the error.
    func : str, optional
        The function named by the error; without it the message starts with ``what``.

    Raises
    ------
    InputError
        When the resolved path lies outside ``base``.

    Examples
    --------
    >>> resolve_under("/data/set", "users/part-0.parquet", what="manifest").as_posix()
    '/data/set/users/part-0.parquet'
    """
    root = Path(base).resolve()
    path = (root / Path(rel)).resolve()
    if path.is_relative_to(root):  # by components: /out2 is not inside /out
        return path
    expected = f"a path inside {root}"
    got = f"{str(rel)!r}, which resolves to {path}"
    if func is not None:
        raise param_error(what, func, expected, got, got_is_text=True)
    raise InputError(
        f"{what} must be {expected}; got {got}. Give a name inside that folder "
        "(no '..' leaving it, no absolute path elsewhere)."
    )


def artifact_path_problem(value: str) -> str | None:
    """Why ``value`` cannot be an MLflow artifact path (a folder inside a run's artifacts), or
    None when it can: an absolute path, a drive or URL, or a ``..`` component would leave the
    run's artifacts, and MLflow refuses it only after the run was made.

    Examples
    --------
    >>> artifact_path_problem("report/figures") is None, artifact_path_problem("../..")
    (True, "a '..' component leaves the run's artifacts")
    """
    text = str(value).replace("\\", "/")
    parts = text.split("/")
    if text.startswith("/") or "://" in text or (len(parts[0]) == 2 and parts[0][1] == ":"):
        return "an absolute path or a URL is not inside the run's artifacts"
    if ".." in parts:
        return "a '..' component leaves the run's artifacts"
    return None


def relative_under(rel: str, folder: str, *, what: str) -> str:
    """``rel`` (a ``/``-separated path relative to a dataset's root, as a manifest records it,
    on any file system: local, ``s3://``...) normalised, checked to name a file inside the
    sub-folder ``folder``: the rule of :func:`resolve_under` for paths that cannot be resolved
    locally.

    Raises
    ------
    InputError
        For an absolute path, a ``..`` leaving ``folder``, or a file elsewhere.

    Examples
    --------
    >>> relative_under("users/./part-000000.parquet", "users", what="the manifest")
    'users/part-000000.parquet'
    """
    import posixpath

    text = str(rel).replace("\\", "/")
    norm = posixpath.normpath(text)
    if text.startswith("/") or "://" in text or posixpath.dirname(norm) != folder:
        raise InputError(
            f"{what} must name files inside {folder}/; got {str(rel)!r}, which "
            f"resolves to {norm!r}."
        )
    return norm
