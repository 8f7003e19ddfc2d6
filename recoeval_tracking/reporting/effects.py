"""Old path of the effect sizes (``effect_size``, ``EffectSize``, ``relative_difference``) and of
``DEFAULT_TEST``, which moved to :mod:`recoeval_tracking.stats`: each name still reads from here,
with a :class:`DeprecationWarning`, for one release."""

from __future__ import annotations

from ._moved import moved_names

__all__: list[str] = []

_MOVED = dict.fromkeys(
    ("DEFAULT_TEST", "EffectSize", "effect_size", "relative_difference"),
    "recoeval_tracking.stats",
)

__getattr__ = moved_names(__name__, _MOVED)
