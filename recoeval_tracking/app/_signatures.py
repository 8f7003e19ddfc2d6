"""Which parameters of a registered model, split or loader are config values, read from its
signature.

The registries (:data:`recoeval_tracking.models.MODELS`, :data:`recoeval_tracking.splitting.SPLITS`,
:data:`recoeval_tracking.data.DATASETS`) are the single source of truth for the parameters a
config may set: :mod:`.schema` derives the Hydra schema of every option from them and
:mod:`.pipeline` calls them with the config's values. Both read the signature through this
module, so they agree by construction. It imports neither Hydra nor OmegaConf.

The rules, the same for every registered class or function:

* a parameter is a config value when its annotation is one (``bool``, ``int``, ``float``,
  ``str``, ``Any``, a ``Literal`` of one of those, a mapping or a sequence of those,
  ``X | None``); the others (callables, arrays, data containers) are left to the caller, as
  are ``*args`` and ``**kwargs``; a required parameter of that kind leaves the entry without
  a config;
* a parameter whose annotation admits an :class:`os.PathLike` (``str | os.PathLike``,
  ``str | Path | None``) is a file path: a ``str`` in the config, made absolute from the
  directory the command was started from;
* parameters named in :data:`RUNTIME_PARAMS` (``progress``) are set by the job, never by the
  config;
* ``None`` is passed on as ``None``: a parameter annotated ``X | None`` takes it, meaning its
  default when the default is None and the documented meaning otherwise (recometrics'
  ``users_test_fraction=None``: no fraction; ``max_test_users=None``: every user).
"""

from __future__ import annotations

import collections.abc as cabc
import inspect
import os
import types
import typing
from dataclasses import dataclass
from typing import Any

__all__ = ["RUNTIME_PARAMS", "ConfigParam", "config_params", "path_params", "takes"]

#: Parameters the job sets itself (not config values): the progress-bar flag.
RUNTIME_PARAMS = frozenset({"progress"})

_SCALARS = (bool, int, float, str)
_MAPPINGS = (dict, cabc.Mapping, cabc.MutableMapping, typing.Mapping, typing.Dict)
_SEQUENCES = (list, tuple, cabc.Sequence, typing.List, typing.Sequence, typing.Tuple)


@dataclass(frozen=True)
class ConfigParam:
    """One config value of a registered callable.

    ``type`` is a type OmegaConf checks (``int``, ``Optional[str]``, ``Dict[str, Any]``...);
    ``default`` is :data:`inspect.Parameter.empty` for a required parameter.
    """

    name: str
    type: Any
    default: Any
    is_path: bool


class _NotConfig(Exception):
    """An annotation that is not a config value."""


def _signature(target: Any) -> inspect.Signature:
    return inspect.signature(target, eval_str=True)


def _is_path_type(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, os.PathLike)


def _config_type(tp: Any) -> tuple[Any, bool]:
    """(the OmegaConf type of annotation ``tp``, whether it is a file path); raises _NotConfig."""
    if tp is Any or tp in _SCALARS:
        return tp, False
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        optional = type(None) in args
        members = [a for a in args if a is not type(None)]
        if any(_is_path_type(a) for a in members):
            if not all(a is str or _is_path_type(a) for a in members):
                raise _NotConfig(tp)
            inner, is_path = str, True
        elif len(members) == 1:
            inner, is_path = _config_type(members[0])
        else:  # several config types: any value, checked by the callable
            for member in members:
                _config_type(member)
            inner, is_path = Any, False
        return (typing.Optional[inner] if optional else inner), is_path
    if _is_path_type(tp):
        return str, True
    if origin is typing.Literal and len({type(a) for a in args}) == 1:
        return _config_type(type(args[0]))
    if tp in _MAPPINGS or origin in _MAPPINGS:
        key, value = (args or (str, Any))[:2]
        return typing.Dict[_config_type(key)[0], _config_type(value)[0]], False
    if tp in _SEQUENCES or origin in _SEQUENCES:
        return typing.List[_config_type(args[0] if args else Any)[0]], False
    raise _NotConfig(tp)


def config_params(target: Any, *, inputs: int = 0) -> list[ConfigParam] | None:
    """The config values of ``target`` (a class or function), in signature order.

    The first ``inputs`` parameters are the data the callable works on (a split's
    ``interactions``) and are skipped. Returns None when another required parameter cannot be a
    config value (``from_dataframe``'s ``df``): such an entry has no config.
    """
    out = []
    params = list(_signature(target).parameters.values())[inputs:]
    for p in params:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in RUNTIME_PARAMS:
            continue
        try:
            tp, is_path = _config_type(Any if p.annotation is p.empty else p.annotation)
        except _NotConfig:
            if p.default is p.empty:
                return None
            continue
        out.append(ConfigParam(p.name, tp, p.default, is_path))
    return out


def path_params(target: Any) -> tuple[str, ...]:
    """Names of the parameters of ``target`` that are file paths (see the module rules)."""
    return tuple(p.name for p in config_params(target) or () if p.is_path)


def takes(target: Any, name: str) -> bool:
    """Whether ``target`` has a parameter called ``name`` (``**kwargs`` does not count)."""
    param = _signature(target).parameters.get(name)
    return param is not None and param.kind not in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
