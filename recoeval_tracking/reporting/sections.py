"""Old path of the page's content (its items), which moved to
:mod:`recoeval_tracking.reporting.render.sections`: each name still reads from here, with a
:class:`DeprecationWarning`, for one release (the names: :data:`._moved.OLD_PATHS`)."""

from ._moved import moved_names

__getattr__ = moved_names(__name__)
