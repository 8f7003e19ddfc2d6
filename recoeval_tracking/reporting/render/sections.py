"""The report page's content, before any markup: a list of ``(kind, title, payload)`` items.

:func:`_sections` says what the page over one dataset holds, in reading order;
:func:`multi_sections` what the page over several datasets holds (``Comparison.multi_dataset``:
per headline metric the systems x datasets table with the mean ranks, the Friedman test, the
critical-difference diagram and the post-hoc tests; then each dataset's own page, folded);
:func:`_comparison_sections` picks one of the two for a comparison.

The kinds of item: ``text`` (with the few Markdown marks ``**bold**`` and ```code```),
``warning`` (plain text, its lead phrase up to the first ``": "`` bold: :func:`warning_lead`),
``table`` (a DataFrame of display strings, :class:`~.summary.Best` cells in bold),
``figures`` (file names), ``config`` (YAML) and ``fold`` (a list of items shown folded). The
renderers (:mod:`.html`, :mod:`.markdown`) turn the items into a page; this module reads the
comparison through its view (:mod:`recoeval_tracking.reporting.view`) and never the renderers
that show the items. Run names and notes are escaped for Markdown here
(:func:`md_escape`), so a name can change neither page's structure.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..._validation import InputError
from ...jobdir.redact import scrub_mapping, scrub_text
from ..view import (
    POWER_BASIS,
    SMALL_N_MARK,
    ComparisonView,
    ReportView,
    as_view,
    compared_metrics,
    percent,
    protocol_text,
    rope_text,
)
from ..view import uncompared_line as _uncompared_line
from .figures import dataset_prefix, safe_name
from .summary import Best, catalogue_table, headline_metrics, summary_table

__all__ = [
    "Item",
    "metric_table",
    "md_escape",
    "compared_metrics",
    "uncompared_line",
    "effect_items",
    "effect_table",
    "multi_sections",
    "baselines_table",
    "rope_text",
]


def _f(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    x = float(x)
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    return f"{x:.{digits}f}"


def _p(x: Any) -> str:
    if x is None or not np.isfinite(x):
        return "–"
    if x < 1e-300:  # below what a double holds: the test's p-value underflowed to 0
        return "< 1e-300"
    return f"{x:.2e}" if x < 1e-3 else f"{x:.4f}"


def _ci(lo: Any, hi: Any) -> str:
    return f"[{_f(lo)}, {_f(hi)}]"


def _with_intervals(label: str, pc: str, r: Any, value: str) -> dict[str, str]:
    """A row's ``value`` shown as ``label``, with its t and bootstrap intervals (``t_low``,
    ``t_high``, ``boot_low``, ``boot_high``) under headers that start with ``pc``."""
    return {
        label: _f(r[value]),
        f"{pc} t CI": _ci(r["t_low"], r["t_high"]),
        f"{pc} bootstrap CI": _ci(r["boot_low"], r["boot_high"]),
    }


def _against_baseline(d: Any, pc: str) -> dict[str, str]:
    """A run's comparison with the baseline (a row of ``comparisons``), as the table shows it."""
    return {
        **_with_intervals("Δ vs baseline", f"Δ {pc}", d, "mean_diff"),
        "pairs": _f(d["n_pairs"]),
        "p t (adj)": _p(d["p_t_adj"]),
        "p Wilcoxon (adj)": _p(d["p_wilcoxon_adj"]),
        "p randomisation (adj)": _p(d["p_randomization_adj"]),
        "d_z": _f(d["cohens_dz"], 3),
        "sig.": d["mark"],
    }


