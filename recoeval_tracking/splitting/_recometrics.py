"""A drop-in for recometrics' ``split_reco_train_test`` that reproduces its outputs exactly.

recometrics (David Cortes, https://github.com/david-cortes/recometrics) draws its splits in C++
with ``std::mt19937`` seeded with ``seed`` and ``std::shuffle``. The numbers ``std::shuffle``
draws are not fixed by the C++ standard; we reproduce GNU libstdc++ (GCC >= 11, the compiler of
Linux wheels and source builds): ``std::shuffle`` drawing two swap positions from one number
when the range allows it, and ``std::uniform_int_distribution`` using Lemire's nearly
divisionless method (Lemire 2019, "Fast Random Integer Generation in an Interval", ACM TOMACS
29(1)). recometrics built against another C++ library (libc++ on macOS, MSVC) draws different
splits from the same seed; the documented properties hold either way.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit

from .._validation import InputError, check_int, check_unit_open, checked_sparse, param_error
from ..data import Interactions
from ._split import TEST, TRAIN, Split, split_from_parts

__all__ = ["split_reco_train_test", "recometrics_split", "mt19937_outputs"]

_MASK32 = 0xFFFFFFFF


# ------------------------------------------------------------------ std::mt19937 (libstdc++)
@njit(cache=True)
def _mt_seed(seed: int) -> np.ndarray:  # pragma: no cover - compiled
    """State of ``std::mt19937(seed)``: 624 words plus the position in slot 624.

    Matsumoto & Nishimura (1998), "Mersenne Twister", ACM TOMACS 8(1); the seeding of C++11
    [rand.eng.mers] (multiplier 1812433253).
    """
    mt = np.empty(625, dtype=np.int64)
    mt[0] = seed & 0xFFFFFFFF
    for i in range(1, 624):
        prev = mt[i - 1]
        mt[i] = (1812433253 * (prev ^ (prev >> 30)) + i) & 0xFFFFFFFF
    mt[624] = 624
    return mt


@njit(cache=True)
def _mt_next(mt: np.ndarray) -> int:  # pragma: no cover - compiled
    """Next 32-bit output of the generator (as an int64 in [0, 2**32))."""
    if mt[624] >= 624:
        for i in range(624):
            y = (mt[i] & 0x80000000) | (mt[(i + 1) % 624] & 0x7FFFFFFF)
            v = mt[(i + 397) % 624] ^ (y >> 1)
            if y & 1:
                v ^= 0x9908B0DF
            mt[i] = v
        mt[624] = 0
    y = mt[mt[624]]
    mt[624] += 1
    y ^= y >> 11
    y ^= (y << 7) & 0x9D2C5680
    y ^= (y << 15) & 0xEFC60000
    y ^= y >> 18
    return y & 0xFFFFFFFF


@njit(cache=True)
def _uniform_int(mt: np.ndarray, b: int) -> int:  # pragma: no cover - compiled
    """libstdc++ ``uniform_int_distribution<unsigned long>{0, b}(mt19937)`` for b < 2**32 - 1.

    Lemire's method on 64-bit products: ``x * (b + 1) >> 32`` with rejection of the low words
    below ``2**32 mod (b + 1)``.
    """
    if b == 0xFFFFFFFF:
        return _mt_next(mt)
    r = np.uint64(b + 1)
    product = np.uint64(_mt_next(mt)) * r
    low = product & np.uint64(0xFFFFFFFF)
    if low < r:
        threshold = (np.uint64(0x100000000) - r) % r
        while low < threshold:
            product = np.uint64(_mt_next(mt)) * r
            low = product & np.uint64(0xFFFFFFFF)
    return np.int64(product >> np.uint64(32))


@njit(cache=True)
def _shuffle(a: np.ndarray, n: int, mt: np.ndarray) -> None:  # pragma: no cover - compiled
    """libstdc++ ``std::shuffle(a, a + n, mt19937)`` (Fisher-Yates, pairs of draws when
    ``n * n`` fits in the generator's range)."""
    if n <= 1:
        return
    if 0xFFFFFFFF // n >= n:
        i = 1
        if n % 2 == 0:
            j = _uniform_int(mt, 1)
            a[i], a[j] = a[j], a[i]
            i += 1
        while i != n:
            b0 = i + 1
            x = _uniform_int(mt, b0 * (b0 + 1) - 1)
            p1 = x // (b0 + 1)
            p2 = x % (b0 + 1)
            a[i], a[p1] = a[p1], a[i]
            i += 1
            a[i], a[p2] = a[p2], a[i]
            i += 1
        return
    for i in range(1, n):
        j = _uniform_int(mt, i)
        a[i], a[j] = a[j], a[i]


@njit(cache=True)
def _std_round(x: float) -> int:  # pragma: no cover - compiled
    f = math.floor(x)
    return int(f + 1.0) if x - f >= 0.5 else int(f)


@njit(cache=True)
def _mt_outputs(seed: int, n: int) -> np.ndarray:  # pragma: no cover - compiled
    mt = _mt_seed(seed)
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        out[i] = _mt_next(mt)
    return out


def mt19937_outputs(seed: int, n: int) -> np.ndarray:
    """The first ``n`` outputs of ``std::mt19937(seed)`` (for checks against the standard)."""
    return _mt_outputs(int(seed), int(n))


@njit(cache=True)
def _test_mask_selected(
    indptr: np.ndarray, fraction: float, seed: int
) -> np.ndarray:  # pragma: no cover - compiled
    """recometrics ``split_data_selected_users``: per row, ``round(n * fraction)`` entries
    (halves away from zero) chosen by shuffling the positions with one shared generator."""
    m = indptr.shape[0] - 1
    nnz = indptr[m]
    is_test = np.zeros(nnz, dtype=np.bool_)
    mt = _mt_seed(seed)
    max_n = 0
    for u in range(m):
        max_n = max(max_n, indptr[u + 1] - indptr[u])
    pos = np.empty(max(max_n, 1), dtype=np.int64)
    for u in range(m):
        n_this = indptr[u + 1] - indptr[u]
        if n_this == 0:
            continue
        target = _std_round(n_this * fraction)
        if target == 0:
            continue
        if target == n_this:
            for j in range(n_this):
                is_test[indptr[u] + j] = True
            continue
        for j in range(n_this):
            pos[j] = j
        _shuffle(pos, n_this, mt)
        for j in range(target):
            is_test[indptr[u] + pos[j]] = True
    return is_test


@njit(cache=True)
def _select_users(
    indptr: np.ndarray,
    n_cols: int,
    n_users_test: int,
    fraction: float,
    consider_cold_start: bool,
    min_items_pool: int,
    min_pos_test: int,
    seed: int,
) -> tuple:  # pragma: no cover - compiled
    """recometrics ``split_data_separate_users``, user selection: shuffle all rows, then take
    eligible rows in that order (ineligible ones are swapped to the end) until enough."""
    m = indptr.shape[0] - 1
    ids = np.arange(m)
    mt = _mt_seed(seed)
    _shuffle(ids, m, mt)
    end = m
    taken = 0
    while True:
        u = ids[taken]
        n_this = indptr[u + 1] - indptr[u]
        n_test = _std_round(n_this * fraction)
        ok = (
            n_this > 0
            and n_test >= min_pos_test
            and n_cols - (n_this - n_test) >= min_items_pool
            and (consider_cold_start or n_test != n_this)
            and n_this + 1 < n_cols
        )
        if ok:
            taken += 1
        else:
            end -= 1
            ids[taken], ids[end] = ids[end], ids[taken]
        if not (taken < n_users_test and taken < end):
            break
    return ids, taken


def _prepare_csr(X: Any, func: str) -> sp.csr_array:
    if not sp.issparse(X):
        raise param_error(
            "X",
            func,
            "a scipy.sparse CSR array or matrix (users as rows)",
            X,
            "Convert it with scipy.sparse.csr_array(X).",
        )
    if X.ndim != 2:
        raise param_error("X", func, "two-dimensional", X)
    # the structure (indices within the shape, indptr) checked before any scipy method runs:
    # a negative column index would otherwise be kept, and an inflated indptr crash scipy
    X = sp.csr_array(checked_sparse(X, "X", func), copy=True)
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise param_error("X", func, "non-empty", X)
    if X.dtype not in (np.float32, np.float64):
        if not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_):
            raise param_error("X", func, "numeric", X)
        X = X.astype(np.float64)
    if X.nnz == 0:
        raise param_error("X", func, "a matrix with stored (non-zero) entries", X)
    if not np.all(np.isfinite(X.data)):
        raise param_error("X", func, "free of NaN and infinite values", X)
    X.sort_indices()  # on our copy; duplicates are kept, as recometrics does
    return X


