"""Split strategies: random holdout, leave-N-out, temporal, k-fold; and the registry.

Every strategy takes an :class:`~recoeval_tracking.data.Interactions` and keyword parameters,
is seeded through ``numpy.random.default_rng(seed)``, is fully vectorised (no Python loop over
users or interactions) and returns a :class:`Split` (k-fold: a list, one per fold) whose parts
keep the input's shape and id maps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._validation import (
    InputError,
    check_fraction,
    check_int,
    check_known_params,
    check_seed,
    param_error,
)
from ..data import Interactions
from ._recometrics import recometrics_split
from ._split import (
    TEST,
    TRAIN,
    VALIDATION,
    Split,
    random_row_rank,
    round_half_up,
    split_from_parts,
    within_row_rank,
)

__all__ = [
    "random_holdout",
    "leave_n_out",
    "leave_one_out",
    "temporal_global",
    "temporal_user",
    "kfold",
    "user_kfold",
    "SPLITS",
    "make_split",
]


def _test_counts(
    n: np.ndarray,
    fraction: float | None,
    count: int | None,
    min_train: int,
) -> tuple[np.ndarray, int]:
    """Per-user test counts: ``round(n * fraction)`` (halves up, as recometrics) or ``count``,
    capped so that ``min_train`` entries stay in train. Returns counts and users capped."""
    target = round_half_up(n * fraction) if fraction is not None else np.full_like(n, count)
    allowed = np.maximum(n - min_train, 0)
    capped = int(np.count_nonzero(target > allowed))
    return np.minimum(target, allowed), capped


def _fraction_or_count(fraction: Any, count: Any, func: str, default: float) -> tuple:
    if count is not None:
        if fraction is not None:
            raise InputError(f"Pass either 'test_fraction' or 'test_count' to {func}, not both.")
        return None, check_int(count, "test_count", func, minimum=1)
    frac = check_fraction(default if fraction is None else fraction, "test_fraction", func)
    return frac, None


def _require_test(split: Split, func: str) -> Split:
    if split.test.nnz == 0:
        raise InputError(
            f"{func}: the split leaves no test user (0 test interactions with "
            f"{split.params}); lower 'min_train' or raise the test size."
        )
    return split


def _require_timestamps(X: Interactions, func: str) -> np.ndarray:
    if X.timestamps is None:
        raise param_error(
            "interactions",
            func,
            "Interactions with timestamps",
            "data without timestamps",
            "Load a file with a timestamp column or use a random split.",
            got_is_text=True,
        )
    return np.asarray(X.timestamps.data, dtype=np.int64)


def random_holdout(
    interactions: Interactions,
    test_fraction: float | None = None,
    test_count: int | None = None,
    *,
    validation_fraction: float | None = None,
    validation_count: int | None = None,
    min_train: int = 1,
    seed: int = 0,
) -> Split:
    """Random per-user holdout (LensKit ``SampleFrac`` / ``SampleN``).

    Each user's test size is ``round(n_u * test_fraction)`` with halves rounded up, as
    recometrics' ``split_reco_train_test`` does, or ``test_count``; in both cases capped at
    ``n_u - min_train`` so that ``min_train`` entries stay in train (the number of capped users
    is in ``details``). The test entries are a uniformly random subset of the user's entries.
    An optional validation part is drawn the same way from what is left (fraction of ``n_u``).

    Parameters
    ----------
    interactions : Interactions
    test_fraction : float in (0, 1), optional
        Default 0.2 when neither it nor ``test_count`` is given.
    test_count : int >= 1, optional
    validation_fraction, validation_count : optional
        Size of a validation part (none by default).
    min_train : int >= 0
        Entries each user keeps in train (users with fewer get no test entries).
    seed : int
    """
    func = "random_holdout"
    X = Interactions.checked(interactions, func)
    frac, count = _fraction_or_count(test_fraction, test_count, func, 0.2)
    vfrac = check_fraction(validation_fraction, "validation_fraction", func, allow_none=True)
    vcount = (
        None
        if validation_count is None
        else check_int(validation_count, "validation_count", func, minimum=1)
    )
    min_train = check_int(min_train, "min_train", func, minimum=0)
    seed = check_seed(seed, func)
    rng = np.random.default_rng(seed)
    n = X.user_counts()
    n_test, capped = _test_counts(n, frac, count, min_train)
    rank = random_row_rank(X, rng)
    rows = X.row_of_entries()
    part = np.where(rank < n_test[rows], TEST, TRAIN)
    details = {"users_capped_by_min_train": capped}
    if vfrac is not None or vcount is not None:
        if vfrac is not None and vcount is not None:
            raise InputError(
                f"Pass either 'validation_fraction' or 'validation_count' to {func}, not both."
            )
        target = round_half_up(n * vfrac) if vfrac is not None else np.full_like(n, vcount)
        allowed = np.maximum(n - n_test - min_train, 0)
        n_val = np.minimum(target, allowed)
        part = np.where((rank >= n_test[rows]) & (rank < (n_test + n_val)[rows]), VALIDATION, part)
        details["validation_users_capped"] = int(np.count_nonzero(target > allowed))
    params = {
        "test_fraction": frac,
        "test_count": count,
        "validation_fraction": vfrac,
        "validation_count": vcount,
        "min_train": min_train,
        "seed": seed,
    }
    return _require_test(split_from_parts(X, part, "random", params, details=details), func)


def leave_n_out(
    interactions: Interactions,
    n: int = 1,
    *,
    order: str = "random",
    min_train: int = 1,
    validation_n: int = 0,
    seed: int = 0,
) -> Split:
    """Leave-N-out: ``n`` entries of each user go to test (and ``validation_n`` to validation).

    ``order="random"`` picks them uniformly at random; ``order="latest"`` picks the user's
    latest by timestamp (ties broken at random with ``seed``), with validation the next latest
    (LensKit ``LastN``). Users with fewer than ``n + validation_n + min_train`` entries give
    what they can while keeping ``min_train`` in train (counted in ``details``).
    """
    func = "leave_n_out"
    X = Interactions.checked(interactions, func)
    n = check_int(n, "n", func, minimum=1)
    validation_n = check_int(validation_n, "validation_n", func, minimum=0)
    min_train = check_int(min_train, "min_train", func, minimum=0)
    if order not in ("random", "latest"):
        raise param_error("order", func, "'random' or 'latest'", order)
    seed = check_seed(seed, func)
    rng = np.random.default_rng(seed)
    counts = X.user_counts()
    if order == "random":
        rank = random_row_rank(X, rng)
    else:
        ts = _require_timestamps(X, func)
        # rank 0 = latest: sort by -timestamp, random ties
        rank = within_row_rank(X, -ts, random_ties=rng.random(X.nnz))
    n_test, capped = _test_counts(counts, None, n, min_train)
    rows = X.row_of_entries()
    part = np.where(rank < n_test[rows], TEST, TRAIN)
    details = {"users_capped_by_min_train": capped}
    if validation_n:
        n_val, vcapped = _test_counts(counts - n_test, None, validation_n, min_train)
        part = np.where((rank >= n_test[rows]) & (rank < (n_test + n_val)[rows]), VALIDATION, part)
        details["validation_users_capped"] = vcapped
    params = {
        "n": n,
        "order": order,
        "min_train": min_train,
        "validation_n": validation_n,
        "seed": seed,
    }
    name = "leave_one_out" if n == 1 else "leave_n_out"
    return _require_test(split_from_parts(X, part, name, params, details=details), func)


def leave_one_out(
    interactions: Interactions,
    *,
    order: str = "random",
    min_train: int = 1,
    validation: bool = False,
    seed: int = 0,
) -> Split:
    """Leave-one-out: one entry per user in test (random, or the latest with
    ``order="latest"``); see :func:`leave_n_out`."""
    return leave_n_out(
        interactions,
        1,
        order=order,
        min_train=min_train,
        validation_n=1 if validation else 0,
        seed=seed,
    )


def temporal_global(
    interactions: Interactions,
    cut: int | None = None,
    quantile: float | None = None,
    *,
    validation_cut: int | None = None,
    validation_quantile: float | None = None,
    seed: int = 0,
) -> Split:
    """Global temporal cut: entries with timestamp >= the cut are test, the rest train.

    The cut is a timestamp (``cut``) or the ``quantile`` of all timestamps (default 0.8),
    taken as ``numpy.quantile(ts, quantile, method="higher")`` so the cut is a stored
    timestamp and entries tied with it go to test. An optional
    validation cut (earlier) gives train < validation_cut <= validation < cut <= test. No test
    entry is ever earlier than a train entry. ``seed`` is accepted for a uniform interface and
    unused (the split is deterministic).
    """
    func = "temporal_global"
    X = Interactions.checked(interactions, func)
    ts = _require_timestamps(X, func)
    seed = check_seed(seed, func)

    def _cut(c: Any, q: Any, cname: str, qname: str, default: float | None) -> int | None:
        if c is not None and q is not None:
            raise InputError(f"Pass either '{cname}' or '{qname}' to {func}, not both.")
        if c is not None:
            return check_int(c, cname, func)
        q = check_fraction(default if q is None else q, qname, func, allow_none=True)
        if q is None:
            return None
        return int(np.quantile(ts, q, method="higher")) if ts.shape[0] else 0

    t_cut = _cut(cut, quantile, "cut", "quantile", 0.8)
    v_cut = _cut(validation_cut, validation_quantile, "validation_cut", "validation_quantile", None)
    if v_cut is not None and v_cut > t_cut:
        raise param_error("validation_cut", func, f"<= the test cut ({t_cut})", v_cut)
    part = np.where(ts >= t_cut, TEST, TRAIN)
    if v_cut is not None:
        part = np.where((ts >= v_cut) & (ts < t_cut), VALIDATION, part)
    params = {
        "cut": t_cut,
        "quantile": quantile,
        "validation_cut": v_cut,
        "validation_quantile": validation_quantile,
        "seed": seed,
    }
    return _require_test(split_from_parts(X, part, "temporal_global", params), func)


def temporal_user(
    interactions: Interactions,
    test_fraction: float | None = None,
    test_count: int | None = None,
    *,
    min_train: int = 1,
    seed: int = 0,
) -> Split:
    """Per-user temporal holdout: each user's latest ``round(n_u * test_fraction)`` (halves
    up) or ``test_count`` entries by timestamp go to test, capped to keep ``min_train``.

    Within a user no test entry is earlier than a train entry; ties at the boundary are broken
    at random with ``seed``.
    """
    func = "temporal_user"
    X = Interactions.checked(interactions, func)
    ts = _require_timestamps(X, func)
    frac, count = _fraction_or_count(test_fraction, test_count, func, 0.2)
    min_train = check_int(min_train, "min_train", func, minimum=0)
    seed = check_seed(seed, func)
    rng = np.random.default_rng(seed)
    rank = within_row_rank(X, -ts, random_ties=rng.random(X.nnz))
    n_test, capped = _test_counts(X.user_counts(), frac, count, min_train)
    part = np.where(rank < n_test[X.row_of_entries()], TEST, TRAIN)
    params = {"test_fraction": frac, "test_count": count, "min_train": min_train, "seed": seed}
    return _require_test(
        split_from_parts(
            X, part, "temporal_user", params, details={"users_capped_by_min_train": capped}
        ),
        func,
    )


def kfold(
    interactions: Interactions,
    n_folds: int = 5,
    *,
    validation_fraction: float | None = None,
    seed: int = 0,
) -> list[Split]:
    """K-fold over each user's interactions (Recommendation.jl ``cross_validation``, stratified
    by user).

    Each user's entries are shuffled and dealt to the folds in turn, starting at a random fold,
    so the folds partition every user's entries and per-user fold sizes differ by at most one.
    Fold ``i`` tests on its entries and trains on the other folds. Returns ``n_folds`` splits.

    ``validation_fraction`` gives each fold an inner validation part, for choosing
    configurations without the fold's test entries: ``round(n_u * validation_fraction)`` of
    each user's training entries (halves up; at least one entry stays in train), drawn at
    random from the fold's train part with a generator of its own (``seed``, fold), so the
    folds themselves are those of the same ``seed`` without it.
    """
    func = "kfold"
    X = Interactions.checked(interactions, func)
    n_folds = check_int(n_folds, "n_folds", func, minimum=2)
    vfrac = check_fraction(validation_fraction, "validation_fraction", func, allow_none=True)
    seed = check_seed(seed, func)
    rng = np.random.default_rng(seed)
    rank = random_row_rank(X, rng)
    rows = X.row_of_entries()
    offset = rng.integers(0, n_folds, X.n_users)
    fold_of = (rank + offset[rows]) % n_folds
    params: dict[str, Any] = {"n_folds": n_folds, "seed": seed}
    if vfrac is not None:
        params["validation_fraction"] = vfrac
    out = []
    for f in range(n_folds):  # loop over folds, not users
        part = np.where(fold_of == f, TEST, TRAIN)
        details: dict[str, Any] = {}
        if vfrac is not None:
            part, details["validation_users_capped"] = _inner_validation(
                X, part, rows, vfrac, np.random.default_rng([seed, f])
            )
        out.append(split_from_parts(X, part, "kfold", params, fold=f, details=details))
    return out


def _inner_validation(
    X: Interactions, part: np.ndarray, rows: np.ndarray, vfrac: float, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """``part`` with ``round(n_u * vfrac)`` random training entries of each user moved to
    VALIDATION (at most all but one of the user's training entries); and how many users were
    capped so."""
    train = part == TRAIN
    key = np.where(train, rng.random(X.nnz), np.inf)  # training entries first, in random order
    vrank = within_row_rank(X, key)
    n_train = np.bincount(rows[train], minlength=X.n_users)
    target = round_half_up(X.user_counts() * vfrac)
    allowed = np.maximum(n_train - 1, 0)
    n_val = np.minimum(target, allowed)
    return np.where(train & (vrank < n_val[rows]), VALIDATION, part), int(
        np.count_nonzero(target > allowed)
    )


def user_kfold(
    interactions: Interactions,
    n_folds: int = 5,
    *,
    test_fraction: float | None = None,
    test_count: int | None = None,
    min_train: int = 1,
    seed: int = 0,
) -> list[Split]:
    """K-fold over users (LensKit ``crossfold_users``): users are partitioned into ``n_folds``
    random groups of sizes differing by at most one; in fold ``i`` the users of group ``i``
    hold out ``round(n_u * test_fraction)`` (default 0.2) or ``test_count`` random entries,
    everything else is train.
    """
    func = "user_kfold"
    X = Interactions.checked(interactions, func)
    n_folds = check_int(n_folds, "n_folds", func, minimum=2)
    frac, count = _fraction_or_count(test_fraction, test_count, func, 0.2)
    min_train = check_int(min_train, "min_train", func, minimum=0)
    seed = check_seed(seed, func)
    rng = np.random.default_rng(seed)
    active = np.flatnonzero(X.user_counts() > 0)
    if active.shape[0] < n_folds:
        raise param_error(
            "n_folds",
            func,
            f"<= the number of users with interactions ({active.shape[0]})",
            n_folds,
        )
    group = np.full(X.n_users, -1, dtype=np.int64)
    group[rng.permutation(active)] = np.arange(active.shape[0]) % n_folds
    rank = random_row_rank(X, rng)
    n_test, capped = _test_counts(X.user_counts(), frac, count, min_train)
    rows = X.row_of_entries()
    holdout = rank < n_test[rows]
    params = {
        "n_folds": n_folds,
        "test_fraction": frac,
        "test_count": count,
        "min_train": min_train,
        "seed": seed,
    }
    out = []
    for f in range(n_folds):  # loop over folds, not users
        part = np.where(holdout & (group[rows] == f), TEST, TRAIN)
        out.append(
            _require_test(
                split_from_parts(
                    X,
                    part,
                    "user_kfold",
                    params,
                    fold=f,
                    details={"users_capped_by_min_train": capped},
                ),
                func,
            )
        )
    return out


#: Split strategies by name: callables ``(interactions, **params) -> Split | list[Split]``.
SPLITS: dict[str, Callable[..., Split | list[Split]]] = {
    "random": random_holdout,
    "leave_one_out": leave_one_out,
    "leave_n_out": leave_n_out,
    "temporal_global": temporal_global,
    "temporal_user": temporal_user,
    "kfold": kfold,
    "user_kfold": user_kfold,
    "recometrics": recometrics_split,
}


def make_split(name: str, interactions: Interactions, **params: Any) -> Split | list[Split]:
    """Run the split strategy ``name`` (a key of :data:`SPLITS`) with plain parameters."""
    if name not in SPLITS:
        raise param_error("name", "make_split", f"one of {sorted(SPLITS)}", name)
    check_known_params(SPLITS[name], params, f"make_split({name!r})", skip=1)
    return SPLITS[name](interactions, **params)