def metric_table(
    summary: pd.DataFrame,
    comparisons: pd.DataFrame,
    metric: str,
    baseline: str,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """One display table for ``metric``: each run's mean with its intervals and counts, and its
    comparison with the baseline (difference, intervals, adjusted p-values, d_z, mark); the
    interval headers name their ``confidence``."""
    pc = percent(confidence)
    s = summary[summary["metric"] == metric]
    c = comparisons[comparisons["metric"] == metric].set_index("run_id")
    # the comparison's columns, left empty for the baseline (a row of NaN names them)
    empty = dict.fromkeys(_against_baseline(defaultdict(lambda: math.nan), pc), "")
    rows = []
    for _, row in s.iterrows():
        in_c = row["run_id"] in c.index
        rows.append(
            {
                "run": row["run"] + (" (baseline)" if row["run_id"] == baseline else ""),
                **_with_intervals("mean", pc, row, "mean"),
                "users": _f(row["n"]),
                "NaN": _f(row["n_nan"]),
                "missing": _f(row["n_missing"]),
                **(_against_baseline(c.loc[row["run_id"]], pc) if in_c else empty),
            }
        )
    return pd.DataFrame(rows)


_MD_SPECIAL = "\\`*_{}[]<>()#+!|~"


def md_escape(text: Any) -> str:
    """User text for Markdown: secrets redacted, on one line, every character Markdown reads as
    a mark backslash-escaped (``a*b*`` stays ``a*b*``, ``<script>`` stays text)."""
    flat = " ".join(scrub_text(str(text)).split())
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in flat)


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = [_f(v) for v in out[c]]
    return out


def _settings_text(report: ReportView) -> str:
    s = report.settings
    used = s.get("n_permutations_used", s["n_permutations"])
    auto = " (auto: enough for the correction)" if s["n_permutations"] == "auto" else ""
    family = (
        "each metric's comparisons with the baseline"
        if s.get("family", "table") == "metric"
        else "every (run, metric) comparison of a table"
    )
    return (
        f"Intervals: {percent(s['confidence'])} Student-t and percentile bootstrap "
        f"({s['n_bootstrap']} resamples). Paired tests against the baseline on the users "
        f"defined in both runs: t-test, Wilcoxon signed-rank, sign-flip randomisation "
        f"({used} random sign vectors{auto}, or all 2^n when that is fewer: exact). "
        f"Seed {s['seed']}. p-values adjusted with {s['correction']} over {family}; marks "
        f"from the adjusted {s['test']}-test p-value: ▲/▼ better/worse than the baseline, "
        f"`*` p < {s['alpha']:g}, `**` p < 0.01, `***` p < 0.001." + _small_n_text(report)
    )


def _small_n_text(report: ReportView) -> str:
    """The legend of ``†``, when a comparison has too few pairs for its mark."""
    c = report.comparisons
    if not len(c) or "small_n" not in c.columns or not c["small_n"].any():
        return ""
    n = sorted({int(v) for v in c.loc[c["small_n"], "n_nonzero"]})
    from ...stats import min_attainable_p

    smallest = min_attainable_p(n[0], "wilcoxon") if n[0] >= 1 else float("nan")
    return (
        f" {SMALL_N_MARK}: only {', '.join(map(str, n))} pairs, too few for a "
        f"distribution-free test to reach p < {report.settings['alpha']:g} after the "
        f"correction (pairs whose difference is not zero: a zero one carries no sign; the "
        f"smallest possible Wilcoxon or randomisation p with {n[0]} is {smallest:.3g}); no "
        f"significance is claimed, the arrow gives the direction "
        f"only. More {'replicates' if report.settings.get('replicate_key') else 'users'} "
        "are needed to test."
    )


def _config_text(report: ReportView) -> str:
    import yaml

    if not report.config:
        return "(not given)\n"
    plain = scrub_mapping(json.loads(json.dumps(report.config, default=str)))
    return yaml.safe_dump(plain, sort_keys=False, allow_unicode=True)


Item = tuple[str, str, Any]


def _compared(report: ReportView) -> str:
    """What was compared: ``4 runs``, or ``2 groups (6 runs)`` with replicates."""
    n_in = int(report.settings.get("n_runs", len(report.runs)))
    if report.settings.get("replicate_key"):
        return f"{len(report.runs)} group{'s' if len(report.runs) != 1 else ''} ({n_in} runs)"
    return f"{len(report.runs)} run{'s' if len(report.runs) != 1 else ''}"


