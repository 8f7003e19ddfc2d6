"""The user's own model class from a config: ``_target_`` and its arguments, built with Hydra.

``recoeval-track --config-dir my_configs model=ease`` with ``my_configs/model/ease.yaml``::

    _target_: my_package.EASE     # the class (or any callable returning the model)
    lam: 500.0                    # its arguments, any names (sweep them: -m model.lam=100,1000)

:func:`instantiate_model` checks the target and its arguments, builds the object with
:func:`hydra.utils.instantiate` and wraps it in :class:`~recoeval_tracking.models.UserModel`,
which checks the model protocol (``fit`` and one of ``score_users``, ``factors``,
``recommend``) before any data is read. ``_target_`` is imported from the installed packages,
or from the directory the command was started from (added to ``sys.path`` last, as ``python
-m`` and pytest do), so ``my_package/`` beside ``my_configs/`` needs no install.

Trust: a config is code. ``_target_`` imports and calls whatever it names (``builtins.open``
too), so run only configs you would run as Python. The top-level setting ``model_allow`` (a
list of module prefixes, e.g. ``[my_models]``) limits what ``_target_`` may name, every nested
``_target_`` of the model section included; :func:`check_model_allowed` refuses anything else
before it is built, in two steps:

1. the text of ``_target_`` must be an allowed module or lie below one (``my_models.ease.EASE``
   for ``[my_models]``; not ``my_models_extra.X``), checked before anything is imported;
2. the object it resolves to (as Hydra's ``instantiate`` resolves it, attribute by attribute,
   and as :func:`locate` does) must be a class or a function whose ``__module__`` is an allowed
   module or lies below one. A target is resolved through the attributes of modules, so its
   text alone proves nothing: ``my_models.ease.np.save`` is numpy's ``save`` (module
   ``numpy``) and ``my_models.ease.os.system`` is ``os.system`` (module ``posix``); both are
   refused. Anything else (an instance, a builtin) is refused too.

``model_allow: null`` (the default) sets no limit. An empty list, ``model_allow: []``, allows no
``_target_`` at all: only our own models (chosen by name, no ``_target_``) run. It is a guard
against a model option or override naming something unexpected, not a sandbox: importing an
allowed module runs its code.

Errors are one paragraph: a target that does not exist, an argument the class does not take, or
a class that breaks the protocol is a usage error
(:class:`~recoeval_tracking.models.ModelProtocolError`, exit 2); an exception raised by the
user's own code (importing its module, its constructor) is a
:class:`~recoeval_tracking.models.ModelCodeError` (exit 1) with the exception's message and the
file and line where it was raised.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..models import ModelCodeError, ModelProtocolError, UserModel
from ..models._user import code_error, qualified_name

__all__ = [
    "instantiate_model",
    "is_user_model_config",
    "HYDRA_KEYS",
    "constructor_args",
    "model_record",
    "no_target_error",
    "check_model_allowed",
]

#: The keys of a ``_target_`` node that are Hydra's, not arguments of the class.
HYDRA_KEYS = ("_target_", "_convert_", "_recursive_", "_partial_", "_args_")


def is_user_model_config(section: Mapping[str, Any]) -> bool:
    """Whether a ``model`` config section names the user's own class (``_target_``)."""
    return "_target_" in section


def _targets(node: Any, path: str = "model") -> list[tuple[str, str]]:
    """Every ``_target_`` of a config node, nested ones included, with its config key."""
    found: list[tuple[str, str]] = []
    if isinstance(node, Mapping):
        if "_target_" in node:
            found.append((f"{path}._target_", str(node["_target_"])))
        for key, value in node.items():
            if key != "_target_":
                found += _targets(value, f"{path}.{key}")
    elif isinstance(node, (list, tuple)):
        for i, value in enumerate(node):
            found += _targets(value, f"{path}[{i}]")
    return found


