"""Old path of the tests over replicates that share training data (Nadeau & Bengio's corrected
resampled t, the Bayesian correlated t-test, ``CORRECTION_FOR``), which moved to
:mod:`recoeval_tracking.stats`: each name still reads from here, with a
:class:`DeprecationWarning`, for one release."""

from __future__ import annotations

from ._moved import moved_names

__all__: list[str] = []

_MOVED = dict.fromkeys(
    (
        "CORRECTION_FOR",
        "ratio_test_train",
        "corrected_resampled_t",
        "CorrectedT",
        "correlated_t_verdict",
    ),
    "recoeval_tracking.stats",
)

__getattr__ = moved_names(__name__, _MOVED)