def _shown_id(report: ReportView, run: Any) -> str:
    """A run's id, or for a replicate group the count of its runs (its id lists every param)."""
    if report.settings.get("replicate_key") and run.run_id.startswith("group:"):
        n = len(run.per_user)  # one row per replicate (a run built in Python has no source)
        return f"{n} {report.settings['replicate_key']} replicates"
    return run.run_id


#: The lead of the protocol box when the systems' budgets differ (then a warning).
UNEQUAL_BUDGETS = (
    "Unequal budgets: the systems were not tuned alike (see each one's budget below), so "
    "compare them with care."
)


def warning_lead(text: str) -> tuple[str, str]:
    """A warning's lead phrase, shown bold (its text up to the first ``": "``, when short,
    colon included), and the rest, shown plain; ``("", text)`` when it has no such lead."""
    head, sep, rest = str(text).partition(": ")
    if sep and len(head) <= 60:
        return f"{head}:", rest
    return "", str(text)


def _protocol_items(settings: Mapping[str, Any]) -> list[Item]:
    text = protocol_text(settings)
    if not text:
        return []
    if bool(settings.get("budgets")) and not settings.get("equal_budgets", True):
        # a warning is plain text, its lead bold: the budgets listed under their plain head
        listed = protocol_text({**settings, "equal_budgets": True})
        return [("warning", "", f"{UNEQUAL_BUDGETS} {listed}")]
    shown = md_escape(text)  # a text item is Markdown
    for head in ("Protocol:", "Budgets:", "Leakage:"):
        shown = shown.replace(head, f"**{head}**", 1)
    return [("text", "", shown)]


def _head_items(report: ReportView, comparison: ComparisonView | None = None) -> list[Item]:
    """The first screen: intro, summary, notes, catalogue-level metrics."""
    base = report.run(report.baseline)
    compared, uncompared = compared_metrics(report)
    n = len(compared)
    intro = (
        f"{_compared(report)} compared against the baseline **{md_escape(base.name)}** "
        f"(`{scrub_text(_shown_id(report, base))}`) on {n} metric{'s' if n != 1 else ''}: "
        f"{', '.join(compared)}."
    )
    items: list[Item] = [("text", "", intro)]
    if uncompared:
        items.append(("text", "", uncompared_line(uncompared)))
    items += _protocol_items(report.settings)
    if len(report.runs) > 1 or report.metrics:
        items.append(
            (
                "table",
                f"Summary: mean [{percent(report.settings['confidence'])} t "
                "CI] and mark vs the baseline, best in bold",
                summary_table(report),
            )
        )
    rep = report.settings.get("replicate_key")
    if rep:
        groups = ", ".join(md_escape(r.name) for r in report.runs)
        items.append(
            (
                "text",
                "",
                f"Replicates over `{rep}`: one group per system ({groups}); "
                f"each row of a group is one {rep}'s mean, n counts replicates, intervals "
                f"show the spread between them and comparisons are paired by {rep}. "
                f"The groups are formed by the params that differ: "
                f"{', '.join(report.settings.get('group_by') or []) or 'none'}.",
            )
        )
    for note in report.notes:  # a metric compared for no run is said once, in the intro
        if not any(note.startswith(f"{m} is ") for m in uncompared):
            items.append(("text", "", md_escape(note) + "."))
    if len(report.left_out):
        items.append(
            (
                "fold",
                _left_out_title(len(report.left_out)),
                [("table", "", _left_out_shown(report.left_out))],
            )
        )
    if report.mismatches:
        items.append(
            (
                "warning",
                "",
                "NOT COMPARABLE (compared anyway, allow_mismatch=true): "
                + "; ".join(report.mismatches)
                + ". Every table below is marked.",
            )
        )
    catalogue = catalogue_table(report)
    if len(catalogue.columns):
        items.append(
            ("table", "Catalogue-level metrics (one value per run, best in bold)", catalogue)
        )
    items.append(("text", "", _settings_text(report)))
    return items


#: What a row of the left-out table leaves out, as the page says it.
_LEFT_OUT_SHOWN = {"values": "the metric", "test": "the test (mean shown)"}