def _rows(X: sp.csr_array, rows: np.ndarray, mask: np.ndarray | None = None) -> sp.csr_array:
    """Rows ``rows`` of ``X`` (in that order), keeping only entries with ``mask`` True."""
    indptr = np.asarray(X.indptr, dtype=np.int64)
    lengths = indptr[rows + 1] - indptr[rows]
    starts = np.repeat(indptr[rows], lengths)
    within = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(lengths) - lengths, lengths
    )
    take = starts + within
    row_of = np.repeat(np.arange(rows.shape[0], dtype=np.int64), lengths)
    if mask is not None:
        keep = mask[take]
        take, row_of = take[keep], row_of[keep]
    new_indptr = np.zeros(rows.shape[0] + 1, dtype=np.int32)
    np.cumsum(np.bincount(row_of, minlength=rows.shape[0]), out=new_indptr[1:])
    return sp.csr_array(
        (X.data[take], X.indices[take].astype(np.int32), new_indptr),
        shape=(rows.shape[0], X.shape[1]),
    )


class _Draw(NamedTuple):
    """The arguments of a recometrics split, checked by :func:`_validate`: what :func:`_masks`
    draws the test entries from, the same for both entry points."""

    X: sp.csr_array
    split_type: str
    n_users_take: int
    items_test_fraction: float
    min_items_pool: int
    min_pos_test: int
    consider_cold_start: bool
    seed: int
    #: The entry point the user called, which the errors name.
    func: str


