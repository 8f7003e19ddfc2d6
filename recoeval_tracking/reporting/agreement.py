"""The report section of an agreement table (:func:`rt.compare_profiles
<recoeval_tracking.metrics.agreement.compare_profiles>`): why libraries disagree.

:func:`agreement_items` gives the section's items (the values side by side, each difference
with the choices that make it, the steps, the checks of generated lists, the notes) for the
renderers of :mod:`.render`; :mod:`.agreement_page` makes a page of it alone (HTML or
Markdown) and writes it. A run comparison that carries an agreement
(``cmp.agreement = rt.compare_profiles(...)``) shows the section, folded, at the end of its
report.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

__all__ = ["agreement_items", "TITLE"]

#: The section's title.
TITLE = "Why libraries disagree"


def _num(x: Any, digits: int = 4) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _pct(x: Any) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:+.1%}"


def _values(ag: Any) -> pd.DataFrame:
    wide = ag.pivot()
    out = wide.map(_num)
    out.insert(0, "metric", [str(i) for i in wide.index])
    return out.reset_index(drop=True)


def _differences(ag: Any) -> pd.DataFrame:
    t = ag.table
    moved = t[t["difference"].abs() > 0]
    return pd.DataFrame(
        {
            "profile": moved["profile"],
            "metric": moved["name"] + " (" + moved["metric"] + ")",
            "value": moved["value"].map(_num),
            "default": moved["default_metric"] + " " + moved["default"].map(_num),
            "difference": moved["relative"].map(_pct),
            "why": moved["explanation"].str.split(": ", n=1).str[1],
        }
    ).reset_index(drop=True)


def _steps(ag: Any) -> pd.DataFrame:
    s = ag.steps
    return pd.DataFrame(
        {
            "profile": s["profile"],
            "metric": s["name"],
            "step": s["step"].astype(str),
            "change": s["change"],
            "evaluated as": s["metric"],
            "after": s["after"].map(_num),
            "moves it by": s["relative"].map(_pct),
        }
    ).reset_index(drop=True)


def agreement_items(ag: Any) -> list[tuple[str, str, Any]]:
    """The section's items: ``text``, ``table``, ``warning`` and ``fold`` items of
    :mod:`.sections`, built from an :class:`~recoeval_tracking.metrics.agreement.Agreement`."""
    items: list[tuple[str, str, Any]] = [
        (
            "text",
            "",
            f"The same input scored under each library's definitions at k = {ag.k}. Each "
            "difference from the default is split into the definition choices that make it, "
            f"applied one at a time in the order {', '.join(ag.order)}; the steps add up to "
            "the difference, and another order would share it out differently.",
        ),
        ("table", "Values by profile", _values(ag)),
    ]
    diff = _differences(ag)
    if len(diff):
        items.append(("table", "What makes them differ", diff))
    if len(ag.steps):
        items.append(("fold", "Every step", [("table", "Steps", _steps(ag))]))
    if ag.lists is not None:
        summary = pd.DataFrame(
            {"check": list(ag.lists_summary), "count": [str(v) for v in ag.lists_summary.values()]}
        )
        items.append(("table", "The ranked lists", summary))
        bad = ag.lists[
            (ag.lists["out_of_catalogue"] > 0) | (ag.lists["duplicates"] > 0) | ag.lists["short"]
        ]
        if len(bad):
            shown = bad.head(50).astype(str).reset_index(drop=True)
            items.append(("fold", "Users whose list breaks an assumption", [("table", "", shown)]))
    items += [("warning", "", note) for note in ag.notes]
    return items
