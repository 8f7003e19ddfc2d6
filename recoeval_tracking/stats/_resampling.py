"""Resampling as matrix products, shared by many columns: the seeded bootstrap counts and
sign flips behind the intervals and the randomisation test.

A bootstrap replicate is a vector of counts ``w`` (how often each user is drawn, ``sum(w) = n``)
and its mean is ``w·x / n``; a sign-flip replicate is a vector of signs ``s`` and its statistic is
``s·d``. The draws depend only on ``seed`` and ``n`` (never on the values), so a column gets the
same result alone or together with others (Efron & Tibshirani 1993, "An introduction to the
bootstrap"; Fisher 1935 and, for IR evaluation, Smucker, Allan & Carterette 2007 for the
sign flips).
"""

from __future__ import annotations

import numpy as np

from .._validation import check_int, check_seed, param_error

__all__ = [
    "bootstrap_counts",
    "bootstrap_means",
    "sign_flips",
    "all_sign_vectors",
    "auto_permutations",
    "randomization_pvalues",
    "FLIP_BLOCK",
]

_CHUNK_ELEMENTS = 24_000_000  # draws materialised at a time (96 MB as float32)


def bootstrap_counts(
    n: int, n_resamples: int, seed: int, start: int = 0, stop: int | None = None
) -> np.ndarray:
    """Counts of each of ``n`` items in bootstrap resamples ``start..stop-1`` of a seeded series.

    Resample ``b`` draws ``n`` indices uniformly with replacement
    (``numpy.random.default_rng([seed, n, b]).integers(0, n, n)``) and counts them: the counts
    ``w_b`` with ``sum(w_b) = n`` whose replicate mean is ``w_b·x / n`` (the nonparametric
    bootstrap, Efron & Tibshirani 1993, ch. 6). Each resample has its own stream, so any slice
    of the series can be produced without the rest.

    Returns
    -------
    numpy.ndarray of float32 (counts are exact), shape (stop - start, n)

    Examples
    --------
    Each resample draws ``n`` users, and a slice of the series is the same rows of the whole:

    >>> w = bootstrap_counts(5, 3, seed=0)
    >>> w.shape, w.sum(axis=1).tolist()
    ((3, 5), [5.0, 5.0, 5.0])
    >>> bool((bootstrap_counts(5, 3, seed=0, start=1, stop=3) == w[1:]).all())
    True
    """
    stop = n_resamples if stop is None else stop
    out = np.empty((stop - start, n), dtype=np.float32)
    for row, b in enumerate(range(start, stop)):
        idx = np.random.default_rng([seed, n, b]).integers(0, n, n)
        out[row] = np.bincount(idx, minlength=n)
    return out


def bootstrap_means(X: np.ndarray, n_resamples: int = 1000, seed: int = 0) -> np.ndarray:
    """Bootstrap replicates of the mean of every column of ``X`` over its defined rows.

    Replicate ``b`` of column ``j`` is

    .. math:: \\bar x^{*b}_j = \\frac{\\sum_i w_{bi} m_{ij} x_{ij}}{\\sum_i w_{bi} m_{ij}}

    with ``w_b`` the counts of :func:`bootstrap_counts` (the rows are the resampled units) and
    ``m_ij = 1`` where ``x_ij`` is defined (not NaN): for one column without NaN this is the
    ordinary bootstrap of the mean (Efron & Tibshirani 1993); with NaN it is the bootstrap of the
    mean over defined users with the users as the resampled units.

    Parameters
    ----------
    X : array of shape (n, p)
        One column per quantity; rows are users.
    n_resamples : int
    seed : int

    Returns
    -------
    numpy.ndarray of shape (n_resamples, p)
        NaN where a replicate drew no defined row of a column.

    Examples
    --------
    Without NaN a replicate is ``w·x / n`` for the counts ``w`` of :func:`bootstrap_counts`:

    >>> x = np.array([1.0, 2.0, 3.0, 4.0])
    >>> w = bootstrap_counts(4, 5, seed=0)
    >>> bool(np.allclose(bootstrap_means(x[:, None], 5, seed=0)[:, 0], w @ x / 4))
    True
    """
    func = "bootstrap_means"
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise param_error("X", func, "a 2-d array (users x columns)", X)
    n_resamples = check_int(n_resamples, "n_resamples", func, minimum=1)
    seed = check_seed(seed, func)
    n, p = X.shape
    out = np.full((n_resamples, p), np.nan)
    if n == 0 or p == 0:
        return out
    mask = ~np.isnan(X)
    # (p, n) C-contiguous: "columns @ counts.T" is the fast layout for BLAS here.
    # Products in float32 (counts are exact; a mean's relative rounding error stays below
    # ~1e-6, far inside any interval's width), which halves the memory traffic.
    values_t = np.ascontiguousarray(np.where(mask, X, 0.0).T, dtype=np.float32)
    masks_t, pattern_of = _distinct_masks(mask)
    step = max(1, _CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        W_t = bootstrap_counts(n, n_resamples, seed, start, stop).T
        num = (values_t @ W_t).astype(np.float64)
        den = (masks_t @ W_t).astype(np.float64)[pattern_of]
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start:stop] = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan).T
    return out


