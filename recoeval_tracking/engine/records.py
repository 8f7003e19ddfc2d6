"""The kernels' typed arguments: three small records instead of twenty positionals.

Numba passes a :func:`~collections.namedtuple` of arrays and scalars to a compiled function as one
struct (a heterogeneous tuple type); reading a field is a compile-time offset, so a record costs
nothing over the separate arguments it replaces. The classes live at module level, so the type
of a record pickles by reference and ``cache=True`` kernels keep loading from the on-disk cache.

The driver builds the records with fixed dtypes (int64 indices, float64 values, Python ``int``
and ``bool`` scalars): every call then has one type signature, compiled once.

This module imports nothing of the package.
"""

from __future__ import annotations

from collections import namedtuple

__all__ = ["Csr", "Plan", "Outputs"]

#: One CSR matrix (users x items): row ``u`` holds the sorted item indices
#: ``idx[ptr[u]:ptr[u + 1]]`` with their values ``val`` (int64, int64, float64). The train matrix
#: passes an empty ``val``: only its items matter (they leave the user's pool).
Csr = namedtuple("Csr", ["ptr", "idx", "val"])

#: What to compute, the same for every user:
#:
#: * ``n_items`` (int): catalogue size; ``K`` (int): the cutoff;
#: * ``cumulative`` (bool): fill every cutoff ``1..K`` (output column ``k - 1``) or only ``K``;
#: * ``slots`` (int64, ``N_AT_K``) / ``wslots`` (int64, ``N_WHOLE``): output row of each @k /
#:   whole-ranking code, -1 when not requested;
#: * ``full_ranks`` (bool): rank every positive exactly (a whole-ranking metric is asked), so no
#:   count stops early at K;
#: * ``tie_mode`` (int, :class:`~recoeval_tracking.engine.codes.Tie`) and ``seed`` (int) of the
#:   tie policy;
#: * ``want_topk`` (bool): also write each user's top-K items;
#: * ``user_base`` (int): added to the row ``u`` in the tie key, so that a shard of users whose
#:   row 0 is user ``user_base`` of the whole run draws the same keys as the whole run;
#: * ``inf_nan`` (bool): a +-inf score in the user's pool makes the user undefined, as a NaN
#:   does (``inf_scores="nan"``);
#: * ``finite`` (bool): every score is known to be finite (factors whose products cannot
#:   overflow), so the kernels do not read the rows for a NaN or +-inf.
Plan = namedtuple(
    "Plan",
    [
        "n_items",
        "K",
        "cumulative",
        "slots",
        "wslots",
        "full_ranks",
        "tie_mode",
        "seed",
        "want_topk",
        "user_base",
        "inf_nan",
        "finite",
    ],
    defaults=[False, False],
)

#: Where results go, written in place, one row (or entry) per user of the whole run:
#:
#: * ``out`` (float64, ``(n_at_k, m, K or 1)``): the @k metrics, by ``Plan.slots``;
#: * ``whole`` (float64, ``(n_whole, m)``): the whole-ranking metrics, by ``Plan.wslots``;
#: * ``reason`` (``(m,)``): set to ``NAN_SCORE`` or ``ALL_EQUAL`` for users found undefined;
#: * ``topk`` (int64, ``(m, K)`` or ``(0, K)``) and ``n_tied`` (int64, ``(m,)`` or ``(0,)``): each
#:   user's top-K items and the number of pool items tied with them, when ``Plan.want_topk``.
Outputs = namedtuple("Outputs", ["out", "whole", "reason", "topk", "n_tied"])
