"""Adapter for the models of the ``implicit`` library (optional dependency)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

from .._validation import check_bool, param_error
from ..scores import FactorScores, ScoreSource
from ._base import Model

__all__ = ["ImplicitModel"]

# model_name -> (module under implicit.cpu, class name)
_IMPLICIT_MODELS: dict[str, tuple[str, str]] = {
    "als": ("implicit.cpu.als", "AlternatingLeastSquares"),
    "bpr": ("implicit.cpu.bpr", "BayesianPersonalizedRanking"),
    "lmf": ("implicit.cpu.lmf", "LogisticMatrixFactorization"),
}

_INSTALL = "Install it with: pip install implicit"


class ImplicitModel(Model):
    """A CPU model of the ``implicit`` library (Frederickson), scored through its factors.

    ``implicit`` folds biases into its factors where a model has them (BPR's item bias, LMF's
    user and item biases), so the plain dot product of its ``user_factors`` and ``item_factors``
    is the model's score, handed to the evaluator as
    :class:`~recoeval_tracking.scores.FactorScores`.

    Parameters
    ----------
    model_name : {"als", "bpr", "lmf"}
        ``implicit.cpu.als.AlternatingLeastSquares``, ``implicit.cpu.bpr.BayesianPersonalizedRanking``
        or ``implicit.cpu.lmf.LogisticMatrixFactorization``.
    progress : bool, default False
        Passed to the model's ``fit`` as ``show_progress``.
    params : mapping, optional
        Keyword arguments of the ``implicit`` class (``factors``, ``iterations``,
        ``regularization``, ``random_state``, ...), as one mapping (the ``model.params`` of a
        config).
    **kwargs
        The same keyword arguments, given one by one; a name may not be given both ways.

    Raises
    ------
    ImportError
        When ``implicit`` is not installed; the message gives the install command.
    """

    name = "implicit"

    def __init__(
        self,
        model_name: str = "als",
        progress: bool = False,
        params: Mapping[str, Any] = MappingProxyType({}),
        **kwargs: Any,
    ) -> None:
        super().__init__()
        if model_name not in _IMPLICIT_MODELS:
            known = ", ".join(repr(k) for k in _IMPLICIT_MODELS)
            raise param_error("model_name", "ImplicitModel", f"one of {known}", model_name)
        self.model_name = model_name
        self.progress = check_bool(progress, "progress", "ImplicitModel")
        self.implicit_params = _merge_params(params, kwargs)
        cls = _implicit_class(model_name)
        try:
            # implicit checks the BLAS thread pool when a model is built, and wants it at 1
            with threadpool_limits(1, "blas"):
                self.model_ = cls(**self.implicit_params)
        except TypeError as exc:
            raise param_error(
                "params",
                "ImplicitModel",
                f"keyword arguments accepted by implicit's {cls.__name__}",
                sorted(self.implicit_params),
                f"({exc})",
            ) from exc

    def params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "progress": self.progress, **self.implicit_params}

    def _fit(
        self, X: sp.csr_array, user_ids: np.ndarray | None, item_ids: np.ndarray | None
    ) -> None:
        user_items = sp.csr_matrix(X, dtype=np.float32)
        # implicit parallelises itself and asks for single-threaded BLAS inside its fit.
        with threadpool_limits(1, "blas"):
            self.model_.fit(user_items, show_progress=self.progress)

    def _score_source(self) -> ScoreSource:
        A = _to_numpy(self.model_.user_factors)
        B = _to_numpy(self.model_.item_factors)
        return FactorScores(A, B, func="ImplicitModel.score_source")


def _merge_params(params: Any, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The implicit class's keyword arguments: the ``params`` mapping, then ``kwargs``."""
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise param_error(
            "params",
            "ImplicitModel",
            "a mapping of keyword arguments of the implicit class",
            params,
        )
    twice = sorted(set(params) & set(kwargs))
    if twice:
        raise param_error(
            "params",
            "ImplicitModel",
            "names not also given as keyword arguments",
            f"{twice} given both ways",
            got_is_text=True,
        )
    return {**params, **kwargs}


def _implicit_class(model_name: str) -> type:
    module_name, class_name = _IMPLICIT_MODELS[model_name]
    try:
        import importlib

        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(
            f"ImplicitModel(model_name={model_name!r}) needs the optional 'implicit' library, "
            f"which could not be imported ({exc}). {_INSTALL}"
        ) from exc
    return getattr(module, class_name)


def _to_numpy(a: Any) -> np.ndarray:
    """implicit's CPU factors are numpy arrays; GPU ones expose ``to_numpy``."""
    if hasattr(a, "to_numpy"):
        a = a.to_numpy()
    return np.ascontiguousarray(np.asarray(a))