def uncompared_line(
    uncompared: Mapping[str, tuple[str, tuple[str, ...]]],
    escape: Callable[[str], str] = md_escape,
    tail: str = "; their means are in the tables of every metric, and the table of what was "
    "left out names the runs.",
) -> str:
    """The page's sentence on the metrics compared for no run
    (:func:`~recoeval_tracking.reporting.left_out.uncompared_line`), Markdown-escaped, with its
    pointer to the tables."""
    return _uncompared_line(uncompared, escape=escape, tail=tail)


_LEFT_OUT = "Left out of the comparison"


def _left_out_title(n: int) -> str:
    """The heading of the left-out fold, a part of the first screen."""
    return f"{_LEFT_OUT}, with the reason ({n})"


def _left_out_shown(left_out: pd.DataFrame) -> pd.DataFrame:
    """The left-out table as the page shows it: metric, system, what is left out, the
    reason."""
    shown = left_out.drop(columns="run_id").rename(columns={"left_out": "left out"})
    shown["left out"] = shown["left out"].map(lambda v: _LEFT_OUT_SHOWN.get(v, v))
    return shown


def _headline_curves(report: ReportView, curves: list[str], prefix: str = "") -> list[str]:
    """The curve figures of the summary's metrics (``ndcg_at_10`` -> ``curves_ndcg_at_k.png``)."""
    wanted = {
        f"{prefix}curves_{m.rsplit('_at_', 1)[0]}_at_k.png"
        for m in headline_metrics(report.metrics)
    }
    return [n for n in curves if n in wanted][:4]


def _sections(
    report: ReportView,
    figure_names: list[str],
    prefix: str = "",
    comparison: ComparisonView | None = None,
    dataset: str | None = None,
) -> list[Item]:
    """The page as (kind, title, payload) items shared by both renderers: ``text``, ``warning``,
    ``table`` (a DataFrame), ``figures`` (file names) and ``fold`` (a list of items shown folded).
    ``prefix`` starts the names of this report's figures (one dataset of several)."""
    comparison = comparison or as_view(report, "render_html")
    items = _head_items(report, comparison)
    # the intro, the protocol and the summary table first; then the effect sizes and the
    # verdicts for a rope
    at = next((i + 1 for i, it in enumerate(items) if str(it[1]).startswith("Summary:")), 1)
    items[at:at] = (
        baselines_items(comparison, dataset)
        + effect_items(comparison, dataset)
        + verdict_items(comparison, dataset)
    )
    curves = [n for n in figure_names if n.startswith(prefix + "curves_")]
    first = _headline_curves(report, curves, prefix)
    if first:
        items.append(
            (
                "figures",
                "@1..K curves of the headline metrics (each run's 95% CI bands, as evaluated)",
                first,
            )
        )
    if len(curves) > len(first):
        items.append(
            ("fold", "Every @1..K curve", [("figures", "", [n for n in curves if n not in first])])
        )
    mark = " [fingerprints differ]" if report.mismatches else ""
    items += baselines_items(comparison, dataset, folded=True)
    items.append(
        (
            "fold",
            f"Every metric, all users: intervals, differences and tests{mark}",
            [
                (
                    "table",
                    f"{m}: all users{mark}",
                    metric_table(
                        report.summary,
                        report.comparisons,
                        m,
                        report.baseline,
                        report.settings["confidence"],
                    ),
                )
                for m in report.metrics
            ],
        )
    )
    if len(report.runs) > 1:
        unit = "replicates" if report.settings.get("replicate_key") else "users"
        items.append(
            (
                "fold",
                f"Win/tie/loss: {unit} where each system is better, equal, worse",
                [
                    (
                        "table",
                        f"{m}: {unit} where system beats, ties, loses to other",
                        _plain_wtl(comparison.win_tie_loss(m, dataset)),
                    )
                    for m in headline_metrics(report.metrics)
                ],
            )
        )
    items += _slice_items(report, mark)
    per_user = [n for n in figure_names if n.startswith(prefix + "per_user_")]
    if per_user:
        items.append(("fold", "Per-user distributions", [("figures", "", per_user)]))
    sweeps = [n for n in figure_names if n.startswith(prefix + "sweep_")]
    if sweeps:
        items.append(("fold", "Metrics against the swept parameters", [("figures", "", sweeps)]))
    items.append(
        (
            "fold",
            "Users per run, inputs and the report's config",
            [
                (
                    "table",
                    "Users per run (union of all runs; missing and NaN are counted, never dropped "
                    "silently)",
                    _plain(report.coverage),
                ),
                ("table", "Inputs", report.inputs),
                ("config", "Report config", _config_text(report)),
            ],
        )
    )
    return items


