"""Models: the user's own (:class:`UserModel` adapts any object with ``fit`` and one of
``score_users``, ``factors`` or ``recommend``), recommendations made elsewhere
(:class:`RankedFileModel`), and the baselines: popularity, random, implicit ALS, item-KNN,
precomputed factors, ``implicit``.

Every model has ``fit(train, *, user_ids=None, item_ids=None) -> self``,
``score_source() -> ScoreSource`` and ``params() -> dict``. :data:`MODELS` is the one registry
of model names; :func:`make_model` builds a model from its name and hyper-parameters (as a Hydra
config gives them).
"""

from __future__ import annotations

from typing import Any

from .._validation import InputError, check_known_params, param_error
from ._als import ALSModel
from ._base import Model, NotFittedError
from ._factors_file import FactorsFileModel
from ._implicit import ImplicitModel
from ._knn import ItemKNNModel, cosine_topk
from ._ranked_file import RankedFileModel, read_ranked_file
from ._simple import PopularityModel, RandomModel
from ._user import (
    PROTOCOL_METHODS,
    ModelCodeError,
    ModelProtocolError,
    UserModel,
    check_protocol,
)

__all__ = [
    "MODELS",
    "make_model",
    "Model",
    "NotFittedError",
    "PopularityModel",
    "RandomModel",
    "ALSModel",
    "ItemKNNModel",
    "cosine_topk",
    "FactorsFileModel",
    "ImplicitModel",
    "RankedFileModel",
    "read_ranked_file",
    "UserModel",
    "ModelProtocolError",
    "ModelCodeError",
    "PROTOCOL_METHODS",
    "check_protocol",
]

#: Model name -> class; the single source of truth for the names :func:`make_model` accepts.
MODELS: dict[str, type[Model]] = {
    cls.name: cls
    for cls in (
        PopularityModel,
        RandomModel,
        ALSModel,
        ItemKNNModel,
        FactorsFileModel,
        ImplicitModel,
        RankedFileModel,
    )
}


def make_model(name: str, **params: Any) -> Model:
    """Build the model registered as ``name`` in :data:`MODELS` with hyper-parameters ``params``.

    Parameters
    ----------
    name : str
        A key of :data:`MODELS`.
    **params
        Keyword arguments of the model's class.

    Raises
    ------
    InputError
        For an unknown name (the message lists the registered ones) or a parameter the model does
        not take (the message lists the ones it does).

    Examples
    --------
    >>> make_model("popularity", weighted=True)
    PopularityModel(weighted=True)
    """
    if not isinstance(name, str) or name not in MODELS:
        known = ", ".join(repr(k) for k in sorted(MODELS))
        raise param_error("name", "make_model", f"one of {known}", name)
    cls = MODELS[name]
    check_known_params(cls, params, f"make_model({name!r})")
    return cls(**params)
