"""Old path of the resampling behind the intervals and the randomisation test (bootstrap, sign
flips, the BCa interval), which moved to :mod:`recoeval_tracking.stats`: each name still reads from
here, with a :class:`DeprecationWarning`, for one release (the names:
:data:`._moved.OLD_PATHS`)."""

from ._moved import moved_names

__getattr__ = moved_names(__name__)