def _slice_items(report: ReportView, mark: str) -> list[Item]:
    """One fold per slice: each group's table of every metric, or one line when the slice's
    one group holds every user."""
    items: list[Item] = []
    union = int(report.coverage["users_union"].iloc[0]) if len(report.coverage) else -1
    for name in dict.fromkeys(sl.slice for sl in report.slices):
        groups = [sl for sl in report.slices if sl.slice == name]
        if len(groups) == 1 and groups[0].n_users == union:  # the slice is every user
            items.append(
                ("fold", f"Slice {name}{mark}", [("text", "", _one_group_text(groups[0]))])
            )
            continue
        items.append(
            (
                "fold",
                f"Slice {name}{mark}",
                [
                    (
                        "table",
                        f"{m}: slice {sl.slice}, {sl.group} ({sl.n_users} users){mark}",
                        metric_table(
                            sl.summary,
                            sl.comparisons,
                            m,
                            report.baseline,
                            report.settings["confidence"],
                        ),
                    )
                    for sl in report.slices
                    if sl.slice == name
                    for m in report.metrics
                ],
            )
        )
    return items


def _one_group_text(group: Any) -> str:
    """What a slice whose one group holds every user says instead of repeating the tables."""
    return (
        f"Every user falls in one group of this slice, {md_escape(group.group)} "
        f"({group.n_users} users): its tables are those of every metric, all users, above."
    )


def _plain_wtl(table: pd.DataFrame) -> pd.DataFrame:
    return table.drop(columns="metric").astype({c: object for c in ("wins", "ties", "losses", "n")})


def effect_table(cmp: ComparisonView, dataset: str | None = None) -> pd.DataFrame:
    """The page's effect sizes, one row per headline metric and system against the baseline:
    the difference with its interval, the relative difference with its interval, d_z, the mark,
    and (when any comparison is non-significant) what the comparison could detect. Empty when
    nothing is compared."""
    try:
        eff = cmp.effects(dataset)
    except InputError:  # nothing to compare (one run, no shared metric)
        return pd.DataFrame()
    if eff.empty:
        return pd.DataFrame()
    conf = percent(cmp.settings["confidence"])
    rows = []
    for metric in headline_metrics(list(dict.fromkeys(eff["metric"]))):
        for r in eff[eff["metric"] == metric].itertuples():
            rows.append(
                {
                    "metric": metric,
                    "system": scrub_text(str(r.system)),
                    f"difference [{conf} CI]": f"{r.diff:+.4f} [{r.diff_low:+.4f}, "
                    f"{r.diff_high:+.4f}]",
                    f"relative [{conf} CI]": f"{100 * r.rel:+.1f}% [{100 * r.rel_low:+.1f}%, "
                    f"{100 * r.rel_high:+.1f}%]",
                    "d_z": f"{r.d_z:+.2f}",
                    "mark": r.mark or "",
                    "detectable at 80% power": r.detectable or "",
                }
            )
    table = pd.DataFrame(rows)
    if not table["detectable at 80% power"].any():
        table = table.drop(columns="detectable at 80% power")
    return table