def _inside(name: str, prefixes: list[str]) -> bool:
    """Whether the dotted ``name`` is one of ``prefixes`` or lies below one (by components:
    ``my_models_extra`` is not below ``my_models``)."""
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def _resolutions(target: str, where: str, base_dir: str | Path | None) -> list[Any]:
    """The objects ``target`` resolves to: by :func:`locate` and by the resolver Hydra's
    ``instantiate`` uses (the same object, unless a package's attributes shadow its
    submodules). Empty when neither resolves it (nothing can then be built from it, and
    :func:`instantiate_model` reports why)."""
    base = str(Path(base_dir) if base_dir is not None else Path.cwd())
    if base not in sys.path:
        sys.path.append(base)
    found: list[Any] = []
    try:
        found.append(locate(target, where))
    except ModelCodeError:
        return []  # the user's module fails to import: reported when the model is built
    except ModelProtocolError:
        pass
    try:
        from hydra._internal.utils import _locate
    except ImportError:  # pragma: no cover - a Hydra without its resolver: ours is checked
        return found
    try:
        obj = _locate(target)
    except Exception:  # noqa: BLE001 - not resolvable by Hydra: it cannot be built either
        return found
    if not any(obj is f for f in found):
        found.append(obj)
    return found


def _object_module(obj: Any) -> str | None:
    """The module a class or a function (a bound method's function) is defined in; None for
    anything else (an instance, a builtin, a module)."""
    if inspect.ismethod(obj):
        obj = obj.__func__
    if inspect.isclass(obj) or inspect.isfunction(obj):
        module = getattr(obj, "__module__", None)
        return module if isinstance(module, str) else None
    return None


def check_model_allowed(
    model: Any,
    allow: Any,
    *,
    base_dir: str | Path | None = None,
    label: str | None = None,
) -> None:
    """Refuse a ``_target_`` of the ``model`` section (nested ones included) outside the module
    prefixes of ``allow`` (the setting ``model_allow``), before anything is built.

    ``allow`` None: no limit. An empty list: no ``_target_`` is allowed. Otherwise the text of
    every ``_target_`` must lie in one of the modules (checked before anything is imported),
    and then the object it resolves to must be a class or function whose ``__module__`` lies
    in one of them (``my_models.ease.np.save`` resolves to numpy's ``save``: refused). Resolving
    imports the target's allowed modules (``base_dir``, default the cwd, is put last on
    ``sys.path`` as :func:`instantiate_model` does); a target that cannot be resolved is left
    to :func:`instantiate_model` to report.

    Raises
    ------
    ModelProtocolError
        ``model_allow`` is not a list of module names, or a target lies outside it (the
        message names the ``_target_``, the resolved object's module and the allow-list).
    """
    if allow is None:
        return
    if (
        isinstance(allow, str)
        or not isinstance(allow, (list, tuple))
        or not all(isinstance(a, str) and a.strip(". ") for a in allow)
    ):
        raise ModelProtocolError(
            f"model_allow must be a list of module prefixes such as "
            f"[my_models] (or null: no limit). Got {allow!r}."
        )
    prefixes = [a.strip().rstrip(".") for a in allow]
    targets = _targets(model)
    if targets and not prefixes:
        key, target = targets[0]
        raise ModelProtocolError(
            f"{key} names {target!r}, but model_allow is [], which allows no _target_ (only "
            "our own models, chosen by name). List the modules you trust, "
            "model_allow=[my_models], or set model_allow=null for no limit."
        )
    for key, target in targets:
        if not _inside(target, prefixes):
            raise ModelProtocolError(
                f"{key} names {target!r}, outside model_allow {prefixes}: it is refused before "
                "anything is imported. A config is code: add the module to model_allow only if "
                "you trust it."
            )
    for key, target in targets:
        for obj in _resolutions(target, _where(label, target), base_dir):
            module = _object_module(obj)
            if module is not None and _inside(module, prefixes):
                continue
            if module is not None:
                kind = "the class" if inspect.isclass(obj) else "the function"
                name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", "?")
                what = f"{kind} {module}.{name} (module {module!r})"
            else:
                what = (
                    f"a {type(obj).__name__} (module {getattr(obj, '__module__', None)!r}), "
                    "not a class or a function"
                )
            raise ModelProtocolError(
                f"{key} names {target!r}, which resolves to {what}: outside model_allow "
                f"{prefixes}, refused before it is built. A _target_ is resolved attribute by "
                "attribute, so what it names is checked, not only its text (an allowed "
                "module's import of numpy or os does not make them allowed). Name a class or "
                "function defined in an allowed module, or add the module to model_allow only "
                "if you trust it."
            )


