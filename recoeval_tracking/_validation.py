"""Validation helpers shared by every public boundary.

All messages follow one template: the parameter, the function, what was expected, what was got,
and the fix when it is known, e.g. ``The 'k' parameter of calc_reco_metrics must be an int >= 1.
Got 0 instead.``
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

__all__ = [
    "InputError",
    "param_error",
    "check_int",
    "as_csr",
    "describe",
]


class InputError(ValueError):
    """Bad input given to a public function of recoeval_tracking."""


def describe(value: Any) -> str:
    """Short description of a value for error messages."""
    if isinstance(value, np.ndarray):
        return f"a numpy array of shape {value.shape} and dtype {value.dtype}"
    if sp.issparse(value):
        return f"a scipy.sparse {value.format.upper()} of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} (type {type(value).__name__})"


def param_error(name: str, func: str, expected: str, got: Any, fix: str | None = None,
                *, got_is_text: bool = False) -> InputError:
    """Build the project's standard error for a bad parameter."""
    got_text = got if got_is_text else describe(got)
    msg = f"The '{name}' parameter of {func} must be {expected}. Got {got_text} instead."
    if fix:
        msg += f" {fix}"
    return InputError(msg)


def check_int(value: Any, name: str, func: str, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """Return ``value`` as a Python int, or raise the standard error."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        bounds = _bounds_text(minimum, maximum)
        raise param_error(name, func, f"an int{bounds}", value)
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        raise param_error(name, func, f"an int{_bounds_text(minimum, maximum)}", value)
    return value


def _bounds_text(minimum: int | None, maximum: int | None) -> str:
    if minimum is not None and maximum is not None:
        return f" between {minimum} and {maximum}"
    if minimum is not None:
        return f" >= {minimum}"
    if maximum is not None:
        return f" <= {maximum}"
    return ""


def as_csr(X: Any, name: str, func: str, *, shape: tuple[int, int] | None = None,
           allow_none: bool = False) -> sp.csr_array | None:
    """Return ``X`` as a canonical CSR array with sorted indices, without touching the caller's object.

    Accepts any scipy sparse array or matrix (other formats are converted). Raises the standard
    error for dense input, bad shapes, non-finite or non-numeric values and out-of-range indices.
    """
    if X is None:
        if allow_none:
            return None
        raise param_error(name, func, "a scipy.sparse CSR array or matrix", X)
    if not sp.issparse(X):
        raise param_error(name, func, "a scipy.sparse CSR array or matrix (users as rows)", X,
                          "Convert it with scipy.sparse.csr_array(X).")
    if X.ndim != 2:
        raise param_error(name, func, "two-dimensional", X)
    if not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_):
        raise param_error(name, func, "numeric", X)
    if X.format != "csr":
        X = sp.csr_array(X)
        copied = True
    else:
        copied = False
    if shape is not None and tuple(X.shape) != tuple(shape):
        raise param_error(name, func, f"of shape {shape}", X)
    indptr = np.asarray(X.indptr)
    indices = np.asarray(X.indices)
    n_rows, n_cols = X.shape
    if indptr.shape[0] != n_rows + 1 or indptr[0] != 0 or np.any(np.diff(indptr) < 0) \
            or indptr[-1] > indices.shape[0]:
        raise param_error(name, func, "a valid CSR structure (indptr of length n_rows + 1, "
                          "non-decreasing, starting at 0)", X)
    nnz = int(indptr[-1])
    if nnz and (indices[:nnz].min() < 0 or indices[:nnz].max() >= n_cols):
        bad = int(indices[:nnz].min()) if indices[:nnz].min() < 0 else int(indices[:nnz].max())
        raise param_error(name, func, f"a CSR whose column indices lie in [0, {n_cols})",
                          f"a column index {bad}", got_is_text=True)
    data = np.asarray(X.data)[:nnz]
    if data.dtype.kind == "f" and not np.all(np.isfinite(data)):
        raise param_error(name, func, "free of NaN and infinite stored values", X,
                          "Drop those entries or replace them before evaluating.")
    if not X.has_sorted_indices or not X.has_canonical_format:
        if not copied:
            X = X.copy()
        X.sum_duplicates()
        X.sort_indices()
    return sp.csr_array(X)
