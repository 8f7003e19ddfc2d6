"""A profile's list rules (``profile="spark"``: a k past the lists computed, ``ap`` at a k
shorter than the lists refused, a repeated item refused) applied once, by the Dask driver,
before the users are cut into shards: the same per-user values and the same refusals as the
local run, whatever the shards."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from recoeval_tracking import evaluate
from recoeval_tracking._validation import InputError
from recoeval_tracking.distributed import evaluate_on_dask
from recoeval_tracking.options import EvalOptions

from .test_dask import assert_same_per_user


def lists_and_test(m: int = 60, n: int = 40, width: int = 8, seed: int = 7):
    """Lists of 2 to 8 items (-1 padded to ``width``), test entries for most users."""
    rng = np.random.default_rng(seed)
    lists = np.full((m, width), -1)
    for u in range(m):
        length = int(rng.integers(2, 9))
        lists[u, :length] = rng.permutation(n)[:length]
    test = sp.csr_array((rng.random((m, n)) < 0.1).astype(np.float64))
    return lists, test


def both(client, test, ranked, shards=3, **options):
    """The local run and the Dask run, or the message of what each raised."""
    out = []
    for run in (
        lambda: evaluate(None, test, ranked=ranked, **options),
        lambda: evaluate_on_dask(
            client, None, test, EvalOptions(**options), ranked=ranked, shards=shards
        ),
    ):
        try:
            out.append(run())
        except InputError as err:
            out.append(str(err))
    return out


@pytest.mark.parametrize("k", [10, 45])  # past every list; past the catalogue's 40 items
def test_k_past_the_lists_gives_the_local_values(client, k):
    lists, test = lists_and_test()
    local, dask = both(client, test, lists, k=k, profile="spark")
    assert not isinstance(dask, str), dask  # refused as past the lists before the rule
    assert_same_per_user(local.per_user, dask.per_user)
    assert (local.per_user["nan_reason"] == "").sum() > 50  # every user with a test entry
    for c, value in local.means.items():
        assert dask.means[c] == pytest.approx(value, rel=1e-12), c


def test_the_refusals_are_the_local_ones(client):
    lists, test = lists_and_test()
    local, dask = both(client, test, lists, k=5, profile="spark")  # ap at k < 8
    assert isinstance(local, str) and "meanAveragePrecision" in local
    assert dask == local  # raised by the driver, once, not by each shard's task
    repeated = lists.copy()
    repeated[3, 1] = repeated[3, 0]
    local, dask = both(client, test, repeated, k=8, profile="spark")
    assert isinstance(local, str) and "1 repeated (user, item) entries" in local
    assert dask == local
    frame = pd.DataFrame(
        [(u, int(i), r + 1) for u, row in enumerate(repeated) for r, i in enumerate(row) if i >= 0],
        columns=["user", "item", "rank"],
    )
    local, dask = both(client, test, frame, k=8, profile="spark")
    assert isinstance(local, str) and "every copy" in local
    assert dask == local
