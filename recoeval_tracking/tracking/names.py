"""Short, distinct run names: what a reader needs to tell the runs of a sweep apart.

A sweep's job is named after its model and the keys the sweep varies (``als f=64 reg=0.1``);
a plain run after its dataset and model (``movielens_100k als``). Paths, URIs, tracking and
Hydra keys and secrets never enter a name; the full override list goes into a tag instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePath
from typing import Any

from ..jobdir.redact import is_secret_key, scrub_text

__all__ = ["short_run_name", "swept_keys", "MAX_NAME_CHARS"]

#: Names stay below MLflow's table column width.
MAX_NAME_CHARS = 39

_ABBREV = {"factors": "f", "regularization": "reg", "iterations": "it", "alpha": "a",
           "neighbors": "nn", "learning_rate": "lr", "test_fraction": "test", "shrinkage": "sh"}
_SKIP_PREFIXES = ("tracking", "hydra", "mlflow", "output")


def _pairs(overrides: Sequence[str] | None) -> list[tuple[str, str]]:
    out = []
    for item in overrides or []:
        key, sep, value = str(item).partition("=")
        key = key.lstrip("+~")
        if not sep or key.split(".")[0] in _SKIP_PREFIXES or is_secret_key(key):
            continue
        if key.endswith(("path", "uri", "dir", "file")):
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
    """The keys a Hydra sweep varies: overrides with several values (``a,b``, ``range(...)``,
    ``choice(...)``), paths and tracking keys left out; a list value (``[ndcg,p]``) is one
    value."""
    return [k for k, v in _pairs(overrides)
            if _top_level_comma(v) or v.startswith(("range(", "choice(", "interval(", "glob("))]


def _short(key: str, value: str) -> str:
    last = key.rsplit(".", 1)[-1]
    if key in ("model", "model.name", "dataset", "dataset.kind"):
        return value
    if "/" in value or "\\" in value:
        value = PurePath(value).name
    return f"{_ABBREV.get(last, last)}={value}"


def _get(config: Mapping[str, Any] | None, section: str, *keys: str) -> str | None:
    sub = (config or {}).get(section)
    if not isinstance(sub, Mapping):
        return None
    for k in keys:
        if sub.get(k):
            return str(sub[k])
    return None


def short_run_name(config: Mapping[str, Any] | None, overrides: Sequence[str] | None,
                   swept: Sequence[str] | None = None, suffix: str = "") -> str | None:
    """The run name of a job: its model and the values of the ``swept`` keys in a sweep, its
    dataset and model otherwise; at most :data:`MAX_NAME_CHARS` characters (``suffix``, e.g.
    the job number, is kept when the name must be cut, so names stay distinct)."""
    model = _get(config, "model", "name")
    pairs = dict(_pairs(overrides))
    if swept is not None:
        keys = [k for k in swept if k in pairs and k not in ("model", "model.name")]
        parts = [model] if model else []
        parts += [_short(k, pairs[k]) for k in keys]
    else:
        dataset = _get(config, "dataset", "name", "kind")
        parts = [p for p in (dataset, model) if p]
        parts += [_short(k, v) for k, v in pairs.items() if k.startswith("model.")]
    name = scrub_text(" ".join(parts)).strip()
    if not name:
        return None
    if len(name) > MAX_NAME_CHARS:
        tail = f" {suffix}" if suffix else ""
        name = name[:MAX_NAME_CHARS - len(tail) - 1].rstrip() + "…" + tail
    return name
