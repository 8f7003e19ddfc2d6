"""Short, distinct run names: what a reader needs to tell the runs of a sweep apart.

A sweep's job is named after its model and the values of the keys the sweep varies
(``als f=64 reg=0.1``; an Optuna trial alike, ``cosknn neighbours=57 shrink=3.142``, floats to
4 significant digits); a plain run after its dataset and model (``movielens_100k als``). A
swept file is named by its stem (``model.path=runs/a.csv,runs/b.run`` gives ``ranked_file a``
and ``ranked_file b``): folders, URIs and query strings never enter a name, nor do tracking and
Hydra keys or secrets; the full override list goes into a tag instead. A top-level ``label``
(the user's display name for the run) replaces the model's name, followed by the swept values
it does not already say.

A job has one name on every surface: :func:`job_run_name` names it from what its folder
records (the model option it ran, ``ease``, never the class of the option's ``_target_``), for
its run, a later sync of its folder and a report read from the folder alike.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

from ..jobdir.redact import is_secret_key, scrub_text

__all__ = [
    "short_run_name",
    "job_run_name",
    "varied_values",
    "swept_keys",
    "shown_value",
    "MAX_NAME_CHARS",
    "LABEL_KEY",
]

#: Names stay below MLflow's table column width.
MAX_NAME_CHARS = 39

_ABBREV = {
    "factors": "f",
    "regularization": "reg",
    "iterations": "it",
    "alpha": "a",
    "neighbors": "nn",
    "learning_rate": "lr",
    "test_fraction": "test",
    "shrinkage": "sh",
}
_SKIP_PREFIXES = ("tracking", "hydra", "mlflow", "output")
_PATH_KEYS = ("path", "uri", "dir", "file")
#: The top-level setting holding a run's display name (``label=...``).
LABEL_KEY = "label"
#: Hydra's sweep functions: an override whose value calls one (``int(interval(1,9))``,
#: ``tag(log, interval(...))``) is swept.
_SWEEP_CALL = re.compile(r"(?:^|[(,\s])(?:range|choice|interval|glob)\(")


def _pairs(overrides: Sequence[str] | None) -> list[tuple[str, str]]:
    out = []
    for item in overrides or []:
        key, sep, value = str(item).partition("=")
        key = key.lstrip("+~")
        if not sep or key.split(".")[0] in _SKIP_PREFIXES or is_secret_key(key):
            continue
        out.append((key, value))
    return out


def _top_level_comma(value: str) -> bool:
    """Whether ``value`` has a comma outside brackets and quotes: ``a,b`` and ``[1,2],[3]``
    are sweeps, ``[ndcg,p]`` and ``{a:1,b:2}`` are one value."""
    depth, quote = 0, ""
    for ch in value:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            return True
    return False


def swept_keys(overrides: Sequence[str] | None) -> list[str]:
    """The keys a Hydra sweep varies: overrides with several values (``a,b``) or a sweep
    function (``range(...)``, ``choice(...)``, ``glob(...)``, ``interval(...)`` alone or cast
    and tagged as Optuna's searches write it: ``int(interval(8,64))``,
    ``tag(log, interval(0.001, 1))``), tracking and Hydra keys left out; a list value
    (``[ndcg,p]``) is one value."""
    return [
        k
        for k, v in _pairs(overrides)
        if _top_level_comma(v) or (re.match(r"\w+\(", v) and _SWEEP_CALL.search(v))
    ]


def _stem(value: str) -> str:
    """The stem of a file's path or URI: no folders, scheme, query or suffix
    (``s3://b/runs/a.csv?x=1`` -> ``a``)."""
    text = value.strip("'\"").split("?", 1)[0].split("#", 1)[0].replace("\\", "/").rstrip("/")
    return PurePosixPath(text).stem or text


def shown_value(value: str) -> str:
    """A value as a name shows it: a float to 4 significant digits when that is shorter
    (``0.012345678`` -> ``0.01235``), the last part of a path otherwise, anything else as
    written."""
    try:
        number = float(value)
    except ValueError:
        return (
            PurePosixPath(value.replace("\\", "/")).name if "/" in value or "\\" in value else value
        )
    short = f"{number:.4g}"
    return short if len(short) < len(value) and "." in value else value


def _short(key: str, value: str) -> str:
    last = key.rsplit(".", 1)[-1]
    if key in ("model", "model.name", "dataset", "dataset.kind"):
        return value
    if last.endswith(_PATH_KEYS):
        return _stem(value)
    return f"{_ABBREV.get(last, last)}={shown_value(value)}"


def _get(config: Mapping[str, Any] | None, section: str, *keys: str) -> str | None:
    sub = (config or {}).get(section)
    if not isinstance(sub, Mapping):
        return None
    for k in keys:
        if sub.get(k):
            return str(sub[k])
    return None


def varied_values(overrides: Sequence[str] | None, swept: Sequence[str] | None) -> list[str]:
    """The values that tell a job from the others, as a name shows them (``f=64``, a file's
    stem): those of the ``swept`` keys in a sweep (the model's name and the label left out:
    a name says them first), else those of the ``model.*`` overrides."""
    pairs = dict(_pairs(overrides))
    if swept is None:
        keys = [k for k in pairs if k.startswith("model.")]
    else:
        keys = [k for k in swept if k in pairs and k not in ("model", "model.name", LABEL_KEY)]
    return [_short(k, pairs[k]) for k in keys]


def run_label(config: Mapping[str, Any] | None) -> str | None:
    """The display name a run was given (top-level :data:`LABEL_KEY`), or None."""
    label = (config or {}).get(LABEL_KEY)
    return scrub_text(" ".join(label.split())) if isinstance(label, str) and label.strip() else None


def _model_name(config: Mapping[str, Any] | None, given: str | None) -> str | None:
    """The model's name: ``model.name``, else ``given`` (a ``_target_`` model's config option),
    else the class named by ``model._target_``."""
    name = _get(config, "model", "name") or given
    if name:
        return name
    target = _get(config, "model", "_target_")
    return target.rsplit(".", 1)[-1] if target else None


def short_run_name(
    config: Mapping[str, Any] | None,
    overrides: Sequence[str] | None,
    swept: Sequence[str] | None = None,
    suffix: str = "",
    model_name: str | None = None,
) -> str | None:
    """The run name of a job: its model and the values of the ``swept`` keys in a sweep, its
    dataset and model otherwise; at most :data:`MAX_NAME_CHARS` characters (``suffix``, e.g.
    the job number, is kept when the name must be cut, so names stay distinct). A ``label``
    in ``config`` is the name, followed by the swept values other than the label's and the
    model's own; a label alone is kept whole. ``model_name``: the model's name when
    ``config``'s model section has none (a ``_target_`` model: its config option)."""
    model = _model_name(config, model_name)
    label = run_label(config)
    if swept is not None or label:
        head = label or model
        parts = [head] if head else []
        parts += varied_values(overrides, swept or [])
        if label and len(parts) == 1:
            return label[:250]
    else:
        dataset = _get(config, "dataset", "name", "kind")
        parts = [p for p in (dataset, model) if p]
        parts += varied_values(overrides, None)
    name = scrub_text(" ".join(parts)).strip()
    if not name:
        return None
    if len(name) > MAX_NAME_CHARS:
        tail = f" {suffix}" if suffix else ""
        name = name[: MAX_NAME_CHARS - len(tail) - 1].rstrip() + "…" + tail
    return name


def job_run_name(
    config: Mapping[str, Any] | None,
    overrides: Sequence[str] | None,
    *,
    model_name: str | None = None,
    swept: Sequence[str] | None = None,
    folder: str | None = None,
) -> str | None:
    """The name of a job's run, the one name the job has on every surface (its MLflow run, a
    report read from its folder or from the store): :func:`short_run_name` with the model's
    name the job recorded (``job.json``'s ``model.name``: ``ease`` for the option ``model=ease``,
    never the class of its ``_target_``), the ``swept`` keys of its sweep and, in a sweep, its
    ``folder``'s name as the suffix that keeps names distinct (``ease lam=500 #3``); a fair
    study's selection job (``phase: selection``) ends in ``(validation)``."""
    suffix = f"#{folder}" if folder is not None else ""
    name = short_run_name(config, overrides, swept, suffix=suffix, model_name=model_name)
    if name and (config or {}).get("phase") == "selection":
        name = f"{name} (validation)"
    return name
