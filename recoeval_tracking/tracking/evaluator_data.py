"""The old path of the ``recoeval`` evaluator's inputs (``static_inputs``, ``model_inputs``,
``read_train``, ``EvalInputs``, ``PREDICTION_TYPES``): they live in :mod:`.evaluator` with the
evaluator that takes them, and read from here with a :class:`DeprecationWarning` for one
release."""

from __future__ import annotations

from .._moved import moved_names

_MOVED = dict.fromkeys(
    ("PREDICTION_TYPES", "EvalInputs", "model_inputs", "read_train", "static_inputs"),
    "recoeval_tracking.tracking.evaluator",
)

__getattr__ = moved_names(__name__, _MOVED)
