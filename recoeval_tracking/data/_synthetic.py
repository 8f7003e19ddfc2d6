"""Seeded synthetic implicit-feedback data with learnable latent structure."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from .._numba_cache import is_cached
from .._validation import check_in_range, check_int, check_seed
from ._interactions import Interactions, PrepReport

__all__ = ["make_synthetic"]


logger = logging.getLogger(__name__)

#: From this many interactions on, the draws run in one parallel numba pass
#: (:mod:`._synthetic_numba`: the same draws, 4x faster on 2 cores, compiled once in some 10 s).
NUMBA_FROM = 4_000_000

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


def _uniforms(seeds: np.ndarray, calls: np.ndarray) -> np.ndarray:
    """The uniform in [0, 1) of call number ``calls`` (1 for the first) of the SplitMix64
    streams (Steele, Lea & Flood 2014) seeded with ``seeds``, elementwise.

    SplitMix64 advances its state by a constant, so the state after ``n`` calls is ``seed + n *
    0x9E3779B97F4A7C15`` (mod 2**64): any call of a stream is computed directly, for many
    streams at once (numpy's uint64 arithmetic wraps)."""
    z = seeds + calls.astype(np.uint64) * _GOLDEN
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z ^= z >> np.uint64(31)
    return (z >> np.uint64(11)).astype(np.float64) * _TO_UNIT


def _search_right(a: np.ndarray, lo: np.ndarray, hi: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``lo + searchsorted(a[lo:hi], x, side="right")`` elementwise (a binary search over each
    non-decreasing segment ``a[lo:hi]`` at once)."""
    lo, hi = lo.copy(), hi.copy()
    last = a.shape[0] - 1
    while True:
        open_ = lo < hi
        if not open_.any():
            return lo
        mid = (lo + hi) >> 1
        right = open_ & (a[np.minimum(mid, last)] <= x)
        lo = np.where(right, mid + 1, lo)
        hi = np.where(open_ & ~right, mid, hi)


class TopicModel(NamedTuple):
    """The generative model that every user's draws read (built by :func:`make_synthetic`, the
    same for its numpy and numba paths): the users' topic mixtures, the items' topics and
    popularity, the exploration probability and the users' time windows."""

    #: (n_users, K) cumulative topic mixtures, the last column exactly 1
    cum_theta: np.ndarray
    #: (n_users, K) topic mixtures :math:`\theta_u`
    theta: np.ndarray
    #: (n_items,) int64: the topic of each item
    topic_of: np.ndarray
    #: (n_items,) popularity CDF of each topic's items, in ``topic_items``' order
    item_cdf: np.ndarray
    #: (K + 1,) int64: where each topic's items start in ``topic_items``
    topic_start: np.ndarray
    #: (n_items,) int64: the items grouped by topic
    topic_items: np.ndarray
    #: (n_items,) popularity CDF over all items
    global_cdf: np.ndarray
    #: probability of drawing an item by global popularity in a user's first round
    noise: float
    #: (n_users,) int64: the start and length of each user's time window (seconds)
    win_start: np.ndarray
    win_len: np.ndarray


#: Draws per batch of users in a round (bounds the memory of a round: some 100 bytes a draw).
_BATCH = 1 << 20


def _draw_items(
    user: np.ndarray,
    seed: np.ndarray,
    c: np.ndarray,
    u1: np.ndarray,
    model: TopicModel,
    explore: float,
) -> np.ndarray:
    """The item of each draw of a round that is not uniform: the draw of ``user`` whose stream
    stands at ``c`` calls (``u1``: its next uniform) takes, when ``u1 < explore``, an item by
    global popularity (by its second uniform), else a topic from the user's mixture (by its
    third) and an item of that topic by popularity (by its second)."""
    n_items = model.global_cdf.shape[0]
    u2 = _uniforms(seed, c + 2)
    wide = u1 < explore
    item = np.empty(user.shape[0], dtype=np.int64)
    item[wide] = np.minimum(np.searchsorted(model.global_cdf, u2[wide], side="right"), n_items - 1)
    near = ~wide
    u3 = _uniforms(seed[near], c[near] + 3)
    # the first topic whose cumulative weight exceeds u3 (the last when none does)
    t = (model.cum_theta[user[near], :-1] <= u3[:, None]).sum(axis=1)
    lo, hi = model.topic_start[t], model.topic_start[t + 1]
    j = _search_right(model.item_cdf, lo, hi, u2[near])
    item[near] = model.topic_items[np.minimum(j, hi - 1)]
    return item


def _chain(
    seed: np.ndarray, c0: np.ndarray, need: np.ndarray, explore: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where the draws of a round that is not uniform start in the users' streams: user ``i``
    (its stream at ``c0[i]`` calls) makes ``need[i]`` draws one after another, each taking two
    calls (its first uniform below ``explore``) or three.

    The calls a draw takes depend on where the draw before it ended, so the starts are found by
    pointer doubling over every call a user's round can reach: ``jump[q]`` is the call where
    a draw starting at ``q`` ends, ``jump[jump]`` two draws on, and so on.

    Returns, for each draw (users in order, then draws in order): the index of its user, the
    calls before it and its first uniform; and each user's calls after the round.
    """
    size = 3 * need + 1  # a user's draws end within 3 * need calls
    start = np.zeros(need.shape[0], dtype=np.int64)
    np.cumsum(size[:-1], out=start[1:])
    owner = np.repeat(np.arange(need.shape[0]), size)
    offset = np.arange(owner.shape[0]) - start[owner]
    u1 = _uniforms(seed[owner], c0[owner] + offset + 1)
    one = np.minimum(np.arange(owner.shape[0]) + 2 + (u1 >= explore), (start + size - 1)[owner])
    first = np.zeros(need.shape[0], dtype=np.int64)
    np.cumsum(need[:-1], out=first[1:])
    drawer = np.repeat(np.arange(need.shape[0]), need)
    j = np.arange(drawer.shape[0]) - first[drawer]
    at = start[drawer]  # the flat call each draw starts at: draw j from draw j - span
    jump, span = one, 1
    while span < need.max():
        later = np.flatnonzero((j >= span) & (j < 2 * span))
        at[later] = jump[at[later - span]]
        jump = jump[jump]
        span *= 2
    after = c0 + offset[one[at[first + need - 1]]]
    return drawer, c0[drawer] + offset[at], u1[at], after


def _generate(
    counts: np.ndarray, seeds: np.ndarray, model: TopicModel
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Each user's ``counts[u]`` distinct items (ascending, users in order), their ratings and
    timestamps, and the most redraw rounds a user took.

    Each user has its own SplitMix64 stream seeded from ``seeds[u]``. A round draws the items a
    user still lacks, one after another from the stream, and keeps the distinct ones; repeated
    items are redrawn, exploring more each round (after 4 rounds uniformly over the catalogue).
    The users' rounds run together (:func:`_chain`). Then each item, in ascending order, takes
    three more calls: two for a Gaussian (Box-Muller), one for the timestamp.
    """
    n_users, n_items = counts.shape[0], model.global_cdf.shape[0]
    k = model.theta.shape[1]
    calls = np.zeros(n_users, dtype=np.int64)
    kept = np.empty(0, dtype=np.int64)  # user * n_items + item, distinct
    filled = np.zeros(n_users, dtype=np.int64)
    attempt = 0
    while True:
        todo = counts - filled
        active = np.flatnonzero(todo > 0)
        if active.shape[0] == 0:
            break
        explore = min(1.0, model.noise + 0.25 * attempt)
        batch = np.cumsum(todo[active]) // _BATCH
        new = []
        for users in np.split(active, np.flatnonzero(np.diff(batch)) + 1):
            need, seed, c0 = todo[users], seeds[users], calls[users]
            if attempt > 4:  # uniform: one call a draw
                drawer = np.repeat(np.arange(users.shape[0]), need)
                c = c0[drawer] + np.arange(drawer.shape[0]) - (np.cumsum(need) - need)[drawer]
                u1 = _uniforms(seed[drawer], c + 1)
                item = np.minimum((u1 * n_items).astype(np.int64), n_items - 1)
                calls[users] = c0 + need
            else:
                drawer, c, u1, calls[users] = _chain(seed, c0, need, explore)
                item = _draw_items(users[drawer], seed[drawer], c, u1, model, explore)
            new.append(users[drawer] * n_items + item)
        mine = todo[kept // n_items] > 0
        merged = np.sort(np.concatenate([kept[mine], *new]))  # (np.unique may hash: slower)
        merged = merged[np.concatenate(([True], merged[1:] != merged[:-1]))]
        kept = np.concatenate([kept[~mine], merged])
        filled[active] = np.bincount(merged // n_items, minlength=n_users)[active]
        attempt += 1
    kept.sort()
    user, items = np.divmod(kept, n_items)
    first = np.zeros(n_users, dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    base = calls[user] + 3 * (np.arange(kept.shape[0]) - first[user])
    seed = seeds[user]
    v1, v2, v3 = (_uniforms(seed, base + i) for i in (1, 2, 3))
    gauss = np.sqrt(-2.0 * np.log(1.0 - v1)) * np.cos(2.0 * np.pi * v2)
    pref = np.maximum(model.theta[user, model.topic_of[items]] * k, 1e-12)
    values = np.minimum(5.0, np.maximum(1.0, np.rint(3.0 + np.log(pref) + 0.8 * gauss)))
    times = model.win_start[user] + (v3 * model.win_len[user]).astype(np.int64)
    return items, values, times, max(attempt - 1, 0)


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
    each user's items, ratings and timestamps come from the user's own SplitMix64 stream
    (Steele, Lea & Flood 2014), drawn for all users at once in numpy (nothing to compile), or
    from 4 million interactions on in a parallel numba pass (compiled once). The same
    arguments give the same data and fingerprint on any machine and thread count.

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
    generate: Callable[..., tuple[np.ndarray, np.ndarray, np.ndarray, int]] = _generate
    if n_interactions >= NUMBA_FROM:  # numba pays for its compile (once) from there on
        from . import _synthetic_numba

        generate = _synthetic_numba.generate
        if not is_cached(_synthetic_numba._generate):
            logger.info("compiling the generator's parallel kernel (once: numba caches it)...")
    model = TopicModel(
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
    )
    item, values, ts, rounds = generate(counts.astype(np.int64), seeds, model)
    nnz = item.shape[0]
    indptr = np.zeros(n_users + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])

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