def _masks(draw: _Draw) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(users_test, users_rem, is_test over the entries of X) as recometrics draws them."""
    X, frac, seed = draw.X, draw.items_test_fraction, draw.seed
    indptr = np.asarray(X.indptr, dtype=np.int64)
    m = X.shape[0]
    if draw.split_type == "all":
        return (
            np.arange(m),
            np.zeros(0, dtype=np.int64),
            _test_mask_selected(indptr, frac, seed),
        )
    if draw.n_users_take > m:
        raise InputError(
            f"{draw.func}: the target number of test users is larger than the number of users."
        )
    ids, taken = _select_users(
        indptr,
        X.shape[1],
        draw.n_users_take,
        frac,
        draw.consider_cold_start,
        draw.min_items_pool,
        draw.min_pos_test,
        seed,
    )
    if taken == 0:
        raise InputError(
            f"{draw.func}: no user satisfies the criteria for test inclusion (the "
            f"split leaves no test user): with items_test_fraction={frac}, "
            f"min_pos_test={draw.min_pos_test}, min_items_pool={draw.min_items_pool} and "
            f"consider_cold_start={draw.consider_cold_start}. Lower min_pos_test or raise "
            "items_test_fraction."
        )
    users_test = np.sort(ids[:taken])
    users_rem = np.sort(ids[taken:])
    # the selected rows are split with a fresh generator seeded again with `seed`
    lengths = indptr[users_test + 1] - indptr[users_test]
    sub_indptr = np.zeros(taken + 1, dtype=np.int64)
    np.cumsum(lengths, out=sub_indptr[1:])
    sub_test = _test_mask_selected(sub_indptr, frac, seed)
    is_test = np.zeros(X.nnz, dtype=bool)
    take = np.repeat(indptr[users_test], lengths) + (
        np.arange(int(lengths.sum())) - np.repeat(sub_indptr[:-1], lengths)
    )
    is_test[take] = sub_test
    return users_test, users_rem, is_test


def _validate(
    X: Any,
    split_type: Any,
    users_test_fraction: Any,
    max_test_users: Any,
    items_test_fraction: Any,
    min_items_pool: Any,
    min_pos_test: Any,
    consider_cold_start: Any,
    seed: Any,
    func: str,
) -> _Draw:
    """The arguments checked (named in the errors under ``func``), with the number of test
    users to take."""
    X = _prepare_csr(X, func)
    if split_type not in ("all", "separated", "joined"):
        raise param_error("split_type", func, "one of 'all', 'separated', 'joined'", split_type)
    m, n = X.shape
    if max_test_users is None or (
        not isinstance(max_test_users, bool)
        and isinstance(max_test_users, (int, float, np.integer, np.floating))
        and max_test_users == 0
    ):
        max_test_users = m
    ok = (
        isinstance(max_test_users, (int, float, np.integer, np.floating))
        and not isinstance(max_test_users, bool)
        and max_test_users > 0
    )
    if not ok:
        raise param_error(
            "max_test_users", func, "a number > 0, or None / 0 for all users", max_test_users
        )
    max_test_users = int(max_test_users)
    seed = check_int(seed, "seed", func, minimum=0)
    min_pos_test = check_int(min_pos_test, "min_pos_test", func, minimum=0)
    min_items_pool = check_int(min_items_pool, "min_items_pool", func, minimum=0)
    if users_test_fraction is not None:
        users_test_fraction = check_unit_open(users_test_fraction, "users_test_fraction", func)
    items_test_fraction = check_unit_open(items_test_fraction, "items_test_fraction", func)
    consider_cold_start = bool(consider_cold_start)
    if min_pos_test >= n:
        raise param_error(
            "min_pos_test", func, f"smaller than the number of columns of X ({n})", min_pos_test
        )
    if min_items_pool >= n:
        raise param_error(
            "min_items_pool", func, f"smaller than the number of columns of X ({n})", min_items_pool
        )
    n_users_take = m
    if split_type != "all":
        if m < 2:
            raise param_error(
                "X", func, f"a matrix with at least 2 rows for split_type {split_type!r}", X
            )
        if users_test_fraction is not None:
            take = m * users_test_fraction
            if take < 1:
                warnings.warn(
                    "Desired fraction of test users implies <1, will select 1 user.", stacklevel=3
                )
                take = 1
            n_users_take = min(round(take), max_test_users)  # Python's round, as recometrics
        else:
            if max_test_users > m:
                warnings.warn(
                    "'max_test_users' is larger than number of users. Will take all.", stacklevel=3
                )
            n_users_take = min(max_test_users, m)
    return _Draw(
        X,
        split_type,
        n_users_take,
        items_test_fraction,
        min_items_pool,
        min_pos_test,
        consider_cold_start,
        seed,
        func,
    )


def split_reco_train_test(
    X: Any,
    split_type: str = "separated",
    users_test_fraction: float | None = 0.1,
    max_test_users: int | None = 10000,
    items_test_fraction: float = 0.3,
    min_items_pool: int = 2,
    min_pos_test: int = 1,
    consider_cold_start: bool = False,
    seed: int = 1,
) -> tuple:
    """Train-test split of implicit-feedback data, a drop-in for recometrics' function.

    Same signature, defaults and outputs as ``recometrics.split_reco_train_test`` (0.1.6), and
    with the same seed the same matrices (see the module notes on the C++ library).

    * Test users (``separated`` and ``joined``): all rows are shuffled; rows are taken in that
      order while eligible, up to ``min(round(m * users_test_fraction), max_test_users)``
      (Python rounding; or ``max_test_users`` when ``users_test_fraction`` is None). A row is
      eligible when it has entries, ``round(n_u * items_test_fraction) >= min_pos_test``,
      ``n_items - n_train_u >= min_items_pool``, ``n_u + 1 < n_items``, and (unless
      ``consider_cold_start``) it keeps at least one train entry.
    * Test entries per selected user: ``round(n_u * items_test_fraction)`` with halves away
      from zero (``std::round``), a uniformly random subset.

    Parameters
    ----------
    X : scipy.sparse matrix or array (m, n)
        Users as rows. Converted to CSR with sorted indices (a copy: the caller's object is not
        modified); float32 and float64 values are kept, other types become float64. Duplicate
        entries are kept as separate entries, as recometrics does.
    split_type : {"all", "separated", "joined"}
    users_test_fraction : float in (0, 1) or None
    max_test_users : int or None
        None or 0 means all users.
    items_test_fraction : float in (0, 1)
    min_items_pool : int >= 0
    min_pos_test : int >= 0
    consider_cold_start : bool
    seed : int >= 0

    Returns
    -------
    tuple
        ``"all"``: ``(X_train, X_test)``, both of X's shape. ``"separated"``:
        ``(X_rem, X_train, X_test, users_test)``: the rows of the non-test users, then train and
        test rows of the test users (sorted row indices ``users_test``, int32). ``"joined"``:
        ``(X_train, X_test, users_test)`` with ``X_train`` the test users' train rows followed by
        the other users' rows. Matrices are ``scipy.sparse.csr_array`` with int32 indices.

    Raises
    ------
    InputError
        Bad parameters (named), or when no user is eligible for test.
    """
    func = "split_reco_train_test"
    draw = _validate(
        X,
        split_type,
        users_test_fraction,
        max_test_users,
        items_test_fraction,
        min_items_pool,
        min_pos_test,
        consider_cold_start,
        seed,
        func,
    )
    users_test, users_rem, is_test = _masks(draw)
    X, split_type = draw.X, draw.split_type
    if split_type == "all":
        all_rows = np.arange(X.shape[0])
        return _rows(X, all_rows, ~is_test), _rows(X, all_rows, is_test)
    X_train = _rows(X, users_test, ~is_test)
    X_test = _rows(X, users_test, is_test)
    users_out = users_test.astype(np.int32)
    if split_type == "separated":
        return _rows(X, users_rem), X_train, X_test, users_out
    X_rem = _rows(X, users_rem)
    joined = sp.csr_array(sp.vstack([X_train, X_rem], format="csr"))
    joined = sp.csr_array(
        (joined.data, joined.indices.astype(np.int32), joined.indptr.astype(np.int32)),
        shape=joined.shape,
    )
    return joined, X_test, users_out


def recometrics_split(
    interactions: Interactions,
    split_type: str = "separated",
    users_test_fraction: float | None = 0.1,
    max_test_users: int | None = 10000,
    items_test_fraction: float = 0.3,
    min_items_pool: int = 2,
    min_pos_test: int = 1,
    consider_cold_start: bool = False,
    seed: int = 1,
) -> Split:
    """recometrics' split as a :class:`Split` of the same shape as the input.

    The same entries go to test as with :func:`split_reco_train_test` and the same arguments;
    train holds everything else (for ``separated``/``joined``, the non-test users keep all their
    entries in train; the two types give the same partition). Timestamps follow their entries.
    """
    func = "recometrics_split"
    X = Interactions.checked(interactions, func)
    draw = _validate(
        X.matrix,
        split_type,
        users_test_fraction,
        max_test_users,
        items_test_fraction,
        min_items_pool,
        min_pos_test,
        consider_cold_start,
        seed,
        func,
    )
    users_test, _, is_test = _masks(draw)
    part = np.where(is_test, TEST, TRAIN)
    params = {
        "split_type": draw.split_type,
        "users_test_fraction": users_test_fraction,
        "max_test_users": max_test_users,
        "items_test_fraction": draw.items_test_fraction,
        "min_items_pool": draw.min_items_pool,
        "min_pos_test": draw.min_pos_test,
        "consider_cold_start": draw.consider_cold_start,
        "seed": draw.seed,
    }
    return split_from_parts(
        X, part, "recometrics", params, details={"selected_test_users": int(users_test.shape[0])}
    )
