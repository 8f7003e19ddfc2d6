"""The engine's small vocabulary: metric codes, NaN reasons and tie modes.

Two independent enumerations of metric codes index the two kernel outputs:

* :class:`AtK`: cutoff metrics, one row each of the ``(rows, users, K or 1)`` output;
* :class:`Whole`: whole-ranking metrics, one row each of the ``(rows, users)`` output.

Adding a cutoff metric appends one member to :class:`AtK` and leaves :class:`Whole` as it is (and
the other way round). The metric registry (:mod:`recoeval_tracking.metrics.registry`) maps names to
these codes; the kernels read them as plain integers (numba treats ``IntEnum`` members as
compile-time constants).

This module imports nothing of the package.
"""

from __future__ import annotations

from enum import IntEnum

__all__ = ["AtK", "Whole", "N_AT_K", "N_WHOLE", "Reason", "REASONS", "Tie"]


class AtK(IntEnum):
    """Codes of the cutoff (@k) metrics: the row of the kernel's @k output."""

    P = 0
    TP = 1
    R = 2
    AP = 3
    TAP = 4
    NDCG = 5
    HIT = 6
    RR = 7
    NDCG_EXP = 8
    NDCG_BIN = 9
    AUC_TOPK = 10
    DCG = 11
    AP_HITS = 12
    HITS = 13
    F1 = 14
    DCG_EXP = 15
    SET_MAP = 16


class Whole(IntEnum):
    """Codes of the whole-ranking metrics: the row of the kernel's whole-ranking output."""

    ROC_AUC = 0
    PR_AUC = 1
    MPR = 2
    RPREC = 3
    IPREC_0 = 4
    IPREC_1 = 5
    IPREC_2 = 6
    IPREC_3 = 7
    IPREC_4 = 8
    IPREC_5 = 9
    IPREC_6 = 10
    IPREC_7 = 11
    IPREC_8 = 12
    IPREC_9 = 13
    IPREC_10 = 14
    AVG_11PT = 15
    #: ROC-AUC with tied scores given their average rank, whatever the tie policy (the AUC of
    #: ``gauc``); filled from the raw-score counts only when its output row is asked.
    ROC_AUC_AVG = 16
    #: Reciprocal rank of the first positive over the whole ranking, no cutoff (Cornac's MRR).
    RR_FULL = 17
    #: The interpolated precisions of trec_eval 10.0 (recall 0.0, 0.1, ..., 1.0: the cutoff
    #: ``lround(rho |T|)`` instead of 9's ``(long) (rho |T| + 0.9)``) and their mean.
    IPREC10_0 = 18
    IPREC10_1 = 19
    IPREC10_2 = 20
    IPREC10_3 = 21
    IPREC10_4 = 22
    IPREC10_5 = 23
    IPREC10_6 = 24
    IPREC10_7 = 25
    IPREC10_8 = 26
    IPREC10_9 = 27
    IPREC10_10 = 28
    AVG_11PT10 = 29


N_AT_K = len(AtK)
N_WHOLE = len(Whole)


class Reason(IntEnum):
    """Why every metric of a user is NaN; ``OK`` (0) means evaluated. Checked in this order
    (``NO_POSITIVE``, set outside the kernels when a relevance level leaves a user with test
    entries but no positive, comes after ``NO_TEST``)."""

    OK = 0
    NO_TEST = 1
    MIN_POS_TEST = 2
    COLD_START = 3
    MIN_ITEMS_POOL = 4
    NAN_SCORE = 5
    ALL_EQUAL = 6
    NO_POSITIVE = 7
    #: ranked input (a file, a DataFrame) with no list for the user, under
    #: ``missing_users="skip"``; set outside the kernels, after the engine's own reasons.
    NO_LIST = 8


#: ``nan_reason`` text of each :class:`Reason`, by value ("" for evaluated users).
REASONS = (
    "",
    "no_test",
    "min_pos_test",
    "cold_start",
    "min_items_pool",
    "nan_score",
    "all_equal",
    "no_positive",
    "no_list",
)


class Tie(IntEnum):
    """Tie policies of the kernels (the names users pass are the lower-case member names)."""

    NOISE = 0
    INDEX = 1
    OPTIMISTIC = 2
    PESSIMISTIC = 3
    AVERAGE = 4
    INDEX_DESC = 5
    #: WarpRec's per-user draw: tied items by the 30-bit key of its Evaluator's
    #: ``_tie_keys(seed, user, item)`` (warprec/data/ranking.py), larger first.
    WARPREC = 6
