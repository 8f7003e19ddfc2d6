"""The host half of the ``cuda`` backend: every metric of a block from the GPU's counts.

The GPU pass (:mod:`.cuda_kernels`) leaves, per user of a block, the reason it is undefined (if
any), and per positive its score, the counts ``gt``/``eq`` and (under a total tie order) its
exact rank. What remains is ``O(K + n_pos)`` per user, the second half of the CPU engine's
per-user evaluation (:func:`recoeval_tracking.engine.kernels.block_ranked`), and it runs here with
the CPU engine's own functions: the ranks under the ``optimistic``/``pessimistic`` policies
(:func:`~.ranks._policy_ranks`), their sort (:func:`~.ranks.sort_by_rank`) and the metric writers
of :mod:`.fill` (:func:`~.fill.fill_metrics`, :func:`~.fill.fill_whole`,
:func:`~.fill.fill_average`). Every metric, NaN rule and @1..K curve is therefore the CPU
engine's, by construction; a metric added to :mod:`.fill` is on the GPU backend too.

This module imports numpy and numba only (no CUDA library): the host half runs, and is tested,
on any machine.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .fill import fill_average, fill_metrics, fill_whole
from .ranks import TIE_AVERAGE, TOTAL_ORDERS, _policy_ranks, sort_by_rank

__all__ = ["fill_block"]


@njit(cache=True)
def _fill_user(b, u, off, pos, gt, eq, rk, train, test, plan, outs):
    """The metrics of user ``u`` (row ``b`` of the block) from its positives' counts."""
    o0 = off[b]
    o1 = off[b + 1]
    n_pos = o1 - o0
    p0 = test.ptr[u]
    pool = plan.n_items - (train.ptr[u + 1] - train.ptr[u])
    vals = test.val[p0 : p0 + n_pos]
    mode = plan.tie_mode
    if mode == TIE_AVERAGE:
        fill_average(pos[o0:o1], vals, gt[o0:o1], eq[o0:o1], pool, plan, outs.out, outs.whole, u)
        return
    ranks = np.empty(n_pos, dtype=np.int64)
    rvals = np.empty(n_pos, dtype=np.float64)
    if mode in TOTAL_ORDERS:
        ranks[:] = rk[o0:o1]
        rvals[:] = vals
    else:
        _policy_ranks(pos[o0:o1], vals, gt[o0:o1], eq[o0:o1], mode, ranks, rvals)
    sort_by_rank(ranks, rvals)
    fill_metrics(ranks, rvals, pool, plan, outs.out, u)
    if plan.full_ranks:
        fill_whole(ranks, rvals, pool, plan.wslots, outs.whole, u, gt[o0:o1], eq[o0:o1])


@njit(parallel=True, cache=True)
def fill_block(rows, off, pos, gt, eq, rk, reason, train, test, plan, outs):
    """Fill ``outs`` for the users ``rows`` of a block, in parallel over users.

    Parameters
    ----------
    rows : int64 array (nb,)
        The block's users (rows of the test matrix and of the outputs).
    off : int64 array (nb + 1,)
        User ``b``'s positives are entries ``off[b]:off[b + 1]`` of ``pos``, ``gt``, ``eq`` and
        ``rk``, in the order of its test row.
    pos : float array
        The positives' scores.
    gt, eq, rk : int64 arrays
        Pool items scoring above and equal to each positive, and its exact rank (read under a
        total tie order only).
    reason : int64 array (nb,)
        0, or the :class:`~recoeval_tracking.engine.codes.Reason` the GPU found the user
        undefined for: it goes to ``outs.reason`` and the user's metrics stay NaN.
    train, test : records.Csr
    plan : records.Plan
    outs : records.Outputs
    """
    # a write through a record field in a prange body is lost (numba 0.68 parfors): a local
    dest = outs.reason
    for b in prange(rows.shape[0]):
        u = rows[b]
        if reason[b] != 0:
            dest[u] = reason[b]
        else:
            _fill_user(b, u, off, pos, gt, eq, rk, train, test, plan, outs)
