"""Seeded synthetic implicit-feedback data with learnable latent structure."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit, prange

from .._validation import check_in_range, check_int, check_seed
from ._interactions import Interactions, PrepReport

__all__ = ["make_synthetic"]


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)


@njit(cache=True, inline="always")
def _splitmix(state: np.uint64) -> tuple:  # pragma: no cover - compiled
    """SplitMix64 (Steele, Lea & Flood 2014): next state and a uniform in [0, 1)."""
    state = state + _GOLDEN
    z = state
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    z = z ^ (z >> _S31)
    return state, float(z >> _S11) * (1.0 / 9007199254740992.0)


@njit(cache=True)
def _draw_one(
    state: np.uint64,
    r: int,
    cum_theta: np.ndarray,
    item_cdf: np.ndarray,
    topic_start: np.ndarray,
    topic_items: np.ndarray,
    global_cdf: np.ndarray,
    explore: float,
    uniform: bool,
) -> tuple:  # pragma: no cover - compiled
    n_items = global_cdf.shape[0]
    state, u1 = _splitmix(state)
    if uniform:
        return state, min(int(u1 * n_items), n_items - 1)
    state, u2 = _splitmix(state)
    if u1 < explore:
        j = np.searchsorted(global_cdf, u2, side="right")
        return state, min(j, n_items - 1)
    state, u3 = _splitmix(state)
    k = cum_theta.shape[1]
    t = 0
    while t < k - 1 and cum_theta[r, t] <= u3:
        t += 1
    lo = topic_start[t]
    hi = topic_start[t + 1]
    j = lo + np.searchsorted(item_cdf[lo:hi], u2, side="right")
    return state, topic_items[min(j, hi - 1)]


@njit(cache=True, parallel=True)
def _generate(
    indptr: np.ndarray,
    seeds: np.ndarray,
    cum_theta: np.ndarray,
    theta: np.ndarray,
    topic_of: np.ndarray,
    item_cdf: np.ndarray,
    topic_start: np.ndarray,
    topic_items: np.ndarray,
    global_cdf: np.ndarray,
    noise: float,
    win_start: np.ndarray,
    win_len: np.ndarray,
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
    k = theta.shape[1]
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
            explore = min(1.0, noise + 0.25 * attempt)
            for j in range(filled, need):
                state, it = _draw_one(
                    state,
                    u,
                    cum_theta,
                    item_cdf,
                    topic_start,
                    topic_items,
                    global_cdf,
                    explore,
                    attempt > 4,
                )
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
            pref = max(theta[u, topic_of[it]] * k, 1e-12)
            values[lo + j] = min(5.0, max(1.0, np.rint(3.0 + np.log(pref) + 0.8 * gauss)))
            state, v3 = _splitmix(state)
            times[lo + j] = win_start[u] + int(v3 * win_len[u])


def make_synthetic(
    n_users: int = 1000,
    n_items: int = 500,
    n_interactions: int | None = None,
    *,
    n_factors: int = 8,
    popularity_exponent: float = 1.0,
    activity_sigma: float = 1.0,
    topic_concentration: float = 0.1,
    noise: float = 0.1,
    timestamps: bool = True,
    start_time: int = 1_000_000_000,
    time_span: int = 3 * 365 * 86400,
    seed: int = 0,
) -> Interactions:
    r"""Generate seeded synthetic interactions: power-law popularity, lognormal activity,
    latent topics and timestamps.

    The generative model (a topic mixture, i.e. a non-negative latent factor model that matrix
    factorisation can recover):

    * item popularity follows a power law (Zipf): the item of popularity rank :math:`r` has
      weight :math:`r^{-a}` with :math:`a` = ``popularity_exponent`` (ranks are a random
      permutation of the items);
    * each item belongs to one of :math:`K` = ``n_factors`` topics;
    * user activity is lognormal, :math:`\alpha_u \sim \mathrm{LogNormal}(0, \sigma^2)`; the
      ``n_interactions`` are shared as :math:`n_u = 1 + \mathrm{Multinomial}(N - U,
      \alpha / \sum \alpha)` (capped at half the catalogue);
    * each user has topic preferences :math:`\theta_u \sim \mathrm{Dirichlet}(c \mathbf{1}_K)`,
      :math:`c` = ``topic_concentration`` (small: users focus on few topics);
    * each interaction draws a topic :math:`t \sim \theta_u` and an item of topic :math:`t` with
      probability proportional to its popularity weight, or, with probability ``noise``, an item
      from the global popularity distribution; repeated pairs are redrawn with more
      exploration each round (after 4 rounds uniformly over the catalogue), so every user gets
      exactly :math:`n_u` distinct items;
    * the value is a 1..5 rating, :math:`\mathrm{clip}(\mathrm{round}(3 + \log(K
      \theta_{u,t}) + \varepsilon), 1, 5)`, :math:`\varepsilon \sim N(0, 0.8^2)`, higher for
      the user's preferred topics;
    * timestamps: each user is active on a random window inside ``[start_time, start_time +
      time_span)``; interactions fall uniformly in it (int64 seconds).

    The item-level parameters and per-user seeds come from ``numpy.random.default_rng(seed)``;
    one numba pass over users (in parallel) draws each user's items, ratings and timestamps
    from the user's own SplitMix64 stream (Steele, Lea & Flood 2014). The same arguments give
    the same data and fingerprint on any thread count.

    Parameters
    ----------
    n_users, n_items : int
        Shape (>= 1 and >= 2).
    n_interactions : int, optional
        Target number of distinct interactions (default ``20 * n_users``, capped by half the
        matrix); at least ``n_users``.
    n_factors : int
        Number of latent topics :math:`K` (at most ``n_items``).
    popularity_exponent, activity_sigma, topic_concentration, noise : float
        :math:`a \ge 0`, :math:`\sigma \ge 0`, :math:`c > 0` and the exploration probability
        in [0, 1].
    timestamps : bool
        Whether to generate timestamps.
    start_time, time_span : int
        Time window of the timestamps (seconds).
    seed : int
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    Interactions
        Ids are ``0..n_users-1`` and ``0..n_items-1``; the latent truth is not returned.
    """
    func = "make_synthetic"
    n_users = check_int(n_users, "n_users", func, minimum=1)
    n_items = check_int(n_items, "n_items", func, minimum=2)
    max_nnz = n_users * (n_items // 2)
    if n_interactions is None:
        n_interactions = min(20 * n_users, max(max_nnz, n_users))
    n_interactions = check_int(
        n_interactions, "n_interactions", func, minimum=n_users, maximum=max(max_nnz, n_users)
    )
    k = check_int(n_factors, "n_factors", func, minimum=1, maximum=n_items)
    a = check_in_range(popularity_exponent, "popularity_exponent", func, 0.0, 10.0)
    sigma = check_in_range(activity_sigma, "activity_sigma", func, 0.0, 10.0)
    conc = check_in_range(topic_concentration, "topic_concentration", func, 0.0, 1e6, lo_open=True)
    noise = check_in_range(noise, "noise", func, 0.0, 1.0)
    seed = check_seed(seed, func)
    start_time = check_int(start_time, "start_time", func)
    time_span = check_int(time_span, "time_span", func, minimum=1)
    rng = np.random.default_rng(seed)

    # items: popularity weights and topics
    ranks = rng.permutation(n_items).astype(np.float64) + 1.0
    weight = ranks ** (-a)
    topic_of = rng.permutation(np.arange(n_items) % k)
    topic_items = np.argsort(topic_of, kind="stable")
    tw = weight[topic_items]
    tt = topic_of[topic_items]
    topic_start = np.searchsorted(tt, np.arange(k + 1)).astype(np.int64)
    csum = np.cumsum(tw)
    before = np.concatenate(([0.0], csum))[topic_start[:-1]]
    tot = csum[topic_start[1:] - 1] - before
    item_cdf = (csum - before[tt]) / tot[tt]
    global_cdf = np.cumsum(weight)
    global_cdf /= global_cdf[-1]

    # users: activity and topic mixtures
    activity = rng.lognormal(0.0, sigma, size=n_users) if sigma > 0 else np.ones(n_users)
    counts = 1 + rng.multinomial(n_interactions - n_users, activity / activity.sum())
    cap = max(n_items // 2, 1)
    capped = int(np.maximum(counts - cap, 0).sum())
    counts = np.minimum(counts, cap)
    theta = rng.dirichlet(np.full(k, conc), size=n_users) if k > 1 else np.ones((n_users, 1))
    cum_theta = np.cumsum(theta, axis=1)
    cum_theta[:, -1] = 1.0

    win_len = np.maximum((time_span * rng.uniform(0.05, 0.5, n_users)).astype(np.int64), 1)
    win_start = start_time + (rng.random(n_users) * (time_span - win_len)).astype(np.int64)
    seeds = rng.integers(0, 2**63 - 1, size=n_users, dtype=np.int64).astype(np.uint64)
    indptr = np.zeros(n_users + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    nnz = int(indptr[-1])
    item = np.empty(nnz, dtype=np.int64)
    values = np.empty(nnz, dtype=np.float64)
    ts = np.empty(nnz, dtype=np.int64)
    user_rounds = np.zeros(n_users, dtype=np.int64)
    _generate(
        indptr,
        seeds,
        cum_theta,
        theta,
        topic_of.astype(np.int64),
        item_cdf,
        topic_start,
        topic_items.astype(np.int64),
        global_cdf,
        float(noise),
        win_start,
        win_len,
        item,
        values,
        ts,
        user_rounds,
    )
    rounds = int(user_rounds.max())

    idx_dtype = np.int32 if max(nnz, n_items) < 2**31 - 1 else np.int64
    indptr = indptr.astype(idx_dtype)
    indices = item.astype(idx_dtype)
    m = sp.csr_array((values, indices, indptr), shape=(n_users, n_items))
    m.has_sorted_indices = True
    m.has_canonical_format = True
    t = sp.csr_array((ts, indices, indptr), shape=(n_users, n_items)) if timestamps else None
    params = {
        "n_users": n_users,
        "n_items": n_items,
        "n_interactions": n_interactions,
        "n_factors": k,
        "popularity_exponent": a,
        "activity_sigma": sigma,
        "topic_concentration": conc,
        "noise": noise,
        "seed": seed,
    }
    report = PrepReport(
        "synthetic",
        params,
        n_interactions,
        nnz,
        details={"capped_by_catalogue": capped, "max_redraw_rounds": rounds},
    ).log()
    return Interactions(
        matrix=m,
        user_ids=np.arange(n_users, dtype=np.int64),
        item_ids=np.arange(n_items, dtype=np.int64),
        timestamps=t,
        reports=[report],
        name=f"synthetic(seed={seed})",
    )