def _distinct_masks(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of a boolean (n, p) mask as float rows (q, n), and each column's row.

    Columns share their denominators when they share their NaN pattern (the common case: runs
    evaluated on the same users), so only the distinct patterns are multiplied.
    """
    packed = np.packbits(mask, axis=0)
    seen: dict[bytes, int] = {}
    pattern_of = np.empty(mask.shape[1], dtype=np.int64)
    keep: list[int] = []
    for j in range(mask.shape[1]):
        key = packed[:, j].tobytes()
        if key not in seen:
            seen[key] = len(keep)
            keep.append(j)
        pattern_of[j] = seen[key]
    return np.ascontiguousarray(mask[:, keep].T, dtype=np.float32), pattern_of


#: Sign-flip replicates drawn from one random stream (a block); replicate ``r`` is row
#: ``r % FLIP_BLOCK`` of block ``r // FLIP_BLOCK``.
FLIP_BLOCK = 1024


def sign_flips(n: int, start: int, stop: int, seed: int) -> np.ndarray:
    """Random signs for sign-flip replicates ``start..stop-1`` of a seeded series over ``n`` users.

    The replicates come in blocks of :data:`FLIP_BLOCK`: block ``b`` is the bit stream
    ``numpy.random.default_rng([seed, n, b]).bytes(FLIP_BLOCK * ceil(n / 8))``, one row of
    ``ceil(n / 8)`` bytes per replicate, whose first ``n`` bits (``numpy.unpackbits`` order) are
    the replicate's flips (bit 1 is -1). A replicate depends only on ``(seed, n, r)``, so any
    slice of the series agrees with the whole. Replicate ``r``'s statistic is ``s_r·d``, the
    sum of the differences with their signs flipped where ``s_r = -1`` (the randomisation test
    of Fisher 1935).

    Returns
    -------
    numpy.ndarray of float32, shape (stop - start, n), entries ±1

    Examples
    --------
    >>> s = sign_flips(10, 0, 2000, seed=0)
    >>> sorted(set(s.ravel().tolist()))
    [-1.0, 1.0]
    >>> bool((sign_flips(10, 1500, 1600, seed=0) == s[1500:1600]).all())  # across two blocks
    True
    """
    n_bytes = (n + 7) // 8
    out = np.empty((stop - start, n), dtype=np.float32)
    row = 0
    for block in range(start // FLIP_BLOCK, (stop - 1) // FLIP_BLOCK + 1 if stop > start else 0):
        lo, hi = max(start, block * FLIP_BLOCK), min(stop, (block + 1) * FLIP_BLOCK)
        raw = np.frombuffer(
            np.random.default_rng([seed, n, block]).bytes(FLIP_BLOCK * n_bytes), dtype=np.uint8
        ).reshape(FLIP_BLOCK, n_bytes)
        bits = np.unpackbits(raw[lo - block * FLIP_BLOCK : hi - block * FLIP_BLOCK], axis=1)[:, :n]
        out[row : row + hi - lo] = 1.0 - 2.0 * bits
        row += hi - lo
    return out


def all_sign_vectors(n: int) -> np.ndarray:
    """Every one of the ``2^n`` sign vectors over ``n`` users (row ``r`` flips user ``i`` when bit
    ``i`` of ``r`` is 1), as float32 of shape ``(2^n, n)``: the sign vectors of the exact
    randomisation test (Fisher 1935).

    Examples
    --------
    >>> all_sign_vectors(2).tolist()  # r = 0, 1, 2, 3: bits (00, 01, 10, 11) read from user 0
    [[1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]]
    """
    r = np.arange(2**n, dtype=np.int64)[:, None]
    return (1.0 - 2.0 * ((r >> np.arange(n, dtype=np.int64)) & 1)).astype(np.float32)


def auto_permutations(family_size: int, floor: int = 1000, cap: int = 100_000) -> int:
    """Sign vectors enough for the smallest adjusted p-value of a family to reach ``0.0005``:
    with ``R`` vectors the smallest p is ``1 / (R + 1)``, which Holm or Bonferroni over ``m``
    comparisons multiply by ``m``; so ``R = 2000 m``, at least ``floor`` and at most ``cap``
    (past ``cap``, about 50 comparisons per table, the floor is stated in the report). The
    smallest p of ``R`` vectors is that of Phipson & Smyth (2010), ``1 / (R + 1)``.

    Examples
    --------
    >>> auto_permutations(1), auto_permutations(3), auto_permutations(100)
    (2000, 6000, 100000)
    """
    return int(min(cap, max(floor, 2000 * int(family_size))))


def randomization_pvalues(D: np.ndarray, n_permutations: int = 1000, seed: int = 0) -> np.ndarray:
    """Two-sided paired randomisation (sign-flip) p-values for every column of differences ``D``.

    Under the null hypothesis that the two runs are exchangeable for each user, every difference
    ``d_i`` is as likely to have the opposite sign (Fisher 1935; for IR evaluation, Smucker, Allan &
    Carterette 2007). With ``T = |sum_i d_i|`` and ``T_r = |sum_i s_ri d_i|`` for ``R`` random sign
    vectors ``s_r`` (:func:`sign_flips`),

    .. math:: p = \\frac{1 + \\#\\{r : T_r \\ge T\\}}{1 + R}

    which is never 0 (Phipson & Smyth 2010). When ``2^n <= R`` the test is exact instead: every
    one of the ``2^n`` sign vectors (:func:`all_sign_vectors`, the identity among them) is
    enumerated and ``p = #{s : T_s >= T} / 2^n``. NaN differences (a user undefined in either run)
    count as 0: they take no part in any sum, which is the test over the defined users with the
    same draws for every column of the same length. The products run in float32 (the sign
    vectors are exact; the values are rounded to float32 first), and ``T_r >= T`` is judged with
    a tolerance of ``1e-6 sum_i |d_i|`` so that replicates equal to the observed sum in exact
    arithmetic count despite rounding.

    Parameters
    ----------
    D : array of shape (n,) or (n, p)
        Paired differences, one column per comparison.
    n_permutations : int
        ``R``, the number of random sign vectors (the report states it).
    seed : int

    Returns
    -------
    numpy.ndarray of shape (p,)
        1.0 for a column whose defined differences are all zero (no evidence either way).

    Examples
    --------
    Three users, ``2^3 = 8 <= R`` sign vectors: exact. ``|±1 ±2 ±3|`` reaches ``T = 6`` for
    the two vectors of one sign only, so ``p = 2/8``:

    >>> randomization_pvalues([1.0, 2.0, 3.0], 1000).tolist()
    [0.25]
    """
    func = "randomization_pvalues"
    D = np.asarray(D, dtype=np.float64)
    if D.ndim == 1:
        D = D[:, None]
    if D.ndim != 2:
        raise param_error("D", func, "a 1-d or 2-d array of differences", D)
    R = check_int(n_permutations, "n_permutations", func, minimum=1)
    seed = check_seed(seed, func)
    n, p = D.shape
    values_t = np.ascontiguousarray(np.where(np.isnan(D), 0.0, D).T, dtype=np.float32)
    observed = np.abs(values_t.sum(axis=1, dtype=np.float64))
    scale = np.abs(values_t).sum(axis=1, dtype=np.float64)
    threshold = observed - 1e-6 * scale
    exceed = np.zeros(p, dtype=np.int64)
    if n < 62 and 2**n <= R:
        signs = all_sign_vectors(n)
        exceed += (np.abs(values_t @ signs.T) >= threshold[:, None]).sum(axis=1)
        exact = exceed / float(2**n)
        exact[scale == 0] = 1.0
        return exact
    step = max(1, _CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, R, step):
        stop = min(R, start + step)
        S_t = sign_flips(n, start, stop, seed).T
        exceed += (np.abs(values_t @ S_t) >= threshold[:, None]).sum(axis=1)
    pvals = (1.0 + exceed) / (1.0 + R)
    pvals[scale == 0] = 1.0
    return pvals


def _exact_means(v: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """The bootstrap replicate means of the 1-d ``v`` from the draws of :func:`bootstrap_counts`
    (those of :func:`bootstrap_means`), in float64: ``w·v / n``."""
    n = v.size
    out = np.empty(n_resamples)
    step = max(1, _CHUNK_ELEMENTS // max(n, 1))
    for start in range(0, n_resamples, step):
        stop = min(n_resamples, start + step)
        out[start:stop] = bootstrap_counts(n, n_resamples, seed, start, stop).astype(np.float64) @ v
    return out / n
