"""The synthetic generator's draws against a plain-Python reference of its per-user streams.

The generator draws every user's items at once in numpy (:func:`_generate`); the reference below
walks each user's SplitMix64 stream one call at a time, as the generative model describes it:
a round draws the items the user lacks one after another (uniform over the catalogue after 4
rounds; else a global-popularity item when the first uniform is below the round's exploration,
else a topic by the third uniform and an item of it by the second), keeps the distinct ones, and
then each item, in ascending order, takes three calls for its rating and timestamp.
"""

from __future__ import annotations

import bisect
import math

import numpy as np
import pytest

from recoeval_tracking.data import _synthetic_numba
from recoeval_tracking.data._synthetic import TopicModel, _generate

MASK = (1 << 64) - 1


def splitmix(state: int) -> tuple[int, float]:
    """SplitMix64 (Steele, Lea & Flood 2014), written from the paper's constants."""
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    z ^= z >> 31
    return state, (z >> 11) / 2.0**53


def reference(counts, seeds, cum_theta, theta, topic_of, item_cdf, topic_start, topic_items,
              global_cdf, noise, win_start, win_len):  # fmt: skip
    n_items, k = len(global_cdf), theta.shape[1]
    items, values, times, rounds = [], [], [], 0
    for u, need in enumerate(counts):
        state, have, attempt = int(seeds[u]), set(), 0
        while len(have) < need:
            explore = min(1.0, noise + 0.25 * attempt)
            for _ in range(need - len(have)):
                state, u1 = splitmix(state)
                if attempt > 4:
                    have.add(min(int(u1 * n_items), n_items - 1))
                    continue
                state, u2 = splitmix(state)
                if u1 < explore:
                    have.add(min(bisect.bisect_right(list(global_cdf), u2), n_items - 1))
                    continue
                state, u3 = splitmix(state)
                t = 0
                while t < k - 1 and cum_theta[u, t] <= u3:
                    t += 1
                lo, hi = topic_start[t], topic_start[t + 1]
                j = lo + bisect.bisect_right(list(item_cdf[lo:hi]), u2)
                have.add(int(topic_items[min(j, hi - 1)]))
            attempt += 1
        rounds = max(rounds, attempt - 1)
        for it in sorted(have):
            state, v1 = splitmix(state)
            state, v2 = splitmix(state)
            gauss = math.sqrt(-2.0 * math.log(1.0 - v1)) * math.cos(2.0 * math.pi * v2)
            pref = max(theta[u, topic_of[it]] * k, 1e-12)
            values.append(min(5.0, max(1.0, float(np.rint(3.0 + math.log(pref) + 0.8 * gauss)))))
            state, v3 = splitmix(state)
            times.append(int(win_start[u]) + int(v3 * int(win_len[u])))
            items.append(it)
    return np.array(items), np.array(values), np.array(times), rounds


def parameters(n_users, n_items, k, noise, seed, most):
    """Random generator parameters of the shapes make_synthetic builds (topics, cdfs...)."""
    rng = np.random.default_rng(seed)
    topic_of = rng.permutation(np.arange(n_items) % k).astype(np.int64)
    topic_items = np.argsort(topic_of, kind="stable").astype(np.int64)
    topic_start = np.searchsorted(topic_of[topic_items], np.arange(k + 1)).astype(np.int64)
    weight = rng.random(n_items) + 0.01
    item_cdf = np.empty(n_items)
    for t in range(k):
        seg = topic_items[topic_start[t] : topic_start[t + 1]]
        item_cdf[topic_start[t] : topic_start[t + 1]] = np.cumsum(weight[seg]) / weight[seg].sum()
    global_cdf = np.cumsum(weight) / weight.sum()
    theta = rng.dirichlet(np.full(k, 0.3), size=n_users)
    cum_theta = np.cumsum(theta, axis=1)
    cum_theta[:, -1] = 1.0
    counts = rng.integers(0, most + 1, n_users).astype(np.int64)
    counts[n_users // 2] = 0  # a user with nothing to draw
    win_len = rng.integers(1, 10**6, n_users).astype(np.int64)
    win_start = rng.integers(0, 10**9, n_users).astype(np.int64)
    seeds = rng.integers(0, 2**63 - 1, n_users, dtype=np.int64).astype(np.uint64)
    return (counts, seeds, cum_theta, theta, topic_of, item_cdf, topic_start, topic_items,
            global_cdf, noise, win_start, win_len)  # fmt: skip


@pytest.mark.parametrize(
    ("n_users", "n_items", "k", "noise", "seed", "most"),
    [
        (40, 30, 4, 0.1, 0, 15),
        (25, 12, 1, 0.0, 1, 6),
        (30, 50, 7, 1.0, 2, 25),
        (20, 8, 3, 0.3, 3, 8),
    ],
)
@pytest.mark.parametrize("generate", [_generate, _synthetic_numba.generate])
def test_generate_follows_each_users_stream(n_users, n_items, k, noise, seed, most, generate):
    args = parameters(n_users, n_items, k, noise, seed, most)
    items, values, times, rounds = generate(args[0], args[1], TopicModel(*args[2:]))
    want_items, want_values, want_times, want_rounds = reference(*args)
    assert items.tolist() == want_items.tolist()
    assert values.tolist() == want_values.tolist()
    assert times.tolist() == want_times.tolist()
    assert rounds == want_rounds
    assert rounds > 4 or seed != 3  # that case reaches the uniform rounds


def test_make_synthetic_gives_the_same_data_on_either_path(monkeypatch):
    from recoeval_tracking.data import _synthetic, make_synthetic

    small = make_synthetic(200, 80, 3000, seed=5)
    monkeypatch.setattr(_synthetic, "NUMBA_FROM", 0)
    large = make_synthetic(200, 80, 3000, seed=5)
    assert small.fingerprint() == large.fingerprint()
    assert small.reports[0].details == large.reports[0].details
