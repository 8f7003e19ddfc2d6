"""The report page over several datasets (:meth:`Comparison.multi_dataset`): per headline
metric the systems x datasets table with the mean ranks, the Friedman test, the
critical-difference diagram and the post-hoc tests; then each dataset's own report, folded.
Rendered by :mod:`recoeval_tracking.reporting.render` like every page."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._validation import InputError
from .compare import Comparison
from .figures import safe_name
from .sections import Item, _compared, _f, _p, _plain, _prefix, _sections, md_escape
from .summary import Best, headline_metrics

__all__ = ["multi_sections"]


def _dataset_display(comparison: Comparison, metric: str) -> pd.DataFrame:
    """Systems x datasets: the mean and its mark against the baseline, the mean rank; the best
    of each column in bold."""
    table = comparison.dataset_table(metric)
    lower = comparison.lower_is_better(metric)
    out: dict[str, list[Any]] = {
        "system": [n + (" (baseline)" if n == comparison.baseline else "") for n in table.index]
    }
    for col in table.columns:
        values = table[col]
        is_rank = col == "mean rank"
        finite = values[np.isfinite(values.to_numpy(dtype=float))]
        best = (finite.min() if (lower or is_rank) else finite.max()) if len(finite) > 1 else None
        marks: dict[str, str] = {}
        if not is_rank:
            s = comparison.summary(col)
            marks = s[s["metric"] == metric].set_index("system")["mark"].to_dict()
        cells = []
        for name, v in values.items():
            text = _f(v, 2 if is_rank else 4) + (f" {marks[name]}" if marks.get(name) else "")
            cells.append(Best(text) if best is not None and v == best else text)
        out[col] = cells
    return pd.DataFrame(out, dtype=object)


def multi_sections(comparison: Comparison, figure_names: list[str]) -> list[Item]:
    """The page over several datasets: per headline metric the systems x datasets table, the
    Friedman test, the critical-difference diagram and the post-hoc tests; then each dataset's
    own report, folded."""
    s = comparison.settings
    ds_list = ", ".join(comparison.datasets)
    items: list[Item] = [
        (
            "text",
            "",
            (
                f"{len(comparison.systems)} systems compared over {len(comparison.datasets)} datasets "
                f"({md_escape(ds_list)}; {comparison.n_runs} runs), against the baseline "
                f"**{md_escape(comparison.baseline)}**. Within each dataset the paired tests run over "
                "users; across datasets the systems are ranked on each dataset (1 = best) and the "
                f"ranks tested (Friedman; {_POSTHOC_NAME[comparison.cd_posthoc]} as the diagram's "
                "post-hoc; Holm against the baseline; Demšar 2006)."
            ),
        )
    ]
    for m in headline_metrics(comparison.metrics):
        items.append(
            (
                "table",
                f"{m}: mean per dataset (mark vs the baseline), mean rank; best in bold",
                _dataset_display(comparison, m),
            )
        )
        try:
            f = comparison.friedman(m)
            cd = comparison.critical_difference(m)
        except InputError as err:
            items.append(("text", "", md_escape(f"Friedman test of {m} not computed: {err}")))
            continue
        items.append(
            (
                "text",
                "",
                (
                    f"Friedman test of {m} over {f.n_datasets} datasets and {f.n_systems} systems: "
                    f"χ² = {f.statistic:.3f}, p = {_p(f.pvalue)} ({_iman_davenport(f)}). "
                    + _posthoc_text(comparison.cd_posthoc, s["alpha"], cd)
                ),
            )
        )
        name = f"cd_{safe_name(m)}.png"
        if name in figure_names:
            items.append(("figures", "", [name]))
        holm = comparison.posthoc(m, "holm").reset_index(names="system")
        nem = comparison.posthoc(m, "nemenyi").reset_index(names="system")
        items.append(
            (
                "fold",
                f"{m}: post-hoc tests over datasets",
                [
                    (
                        "table",
                        f"Holm against the baseline {comparison.baseline} (z on mean ranks)",
                        _plain(holm),
                    ),
                    ("table", "Nemenyi p-values, every pair", _plain(nem)),
                ]
                + (
                    []
                    if comparison.cd_posthoc == "nemenyi"
                    else [
                        (
                            "table",
                            f"{_POSTHOC_NAME[comparison.cd_posthoc]} p-values (the diagram's bars), "
                            "every pair",
                            _plain(
                                comparison.pairwise_posthoc(m, comparison.cd_posthoc).reset_index(
                                    names="system"
                                )
                            ),
                        )
                    ]
                ),
            )
        )
    if len(comparison.datasets) < 5:
        items.append(
            (
                "text",
                "",
                f"With {len(comparison.datasets)} datasets the rank tests "
                "have little power (Demšar recommends more); read the per-dataset "
                "paired tests as well.",
            )
        )
    for ds, rep in comparison.reports.items():
        items.append(
            (
                "fold",
                f"Dataset {ds}: {_compared(rep)}",
                _sections(rep, figure_names, _prefix(ds), comparison, ds),
            )
        )
    return items


_POSTHOC_NAME = {
    "nemenyi": "Nemenyi's critical difference",
    "wilcoxon": "pairwise Wilcoxon signed-rank tests with Holm",
    "sign": "pairwise sign tests with Holm",
}


def _posthoc_text(posthoc: str, alpha: float, cd: float) -> str:
    """What the diagram's bars mean under the comparison's post-hoc."""
    if posthoc == "nemenyi":
        return (
            f"Nemenyi critical difference at α = {alpha:g}: CD = {cd:.3f}; systems whose mean "
            "ranks differ by less are not significantly different (joined by a bar in the "
            "diagram)."
        )
    return (
        f"Post-hoc: {_POSTHOC_NAME[posthoc]} over the datasets at α = {alpha:g} (Benavoli, "
        "Corani & Mangili 2016: unlike mean-rank tests, A against B does not depend on the "
        "other systems); systems joined by a bar in the diagram are not significantly "
        f"different. Nemenyi's critical difference, for reference: CD = {cd:.3f}."
    )


def _iman_davenport(f: Any) -> str:
    if not np.isfinite(f.iman_davenport):
        return f.note or "Iman-Davenport F undefined"
    return f"Iman-Davenport F = {f.iman_davenport:.3f}, p = {_p(f.pvalue_iman_davenport)}"


def _comparison_sections(comparison: Comparison, figure_names: list[str]) -> list[Item]:
    if comparison.multi_dataset:
        return multi_sections(comparison, figure_names)
    items = _sections(comparison.report, figure_names, comparison=comparison)
    items.insert(
        next((i for i, it in enumerate(items) if it[0] == "fold"), len(items)),
        (
            "text",
            "",
            "One dataset: the rank statistics over datasets (mean ranks, Friedman, "
            "Nemenyi's critical difference) do not apply; the paired tests over users do.",
        ),
    )
    return items
