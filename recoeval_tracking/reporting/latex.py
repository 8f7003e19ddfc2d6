"""Old path of the LaTeX tables, which moved to :mod:`recoeval_tracking.reporting.render.latex`:
each name still reads from here, with a :class:`DeprecationWarning`, for one release (the names:
:data:`._moved.OLD_PATHS`)."""

from ._moved import moved_names

__getattr__ = moved_names(__name__)
