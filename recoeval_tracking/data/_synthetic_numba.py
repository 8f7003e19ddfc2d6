"""The synthetic generator's per-user draws as one parallel numba pass, for large data.

The same draws as :func:`recoeval_tracking.data._synthetic._generate` (numpy, nothing to
compile), one user per iteration: it pays for its compile (some 10 s on 2 cores, once: it is
cached) only from a few million interactions on, so :func:`~recoeval_tracking.make_synthetic`
calls it from there only. Tested against the same plain-Python reference.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numba import njit, prange

if TYPE_CHECKING:
    from ._synthetic import TopicModel

_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, inline="always")
def _splitmix(state: np.uint64) -> tuple:  # pragma: no cover - compiled
    """SplitMix64 (Steele, Lea & Flood 2014): next state and a uniform in [0, 1)."""
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return state, float(z >> _S11) * (1.0 / 9007199254740992.0)


@njit(cache=True, inline="always")
def _draw_one(
    state: np.uint64, r: int, model: TopicModel, explore: float, uniform: bool
) -> tuple:  # pragma: no cover - compiled
    """One item of user ``r``'s draw from ``state``: (the state after it, the item)."""
    n_items = model.global_cdf.shape[0]
    state, u1 = _splitmix(state)
    if uniform:
        return state, min(int(u1 * n_items), n_items - 1)
    state, u2 = _splitmix(state)
    if u1 < explore:
        j = np.searchsorted(model.global_cdf, u2, side="right")
        return state, min(j, n_items - 1)
    state, u3 = _splitmix(state)
    k = model.cum_theta.shape[1]
    t = 0
    while t < k - 1 and model.cum_theta[r, t] <= u3:
        t += 1
    lo = model.topic_start[t]
    hi = model.topic_start[t + 1]
    j = lo + np.searchsorted(model.item_cdf[lo:hi], u2, side="right")
    return state, model.topic_items[min(j, hi - 1)]


@njit(cache=True, parallel=True)
def _generate(
    indptr: np.ndarray,
    seeds: np.ndarray,
    model: TopicModel,
    items: np.ndarray,
    values: np.ndarray,
    times: np.ndarray,
    rounds: np.ndarray,
) -> None:  # pragma: no cover - compiled
    """One pass per user (parallel over users): draw distinct items, ratings and timestamps.

    Each user has its own SplitMix64 stream seeded from ``seeds[u]``, so the output does not
    depend on the thread count or schedule. Repeated items are redrawn, exploring more each
    round (after 4 rounds uniformly over the catalogue) until the user has ``indptr[u+1] -
    indptr[u]`` distinct items; ``rounds[u]`` records the redraw rounds.
    """
    n_users = indptr.shape[0] - 1
    k = model.theta.shape[1]
    for u in prange(n_users):
        lo = indptr[u]
        need = indptr[u + 1] - lo
        if need == 0:
            continue
        state = seeds[u]
        buf = np.empty(need, dtype=np.int64)
        filled = 0
        attempt = 0
        while filled < need:
            explore = min(1.0, model.noise + 0.25 * attempt)
            for j in range(filled, need):
                state, it = _draw_one(state, u, model, explore, attempt > 4)
                buf[j] = it
            buf.sort()
            filled = 1
            for j in range(1, need):
                if buf[j] != buf[filled - 1]:
                    buf[filled] = buf[j]
                    filled += 1
            attempt += 1
        rounds[u] = attempt - 1
        for j in range(need):
            it = buf[j]
            items[lo + j] = it
            state, v1 = _splitmix(state)
            state, v2 = _splitmix(state)
            gauss = np.sqrt(-2.0 * np.log(1.0 - v1)) * np.cos(2.0 * np.pi * v2)
            pref = max(model.theta[u, model.topic_of[it]] * k, 1e-12)
            values[lo + j] = min(5.0, max(1.0, np.rint(3.0 + np.log(pref) + 0.8 * gauss)))
            state, v3 = _splitmix(state)
            times[lo + j] = model.win_start[u] + int(v3 * model.win_len[u])


def generate(
    counts: np.ndarray, seeds: np.ndarray, model: TopicModel
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """:func:`recoeval_tracking.data._synthetic._generate`'s draws (the same arguments) by
    :func:`_generate`."""
    n_users = counts.shape[0]
    indptr = np.zeros(n_users + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    nnz = int(indptr[-1])
    items = np.empty(nnz, dtype=np.int64)
    values = np.empty(nnz, dtype=np.float64)
    times = np.empty(nnz, dtype=np.int64)
    rounds = np.zeros(n_users, dtype=np.int64)
    cast(Any, _generate)(indptr, seeds, model, items, values, times, rounds)
    return items, values, times, int(rounds.max()) if n_users else 0
