"""The checks every statistic makes of its input: per-user values as a 1-d float array (NaN
marks a user for whom the metric is undefined; an infinite value is refused by name), and two
such arrays aligned user by user."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import param_error

__all__: list[str] = []


def _as_values(values: Any, name: str, func: str) -> np.ndarray:
    """``values`` as a 1-d float64 array (NaN kept), or the named error."""
    try:
        v = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise param_error(name, func, "a 1-d array of numbers", values) from None
    if v.ndim != 1:
        raise param_error(name, func, "a 1-d array of numbers", v)
    if np.isinf(v).any():
        raise param_error(
            name,
            func,
            "finite numbers or NaN (undefined)",
            "an array holding infinite values",
            got_is_text=True,
        )
    return v


def _pair(a: Any, b: Any, func: str) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` checked by :func:`_as_values` and of one length (NaN kept)."""
    x = _as_values(a, "a", func)
    y = _as_values(b, "b", func)
    if x.shape != y.shape:
        raise param_error("b", func, f"an array of the same length as 'a' ({x.shape[0]})", y)
    return x, y


def _defined_differences(a: Any, b: Any, func: str) -> np.ndarray:
    """``a - b`` over the pairs defined on both sides."""
    x, y = _pair(a, b, func)
    d = x - y
    return d[~np.isnan(d)]


def _paired(a: Any, b: Any, func: str) -> tuple[np.ndarray, np.ndarray]:
    """The pairs of ``a`` and ``b`` defined on both sides (a pair with a NaN side left out)."""
    try:
        x = np.asarray(a, dtype=np.float64)
        y = np.asarray(b, dtype=np.float64)
    except (TypeError, ValueError):
        raise param_error("a", func, "two 1-d arrays of numbers", (a, b)) from None
    if x.ndim != 1:
        raise param_error("a", func, "a 1-d array of numbers", x)
    if y.shape != x.shape:
        raise param_error("b", func, f"a 1-d array of the same length as 'a' ({x.size})", y)
    if np.isinf(x).any() or np.isinf(y).any():
        raise param_error(
            "a",
            func,
            "finite numbers or NaN (undefined)",
            "an array holding infinite values",
            got_is_text=True,
        )
    keep = ~(np.isnan(x) | np.isnan(y))
    return x[keep], y[keep]