def effect_items(cmp: ComparisonView, dataset: str | None = None) -> list[tuple[str, str, Any]]:
    """The report page's lead: per headline metric, each system's difference to the baseline
    with its interval, the relative difference with its interval and d_z, then the mark, and
    beside a non-significant difference what the comparison could detect (one table,
    :func:`effect_table`); over replicates, which correction applies to which replicate
    kind."""
    table = effect_table(cmp, dataset)
    if table.empty:
        return []
    conf = f"{100 * cmp.settings['confidence']:g}%"
    base = md_escape(cmp.baseline)
    items: list[tuple[str, str, Any]] = [
        (
            "text",
            "",
            (
                f"Effect sizes against **{base}**, one row per headline metric and system: the "
                f"difference of means and the relative difference with their {conf} intervals, "
                "Cohen's d\\_z and the mark; beside a non-significant difference, the smallest "
                "one this comparison could detect at 80% power after its correction, from "
                + POWER_BASIS.get(cmp.settings.get("test", "t"), POWER_BASIS["t"])
                + "."
            ),
        ),
        ("table", "", table),
    ]
    if cmp.settings.get("replicate_key"):
        items.append(
            (
                "text",
                "",
                "Replicates that draw their own split share training data, so the t-test, "
                "its marks, the difference intervals and the verdicts use the "
                + cmp.settings.get("replicate_correction", "Nadeau-Bengio corrected t")
                + "; the Wilcoxon and randomisation p-values are not corrected "
                "(`Comparison.replicate_tests`).",
            )
        )
    return items


def verdict_table(cmp: ComparisonView, dataset: str | None = None) -> pd.DataFrame:
    """The verdicts for the comparison's rope, shown: per system and headline metric the rope,
    the probabilities of better / equivalent / worse (Bayesian paired t over users; over
    replicates the correlated t), the verdict and the pairs (users or replicates); TOST's
    p-value is the larger of P(better) and P(worse), said in the caption. Empty without a
    rope."""
    if cmp.rope is None:
        return pd.DataFrame()
    try:
        v = cmp.verdicts(dataset=dataset)
    except InputError:  # nothing to compare (one run, no shared metric)
        return pd.DataFrame()
    if v.empty:
        return v
    if isinstance(cmp.rope, Mapping):  # a per-metric rope judges only the metrics it names
        v = v[v["metric"].isin([str(k) for k in cmp.rope])]
    v = v[v["metric"].isin(headline_metrics(list(dict.fromkeys(v["metric"]))))]
    if v.empty:
        return pd.DataFrame()
    return pd.DataFrame(
        {
            "system": v["system"],
            "metric": v["metric"],
            "rope": [_f(x) for x in v["rope"]],
            "P(better)": [f"{x:.3f}" for x in v["p_better"]],
            "P(equivalent)": [f"{x:.3f}" for x in v["p_equivalent"]],
            "P(worse)": [f"{x:.3f}" for x in v["p_worse"]],
            "verdict": v["verdict"],
            ("replicates" if cmp.settings.get("replicate_key") else "users"): v["n"],
        },
        dtype=object,
    ).reset_index(drop=True)


def baselines_table(cmp: ComparisonView, metric: str, dataset: str | None = None) -> pd.DataFrame:
    """Systems x baselines for ``metric``: each cell a system's difference to that baseline
    with its interval and mark (:meth:`~.verdicts.VerdictMethods.against_baselines`), the
    compared systems first, then the baselines; empty with fewer than two baselines."""
    table = cmp.against_baselines(metric, dataset)
    bases = list(dict.fromkeys(table["baseline"]))
    if len(bases) < 2:
        return pd.DataFrame()
    systems = [n for n in cmp.systems if n not in bases] + bases
    out: dict[str, list[str]] = {
        "system": [n + (" (baseline)" if n in bases else "") for n in systems]
    }
    cells = {(r.system, r.baseline): r for r in table.itertuples()}
    for b in bases:
        col = []
        for n in systems:
            r = cells.get((n, b))
            if r is None:
                col.append("–" if n != b else "")
                continue
            col.append(
                f"{r.delta:+.4f} [{r.delta_low:+.4f}, {r.delta_high:+.4f}]"
                + (f" {r.mark}" if r.mark else "")
                + f" (n={int(r.n)})"
            )
        out[f"vs {b} (baseline)"] = col
    return pd.DataFrame(out, dtype=object)


