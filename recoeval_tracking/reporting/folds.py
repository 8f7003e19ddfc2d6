"""Old path of the tests over replicates that share training data (Nadeau & Bengio's corrected
resampled t, the Bayesian correlated t-test), which moved to :mod:`recoeval_tracking.stats`: each
name still reads from here, with a :class:`DeprecationWarning`, for one release (the names:
:data:`._moved.OLD_PATHS`)."""

from ._moved import moved_names

__getattr__ = moved_names(__name__)
