"""Old path of the resampling behind the intervals and the randomisation test, which moved to
:mod:`recoeval_tracking.stats` (bootstrap counts and means, sign flips, randomisation p-values,
the BCa interval): each name still reads from here, with a :class:`DeprecationWarning`, for one
release."""

from __future__ import annotations

from ._moved import moved_names

__all__: list[str] = []

_MOVED = dict.fromkeys(
    (
        "bootstrap_counts",
        "bootstrap_means",
        "sign_flips",
        "all_sign_vectors",
        "auto_permutations",
        "randomization_pvalues",
        "bca_interval",
        "FLIP_BLOCK",
    ),
    "recoeval_tracking.stats",
)

__getattr__ = moved_names(__name__, _MOVED)
