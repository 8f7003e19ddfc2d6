"""Hydra's sweep overrides as Optuna distributions.

``interval(a,b)`` -> ``FloatDistribution(a, b)``; ``int(interval(a,b))`` -> ``IntDistribution``;
``tag(log,...)`` on an interval -> the same with ``log=True``; ``range(a,b,s)`` (``b``
excluded, as in Hydra's basic sweeper) -> ``IntDistribution(a, last, step=s)`` for integers, a
categorical over its values otherwise; ``choice(...)`` and ``a,b,c`` -> ``CategoricalDistribution``.
Every other override is fixed and passed to each trial as typed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["search_space", "distribution", "format_override", "SearchSpaceError"]

_PLAIN = re.compile(r"^[A-Za-z0-9_\-+./:]+$")


class SearchSpaceError(ValueError):
    """A sweep override that Optuna cannot search (the message names it)."""


def _categorical(key: str, values: Iterable[Any]):
    from optuna.distributions import CategoricalDistribution

    choices = list(values)
    bad = [v for v in choices if v is not None and not isinstance(v, (bool, int, float, str))]
    if bad or not choices:
        raise SearchSpaceError(
            f"{key}: a choice searched by Optuna must list numbers, strings, booleans or null; "
            f"got {bad[0] if bad else 'no value'!r}."
        )
    return CategoricalDistribution(choices)


def _interval(key: str, value: Any):
    from optuna.distributions import FloatDistribution, IntDistribution

    low, high = value.start, value.end
    log = "log" in value.tags
    if low is None or high is None or not low < high:
        raise SearchSpaceError(
            f"{key}: interval(low, high) needs low < high; got interval({low}, {high})."
        )
    if log and low <= 0:
        raise SearchSpaceError(
            f"{key}: tag(log, interval(low, high)) needs low > 0; got low={low}."
        )
    if isinstance(low, int) and isinstance(high, int):
        return IntDistribution(low, high, log=log)
    return FloatDistribution(float(low), float(high), log=log)


def _range(key: str, value: Any):
    from optuna.distributions import IntDistribution

    if "log" in value.tags:
        raise SearchSpaceError(f"{key}: tag(log, ...) applies to interval(...), not range(...).")
    start, stop, step = value.start, value.stop, value.step
    if (
        all(isinstance(v, int) and not isinstance(v, bool) for v in (start, stop, step))
        and step > 0
    ):
        if stop <= start:
            raise SearchSpaceError(f"{key}: range({start}, {stop}, {step}) is empty.")
        return IntDistribution(start, start + step * ((stop - 1 - start) // step), step=step)
    count = math.ceil((stop - start) / step) if step else 0
    if count <= 0:
        raise SearchSpaceError(f"{key}: range({start}, {stop}, {step}) is empty.")
    return _categorical(key, [start + i * step for i in range(count)])


def distribution(override: Any):
    """The Optuna distribution of one parsed sweep override (``override.is_sweep_override()``)."""
    key = override.get_key_element()
    value = override.value()
    if override.is_interval_sweep():
        return _interval(key, value)
    if override.is_range_sweep():
        return _range(key, value)
    if override.is_choice_sweep():
        if value.shuffle:
            raise SearchSpaceError(f"{key}: shuffle(...) means nothing to Optuna; drop it.")
        return _categorical(key, value.list)
    raise SearchSpaceError(
        f"{key}: {override.input_line!r} is not a sweep Optuna can search "
        "(use interval, int(interval), tag(log, interval), range, choice)."
    )


def search_space(
    arguments: list[str], params: Mapping[str, str] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """``(distributions by key, fixed overrides)`` of the command line's ``arguments`` and the
    sweeper's ``params`` (``{key: "int(interval(8,64))"}``; the command line wins)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parser = OverridesParser.create()
    lines = [f"{k}={v}" for k, v in (params or {}).items()] + list(arguments)
    space: dict[str, Any] = {}
    fixed: dict[str, str] = {}
    for override in parser.parse_overrides(lines):
        key = override.get_key_element()
        space.pop(key, None)
        fixed.pop(key, None)
        if override.is_sweep_override():
            space[key] = distribution(override)
        else:
            fixed[key] = override.input_line
    return space, list(fixed.values())


def format_override(key: str, value: Any) -> str:
    """``key=value`` in Hydra's override grammar (strings quoted when they need it)."""
    if value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, float):
        text = repr(value)
    elif isinstance(value, int):
        text = str(value)
    else:
        text = str(value)
        if not _PLAIN.match(text) or text.lower() in ("null", "true", "false"):
            text = "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return f"{key}={text}"