def no_target_error(section: Mapping[str, Any], label: str | None = None) -> ModelProtocolError:
    """The usage error for a ``model`` section with neither ``_target_`` (the user's class) nor
    ``name`` (one of our models), e.g. a config of the user's that forgot its ``_target_``."""
    from ..models import MODELS

    option = f"model={label}" if label else "the model config"
    keys = ", ".join(str(k) for k in section) or "none"
    return ModelProtocolError(
        f"{option} has no _target_ (and no name): a model config of your own must say which "
        f"class to build, e.g. '_target_: my_models.ease.EASE' in its YAML (its keys: {keys}); "
        f"or pick one of our models, model=<{'|'.join(MODELS)}>."
    )


def _where(label: str | None, target: str) -> str:
    return f"model={label}, _target_ {target}" if label else f"model._target_ {target}"


def locate(target: str, where: str) -> Any:
    """The object ``target`` (``package.module.Class``) names.

    Raises
    ------
    ModelProtocolError
        When no module of the path exists or the module has no such attribute (a misspelt
        target), with close names where there are some.
    ModelCodeError
        When importing the user's module raised (a missing dependency, a syntax error...).
    """
    parts = target.split(".")
    if len(parts) < 2 or not all(parts):
        raise ModelProtocolError(
            f"model._target_ must be the dotted path of a class, 'package.module.Class'. Got "
            f"{target!r} ({where})."
        )
    for n in range(len(parts) - 1, 0, -1):
        name = ".".join(parts[:n])
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as err:
            if err.name and (name == err.name or name.startswith(err.name + ".")):
                continue  # this prefix is not a module: try a shorter one
            raise code_error(err, f"importing {name} ({where})") from err
        except Exception as err:  # noqa: BLE001 - the user's module: any exception, reported
            raise code_error(err, f"importing {name} ({where})") from err
        obj: Any = module
        for i, attr in enumerate(parts[n:], start=n):
            if not hasattr(obj, attr):
                owner = ".".join(parts[:i])
                close = difflib.get_close_matches(
                    attr, [a for a in dir(obj) if not a.startswith("_")], n=3
                )
                hint = f" Did you mean {', '.join(f'{owner}.{c}' for c in close)}?" if close else ""
                raise ModelProtocolError(
                    f"model._target_ names {target!r}, but {owner!r} has no attribute "
                    f"{attr!r} ({where}).{hint} Check the spelling in the model's config."
                )
            obj = getattr(obj, attr)
        return obj
    raise ModelProtocolError(
        f"model._target_ names {target!r}, but no module {parts[0]!r} can be imported "
        f"({where}). Install the package that holds the class, or run the command from the "
        f"directory that holds {parts[0]}.py or {parts[0]}/ (it is on the import path)."
    )