def baselines_items(
    cmp: ComparisonView, dataset: str | None = None, folded: bool = False
) -> list[Item]:
    """With two baselines or more: the first headline metric's systems x baselines table (for
    the first screen), or with ``folded`` the other headline metrics' tables in a fold."""
    try:
        metrics = headline_metrics(
            (cmp.report if dataset is None else cmp.reports[dataset]).metrics
        )
        tables = [(m, baselines_table(cmp, m, dataset)) for m in metrics]
    except InputError:
        return []
    tables = [(m, t) for m, t in tables if len(t.columns)]
    if not tables:
        return []
    s = cmp.settings
    rep = s.get("replicate_key")
    unit = f"{rep} replicates" if rep else "users"
    what = (
        f"difference [{percent(s['confidence'])} t CI] and mark, n = {unit} paired "
        f"({s['correction']} over each baseline's comparisons)"
    )
    if not folded:
        return [("table", f"{tables[0][0]} against every baseline: {what}", tables[0][1])]
    if len(tables) < 2:
        return []
    return [
        (
            "fold",
            "Every headline metric against every baseline",
            [("table", f"{m} against every baseline: {what}", t) for m, t in tables[1:]],
        )
    ]


def verdict_items(cmp: ComparisonView, dataset: str | None = None) -> list[tuple[str, str, Any]]:
    """With a rope (``compare(..., rope=...)``, the report's ``rope=``): each system's
    three-way verdict against the baseline with its probabilities, and the TOST beside it."""
    table = verdict_table(cmp, dataset)
    if table.empty:
        return []
    alpha = cmp.settings["alpha"]
    rep = cmp.settings.get("replicate_key")
    test = (
        f"the Bayesian correlated t-test of the mean difference over the {rep} replicates "
        "(Corani & Benavoli 2015, Nadeau-Bengio's variance)"
        if rep and cmp.settings.get("replicate_ratio", 0) > 0
        else "the Bayesian paired t-test of the mean difference over "
        + (f"the {rep} replicates" if rep else "users")
        + " (Benavoli et al. 2017)"
    )
    return [
        (
            "table",
            (
                f"Verdicts against {cmp.baseline} for the rope {rope_text(cmp.rope)}"
                + (" (the metrics it names)" if isinstance(cmp.rope, Mapping) else "")
                + ": better / equivalent / "
                f"worse by {test}. Better (worse) when P >= {1 - alpha / 2:g}: the "
                f"{100 * (1 - alpha):g}% interval lies beyond the rope, so equal systems get a "
                f"direction in at most {100 * alpha:g}% of comparisons; equivalent when P(better) "
                "and P(worse) are "
                f"both < {alpha:g}, which is exactly TOST p < {alpha:g} (TOST's p is the larger "
                "of the two, so it has no column of its own); else undecided (for a "
                "lower-is-better metric better is lower). Each verdict is its own comparison's, "
                "not corrected for multiplicity, while the marks of the summary are "
                f"{cmp.settings.get('correction', 'holm')}-corrected: a difference without a mark "
                "can still read better here"
            ),
            table,
        )
    ]


def _dataset_display(comparison: ComparisonView, metric: str) -> pd.DataFrame:
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


def multi_sections(comparison: ComparisonView, figure_names: list[str]) -> list[Item]:
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
                _sections(rep, figure_names, dataset_prefix(ds), comparison, ds),
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


def _comparison_sections(comparison: ComparisonView, figure_names: list[str]) -> list[Item]:
    items = _comparison_items(comparison, figure_names)
    agreement = getattr(comparison, "agreement", None)  # set by the user: rt.compare_profiles
    if agreement is not None:
        from ..agreement import agreement_items

        items.append(("fold", "Why libraries disagree", agreement_items(agreement)))
    return items


def _comparison_items(comparison: ComparisonView, figure_names: list[str]) -> list[Item]:
    if comparison.multi_dataset:
        return multi_sections(comparison, figure_names)
    items = _sections(comparison.report, figure_names, comparison=comparison)
    items.insert(
        next(
            (
                i
                for i, it in enumerate(items)
                if it[0] == "fold" and not str(it[1]).startswith(_LEFT_OUT)
            ),
            len(items),
        ),
        (
            "text",
            "",
            "One dataset: the rank statistics over datasets (mean ranks, Friedman, "
            "Nemenyi's critical difference) do not apply; the paired tests over users do.",
        ),
    )
    return items
