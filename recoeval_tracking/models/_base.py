"""The model protocol shared by every baseline, and the validation of its inputs.

(A model of the user's own needs none of this: any object with ``fit`` and one of
``score_users``, ``factors`` or ``recommend`` is adapted by :class:`~._user.UserModel`.)

A baseline is a small object with three methods:

* ``fit(train, *, user_ids=None, item_ids=None) -> self`` learns from a users x items
  ``scipy.sparse.csr_array`` whose stored values are confidences (sorted indices, no duplicates);
  ``user_ids`` and ``item_ids`` optionally map row and column indices to the original ids;
* ``score_source() -> ScoreSource`` hands the learned scores to the evaluator, which pulls them one
  block of users at a time (the users x items matrix is never built);
* ``params() -> dict`` gives the JSON-able hyper-parameters, so that
  ``make_model(name, **model.params())`` builds the same model again.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, ClassVar, cast

import numpy as np
import scipy.sparse as sp

from .._validation import InputError, as_csr, describe, param_error
from ..scores import CallableScores, ScoreSource

__all__ = ["Model", "NotFittedError"]

#: The kinds of constructor parameters that :meth:`Model.params` reads back (not ``*args``,
#: ``**kwargs``).
_NAMED_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


class NotFittedError(RuntimeError):
    """A model was asked for its scores before ``fit`` was called."""


class Model:
    """Base class of the baseline models.

    Subclasses set ``name`` (their key in :data:`recoeval_tracking.models.MODELS`), validate their
    hyper-parameters in ``__init__``, implement ``_fit`` and ``_score_source`` and list their
    hyper-parameters in ``params``.

    The ``__init__`` signature is the model's config: the app derives the Hydra schema of
    ``model=<name>`` from its annotations and defaults, and calls the class with the config's
    values. A parameter annotated ``str | Path`` is a file path (relative paths are taken from
    the directory the command was started from); a parameter named ``progress`` is the
    progress-bar flag, which the job sets; ``X | None`` takes None (meaning its default when that
    is None). Parameters that are not config values (arrays, callables) need a default.
    """

    name: ClassVar[str] = ""

    def __init__(self) -> None:
        self._fitted = False
        self.n_users_: int | None = None
        self.n_items_: int | None = None

    # -- public protocol ----------------------------------------------------------------------
    def fit(self, train: Any, *, user_ids: Any = None, item_ids: Any = None) -> Model:
        """Learn from ``train`` (users x items, stored values = confidences).

        Parameters
        ----------
        train : scipy.sparse array or matrix, shape (n_users, n_items)
            Training interactions; converted to a canonical CSR array with sorted indices.
        user_ids, item_ids : array-like, optional
            Original id of each row / column, used by models that match stored factors by id.

        Returns
        -------
        self
        """
        func = f"{type(self).__name__}.fit"
        X = cast(sp.csr_array, as_csr(train, "train", func))
        user_ids = _check_ids(user_ids, "user_ids", func, X.shape[0])
        item_ids = _check_ids(item_ids, "item_ids", func, X.shape[1])
        self.n_users_, self.n_items_ = (int(X.shape[0]), int(X.shape[1]))
        self._fit(X, user_ids, item_ids)
        self._fitted = True
        return self

    def score_source(self) -> ScoreSource:
        """The fitted model's scores, as a :class:`~recoeval_tracking.scores.ScoreSource`."""
        if not self._fitted:
            raise NotFittedError(
                f"{type(self).__name__}.score_source was called before fit. Call fit(train) first."
            )
        return self._score_source()

    def eval_inputs(self, k: int, users: np.ndarray | None = None) -> dict[str, Any]:
        """The keyword arguments of :func:`recoeval_tracking.evaluate` that carry this model's
        scores at cutoff ``k`` for ``users`` (row indices; None for every user):
        ``{"scores": self.score_source()}`` here; a model of ranked lists gives ``ranked``."""
        return {"scores": self.score_source()}

    def params(self) -> dict[str, Any]:
        """JSON-able hyper-parameters; ``make_model(self.name, **self.params())`` rebuilds the model.

        By default the constructor's parameters, each read back from the attribute of the same
        name (scikit-learn's ``get_params`` rule); a model that keeps a parameter under another
        name or form overrides this."""
        init = inspect.signature(type(self).__init__).parameters.values()
        named = (p.name for p in init if p.name != "self" and p.kind in _NAMED_KINDS)
        return {name: getattr(self, name) for name in named}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"

    # -- to implement -------------------------------------------------------------------------
    def _fit(
        self, X: sp.csr_array, user_ids: np.ndarray | None, item_ids: np.ndarray | None
    ) -> None:
        raise NotImplementedError

    def _score_source(self) -> ScoreSource:
        raise NotImplementedError

    def _blocks_of(self, scores: Callable[[np.ndarray], np.ndarray]) -> ScoreSource:
        """``scores(users)``, float64 blocks of shape ``(len(users), n_items)``, as the score
        source (named ``<class>.score_source`` in its errors)."""
        return CallableScores(
            scores,
            n_items=int(self.n_items_ or 0),
            dtype=np.float64,
            func=f"{type(self).__name__}.score_source",
        )


def _check_ids(ids: Any, name: str, func: str, n: int) -> np.ndarray | None:
    """Return ``ids`` as a 1-d array of length ``n`` (or None), or raise the standard error."""
    if ids is None:
        return None
    arr = np.asarray(ids)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise param_error(name, func, f"a 1-d array with one id per {name[:-4]} ({n})", arr)
    return arr


def check_nonnegative_values(X: sp.csr_array, func: str) -> None:
    """Raise the standard error when ``X`` stores a negative value (confidences are >= 0)."""
    if X.nnz and float(np.min(X.data)) < 0:
        raise InputError(
            f"The 'train' parameter of {func} must hold non-negative confidences. "
            f"Got {describe(X)} with minimum stored value {float(np.min(X.data))!r} instead."
        )