def _check_arguments(obj: Any, kwargs: Mapping[str, Any], target: str, where: str) -> None:
    """Refuse an argument the class does not take, naming the ones it does (before building)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(**kwargs)
    except TypeError as err:
        takes = [
            p
            for p, v in sig.parameters.items()
            if v.kind in (v.POSITIONAL_OR_KEYWORD, v.KEYWORD_ONLY)
        ]
        unknown = sorted(set(kwargs) - set(takes))
        named = ", ".join(f"model.{k}" for k in unknown) if unknown else str(err)
        raise ModelProtocolError(
            f"{target} does not take the config's {named} ({where}): {err}. Its parameters: "
            f"{', '.join(takes) or '(none)'}. Change the model's config or the override."
        ) from None


def instantiate_model(
    section: Mapping[str, Any],
    label: str | None = None,
    base_dir: str | Path | None = None,
    *,
    allow: Any = None,
) -> UserModel:
    """Build the user's model of a ``model`` config section holding ``_target_``.

    Parameters
    ----------
    section : mapping
        ``_target_`` and the class's arguments (plain values; Hydra's ``_convert_`` defaults
        to ``all`` here, so the class receives plain dicts and lists).
    label : str, optional
        The config option's name (``ease``), the model's name in run names and records.
    base_dir : str or Path, optional
        The directory the command was started from, put last on ``sys.path``.
    allow : list of str, optional
        Module prefixes every ``_target_`` must lie in (:func:`check_model_allowed`).

    Returns
    -------
    UserModel
        The model, its protocol checked (not fitted).
    """
    from hydra.errors import InstantiationException
    from hydra.utils import instantiate

    target = section.get("_target_")
    if not isinstance(target, str) or not target:
        raise ModelProtocolError(
            f"model._target_ must be the dotted path of a class "
            f"(package.module.Class). Got {target!r}."
        )
    check_model_allowed(section, allow, base_dir=base_dir, label=label)
    where = _where(label, target)
    base = str(Path(base_dir) if base_dir is not None else Path.cwd())
    if base not in sys.path:
        sys.path.append(base)
    obj = locate(target, where)
    if not callable(obj):
        raise ModelProtocolError(
            f"model._target_ names {target!r}, which is a "
            f"{type(obj).__name__}, not a class ({where})."
        )
    kwargs = {k: v for k, v in section.items() if k not in HYDRA_KEYS}
    if not section.get("_partial_"):
        _check_arguments(obj, kwargs, target, where)
    node = {"_convert_": "all", **dict(section)}
    try:
        built = instantiate(node)
    except InstantiationException as err:
        cause = err.__cause__ or err
        raise code_error(
            cause, f"{qualified_name(obj) if isinstance(obj, type) else target}(...) ({where})"
        ) from cause
    return ConfiguredModel(
        built,
        label=label or target.rsplit(".", 1)[-1],
        where=where,
        args=constructor_args(obj, kwargs),
    )


def _shown(value: Any) -> bool:
    """Whether an argument's value is plain enough to show and log (numbers, text, booleans,
    None, and short lists or dicts of those)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return len(value) <= 10 and all(_shown(v) for v in value)
    if isinstance(value, Mapping):
        return len(value) <= 10 and all(isinstance(k, str) and _shown(v) for k, v in value.items())
    return False


def constructor_args(target: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments ``target`` (a class or callable) receives from ``kwargs``: those given and
    the defaults of the others, in the signature's order (``{"neighbours": 50, "shrink": 10}``
    for ``CosineItemKNN(neighbours=50)`` whose ``shrink`` defaults to 10); arguments whose value
    is not plain (an object) are left out. Empty when the signature cannot be read."""
    try:
        bound = inspect.signature(target).bind_partial(**kwargs)
    except (TypeError, ValueError):
        return {}
    bound.apply_defaults()
    out = {}
    for name, value in bound.arguments.items():
        kind = bound.signature.parameters[name].kind
        if kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if _shown(value):
            out[name] = list(value) if isinstance(value, tuple) else value
    return out


class ConfiguredModel(UserModel):
    """A :class:`~recoeval_tracking.models.UserModel` built from a config: it knows the
    arguments its class received (:func:`constructor_args`), shows them when the class has no
    ``__repr__`` of its own (``CosineItemKNN(neighbours=50, shrink=10)``, not
    ``CosineItemKNN(...)``) and gives them as its :meth:`params` (logged as ``model.<arg>``)."""

    def __init__(
        self,
        model: Any,
        *,
        label: str | None = None,
        where: str = "",
        args: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(model, label=label, where=where)
        self.args = dict(args or {})

    def params(self) -> dict[str, Any]:
        return dict(self.args)

    def __repr__(self) -> str:
        if type(self.model).__repr__ is not object.__repr__:
            return super().__repr__()
        text = ", ".join(f"{k}={v!r}" for k, v in self.args.items())
        return f"{type(self.model).__name__}({text})"


def model_record(model: Any) -> dict[str, Any]:
    """What a job records of its model (``job.json``'s ``model``): ``name``, ``description``
    (its repr, at most 500 characters) and ``args`` (:meth:`params`: a baseline's
    hyper-parameters, a configured class's constructor arguments; plain values only)."""
    try:
        args = dict(model.params())
    except Exception:  # noqa: BLE001 - a model that cannot say its parameters is still recorded
        args = {}
    return {
        "name": getattr(model, "name", None) or type(model).__name__,
        "description": repr(model)[:500],
        "args": {str(k): v for k, v in args.items() if _shown(v)},
    }
