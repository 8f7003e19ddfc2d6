"""LaTeX tables of a :class:`~recoeval_tracking.reporting.compare.Comparison` that drop into a
paper: booktabs rules, one row per system, the best of each column in bold (the second
underlined if asked), significance marks against the baseline as superscripts, and a caption
that states the test, the correction and alpha.

The tables need ``\\usepackage{booktabs}`` and ``\\usepackage{amssymb}`` (for
``\\blacktriangle``); the first line of the output says so in a comment. Every text that comes
from the runs is redacted (:func:`recoeval_tracking.jobdir.redact.scrub_text`) and escaped for
LaTeX (:func:`latex_escape`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..._validation import check_int, param_error
from ...jobdir.redact import scrub_text
from ...metrics.registry import spec_for_key
from ..outputs import register_output
from ..view import POWER_BASIS, SMALL_N_MARK, ComparisonView, percent, protocol_text, rope_text
from .summary import headline_metrics

__all__ = [
    "latex_escape",
    "metric_label",
    "comparison_latex",
    "effects_latex",
    "baselines_latex",
    "structure_problems",
    "PREAMBLE",
]

#: The packages the tables use.
PREAMBLE = "\\usepackage{booktabs}\n\\usepackage{amssymb}"

_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
_TEST_NAMES = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomization": "paired randomisation test",
}
_CORRECTION_NAMES = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "bh": "Benjamini-Hochberg",
    "none": "no",
}


def latex_escape(text: object) -> str:
    """``text`` redacted, on one line, with LaTeX's special characters escaped
    (``a_b & 50%`` -> ``a\\_b \\& 50\\%``)."""
    flat = " ".join(scrub_text(str(text)).split())
    return "".join(_ESCAPES.get(ch, ch) for ch in flat)


def metric_label(metric: str) -> str:
    """A column header: the registry's label with its cutoff (``ndcg_at_10`` -> ``NDCG@10``),
    else the escaped key."""
    return latex_escape(_plain_label(metric))


def _plain_label(metric: str) -> str:
    spec = spec_for_key(metric)
    if spec is not None:
        _, sep, tail = metric.rpartition("_at_")
        if spec.at_k and sep and tail.isdigit():
            return f"{spec.label}@{tail}"
        if metric == spec.name:
            return spec.label
    return metric


def _label(text: str) -> str:
    """A ``\\label`` key: letters, digits and ``:-.`` kept, anything else a ``-`` (a key
    cannot hold escaped characters)."""
    return "".join(
        c if c.isascii() and (c.isalnum() or c in ":-.") else "-" for c in scrub_text(str(text))
    )


def _fmt(x: float, precision: int) -> str:
    return "--" if x is None or not math.isfinite(x) else f"{x:.{precision}f}"


def _mark_tex(mark: str) -> str:
    if not mark:
        return ""
    parts = []
    if mark.startswith("▲"):
        parts.append(r"\blacktriangle")
    elif mark.startswith("▼"):
        parts.append(r"\blacktriangledown")
    if mark.endswith(SMALL_N_MARK):
        parts.append(r"\dagger")
    return "$^{" + "".join(parts) + "}$" if parts else ""


def _rank_styles(values: dict[str, float], lower: bool, underline_second: bool) -> dict[str, str]:
    """``bold`` for the best value of a column (every system tied with it too), ``underline``
    for the second best value if asked; only when two systems or more have a value."""
    finite = {k: v for k, v in values.items() if v is not None and math.isfinite(v)}
    if len(finite) < 2:
        return {}
    distinct = sorted(set(finite.values()), reverse=not lower)
    styles = {k: "bold" for k, v in finite.items() if v == distinct[0]}
    if underline_second and len(distinct) > 1:
        styles.update({k: "underline" for k, v in finite.items() if v == distinct[1]})
    return styles


def _styled(text: str, style: str | None) -> str:
    if style == "bold":
        return r"\textbf{" + text + "}"
    if style == "underline":
        return r"\underline{" + text + "}"
    return text


def _caption(
    comp: ComparisonView,
    caption: str,
    intervals: bool,
    underline_second: bool,
    small: bool,
    extra: str = "",
) -> str:
    s = comp.settings
    parts = [latex_escape(caption)] if caption else []
    key = s.get("replicate_key")
    unit = f"Mean over the {latex_escape(key)} replicates" if key else "Mean over users"
    parts.append(
        (
            unit
            + (f" with its {percent(s['confidence'])} Student-t interval" if intervals else "")
            + "."
        ).replace("%", r"\%")
    )
    parts.append(
        r"$^{\blacktriangle}$/$^{\blacktriangledown}$: significantly better/worse "
        f"than the baseline ({latex_escape(comp.baseline)}), "
        f"{_TEST_NAMES[s['test']]}, {_CORRECTION_NAMES[s['correction']]} correction "
        + (
            "over each metric's comparisons"
            if s.get("family", "metric") == "metric"
            else "over the whole table"
        )
        + f", $\\alpha = {s['alpha']:g}$."
    )
    if small:
        parts.append(
            r"$^{\dagger}$: too few pairs for a distribution-free test (Wilcoxon, "
            "randomisation) to reach $\\alpha$ after correction; no significance is "
            "claimed (the arrow gives the direction only)."
        )
    parts.append("Best per column in bold" + ("; second underlined." if underline_second else "."))
    if protocol_text(s):
        parts.append(latex_escape(protocol_text(s)))
    if extra:
        parts.append(extra)
    return " ".join(parts)


def _table(columns: str, header: list[str], rows: list[list[str]], caption: str, label: str) -> str:
    lines = ["\\begin{table}[tbp]", "  \\centering", f"  \\caption{{{caption}}}"]
    if label:
        lines.append(f"  \\label{{{_label(label)}}}")
    lines += [
        f"  \\begin{{tabular}}{{{columns}}}",
        "    \\toprule",
        "    " + " & ".join(header) + r" \\",
        "    \\midrule",
    ]
    lines += ["    " + " & ".join(r) + r" \\" for r in rows]
    lines += ["    \\bottomrule", "  \\end{tabular}", "\\end{table}"]
    return "\n".join(lines)


def comparison_latex(
    comp: ComparisonView,
    metrics: Sequence[str] | None = None,
    *,
    precision: int = 4,
    intervals: bool = False,
    underline_second: bool = False,
    caption: str = "",
    label: str = "tab:comparison",
    win_tie_loss: bool = False,
) -> str:
    """The LaTeX of :meth:`Comparison.to_latex`.

    One dataset: one table, systems x ``metrics`` (default the headline metrics), each cell
    the mean (with ``[low, high]`` when ``intervals``) and its mark; with ``win_tie_loss`` a
    ``W/T/L`` column after each metric: the users where the system beats, ties, loses to the
    baseline. Several datasets: one
    table per metric, systems x datasets plus the mean rank, the Friedman p-value and
    Nemenyi's critical difference in the caption.
    """
    precision = check_int(precision, "precision", "to_latex", minimum=0)
    if not isinstance(intervals, bool):
        raise param_error("intervals", "to_latex", "a bool", intervals)
    chosen = list(metrics) if metrics else headline_metrics(comp.metrics)
    for m in chosen:
        if m not in comp.metrics:
            raise param_error("metrics", "to_latex", f"metrics of the comparison {comp.metrics}", m)
    head = f"% Requires: {PREAMBLE.replace(chr(10), ' ')}"
    if comp.multi_dataset:
        tables = [
            _dataset_table(
                comp, m, precision, underline_second, caption, f"{label}-{m}" if label else ""
            )
            for m in chosen
        ]
        return "\n\n".join([head] + tables) + "\n"
    summary = comp.summary()
    systems = comp.systems
    rows = {
        name: [latex_escape(name + (" (baseline)" if name == comp.baseline else ""))]
        for name in systems
    }
    small = False
    for m in chosen:
        part = summary[summary["metric"] == m].set_index("system")
        styles = _rank_styles(
            {n: float(part.loc[n, "mean"]) for n in part.index},
            comp.lower_is_better(m),
            underline_second,
        )
        for name in systems:
            if name not in part.index:
                rows[name].append("n/a")
                continue
            r = part.loc[name]
            text = _styled(_fmt(r["mean"], precision), styles.get(name))
            if intervals and math.isfinite(r["ci_low"]):
                text += (
                    r"\,{\scriptsize["
                    + _fmt(r["ci_low"], precision)
                    + ", "
                    + _fmt(r["ci_high"], precision)
                    + "]}"
                )
            text += _mark_tex(str(r["mark"]))
            small = small or str(r["mark"]).endswith(SMALL_N_MARK)
            rows[name].append(text)
            if win_tie_loss:
                rows[name].append(
                    "--"
                    if pd.isna(r["wins"])
                    else f"{int(r['wins'])}/{int(r['ties'])}/{int(r['losses'])}"
                )
    header = ["System"] + [
        h
        for m in chosen
        for h in ([metric_label(m), "W/T/L"] if win_tie_loss else [metric_label(m)])
    ]
    extra = (
        "W/T/L: users where the system is better than, equal to, worse than the baseline."
        if win_tie_loss
        else ""
    )
    cap = _caption(comp, caption, intervals, underline_second, small, extra)
    return (
        head
        + "\n"
        + _table("l" + "r" * (len(header) - 1), header, list(rows.values()), cap, label)
        + "\n"
    )


def _dataset_table(
    comp: ComparisonView,
    metric: str,
    precision: int,
    underline_second: bool,
    caption: str,
    label: str,
) -> str:
    table = comp.dataset_table(metric)
    datasets = [c for c in table.columns if c != "mean rank"]
    lower = comp.lower_is_better(metric)
    marks = {}
    small = False
    for ds in datasets:
        s = comp.summary(ds)
        part = s[s["metric"] == metric].set_index("system")["mark"]
        marks[ds] = part.to_dict()
        small = small or any(str(v).endswith(SMALL_N_MARK) for v in part)
    rows = []
    styles = {ds: _rank_styles(table[ds].to_dict(), lower, underline_second) for ds in datasets}
    rank_styles = _rank_styles(table["mean rank"].to_dict(), True, underline_second)
    for name in table.index:
        row = [latex_escape(name + (" (baseline)" if name == comp.baseline else ""))]
        for ds in datasets:
            v = table.loc[name, ds]
            row.append(
                _styled(_fmt(v, precision), styles[ds].get(name))
                + _mark_tex(str(marks[ds].get(name, "")))
            )
        row.append(_styled(_fmt(table.loc[name, "mean rank"], 2), rank_styles.get(name)))
        rows.append(row)
    try:
        f = comp.friedman(metric)
        cd = comp.critical_difference(metric)
        extra = (
            f"Mean rank over {f.n_datasets} datasets (1 = best); Friedman "
            f"$\\chi^2_F = {f.statistic:.2f}$, $p = {f.pvalue:.3g}$; Nemenyi critical "
            f"difference {cd:.2f} at $\\alpha = {comp.settings['alpha']:g}$."
        )
    except Exception as err:
        extra = f"Friedman test not computed: {latex_escape(err)}."
    cap = _caption(
        comp,
        (caption + " " if caption else "") + f"{_plain_label(metric)} per dataset.",
        False,
        underline_second,
        small,
        extra,
    )
    header = ["System"] + [latex_escape(d) for d in datasets] + ["Mean rank"]
    return _table("l" + "r" * (len(datasets) + 1), header, rows, cap, label)


def structure_problems(tex: str) -> list[str]:
    """What is wrong with the structure of a table from :func:`comparison_latex`, for when no
    LaTeX engine is at hand: unbalanced ``\\begin``/``\\end`` or braces, booktabs rules
    missing or out of order, a row whose cell count differs from the column spec."""
    import re

    problems = []
    stack: list[str] = []
    for kind, env in re.findall(r"\\(begin|end)\{(\w+)\}", tex):
        if kind == "begin":
            stack.append(env)
        elif not stack or stack.pop() != env:
            problems.append(f"\\end{{{env}}} does not close the open environment")
    if stack:
        problems.append(f"unclosed environments: {stack}")
    depth = 0
    for i, ch in enumerate(tex):
        if ch in "{}" and (i == 0 or tex[i - 1] != "\\"):
            depth += 1 if ch == "{" else -1
            if depth < 0:
                problems.append("a closing brace without its opening one")
                depth = 0
    if depth:
        problems.append("unbalanced braces")
    for block in re.findall(r"\\begin\{tabular\}\{([^}]*)\}(.*?)\\end\{tabular\}", tex, re.DOTALL):
        spec, body = block
        n_cols = len(re.findall(r"[lrcp]", spec))
        order = [m for m in re.findall(r"\\(toprule|midrule|bottomrule)", body)]
        if order != ["toprule", "midrule", "bottomrule"]:
            problems.append(f"booktabs rules {order}, expected toprule, midrule, bottomrule")
        for line in body.split("\\\\"):
            line = re.sub(r"\\(toprule|midrule|bottomrule)", "", line).strip()
            if not line:
                continue
            cells = len(re.findall(r"(?<!\\)&", line)) + 1
            if cells != n_cols:
                problems.append(f"a row with {cells} cells for {n_cols} columns: {line[:60]}")
    return problems


def effects_latex(
    cmp: ComparisonView,
    metrics: list[str] | None = None,
    *,
    dataset: str | None = None,
    precision: int = 3,
    rope: Any = None,
    caption: str = "",
    label: str = "tab:effects",
) -> str:
    """A booktabs table leading with the effect sizes: per metric and system, the difference
    to the baseline with its interval, the relative difference with its interval, d_z, the
    significance mark and, for a non-significant difference, the smallest difference the
    comparison could detect at 80% power (needs ``booktabs`` and ``amssymb``). With a ``rope``
    (as :meth:`VerdictMethods.verdicts`), a last column gives the Bayesian signed-rank verdict
    over users and its probability."""
    eff = cmp.effects(dataset)
    if metrics is not None:
        unknown = [m for m in metrics if m not in set(eff["metric"])]
        if unknown:
            raise param_error(
                "metrics",
                "effects_latex",
                f"metrics of the comparison ({sorted(set(eff['metric']))})",
                unknown,
            )
        eff = eff[eff["metric"].isin(metrics)]
    s = cmp.settings
    conf = f"{s['confidence']:.0%}".replace("%", r"\%")
    p = precision
    verdict: dict[tuple[str, str], str] = {}
    if rope is None:
        rope = cmp.rope  # the comparison's own, if it has one
    if rope is not None:
        named = [str(k) for k in rope] if isinstance(rope, Mapping) else None
        for v in cmp.verdicts(rope, dataset=dataset).itertuples():
            if named is not None and str(v.metric) not in named:
                continue  # a per-metric rope judges only the metrics it names
            prob = {"worse": v.p_worse, "equivalent": v.p_equivalent, "better": v.p_better}.get(
                str(v.verdict)
            )
            verdict[(str(v.system), str(v.metric))] = str(v.verdict) + (
                "" if prob is None else f" (${prob:.2f}$)"
            )
    rows = []
    for r in eff.itertuples():
        rows.append(
            [
                metric_label(str(r.metric)),
                latex_escape(r.system),
                f"${_fmt(r.diff, p)}$ [${_fmt(r.diff_low, p)}$, ${_fmt(r.diff_high, p)}$]",
                f"${_fmt(100 * r.rel, 1)}$ [${_fmt(100 * r.rel_low, 1)}$, "
                f"${_fmt(100 * r.rel_high, 1)}$]",
                f"${_fmt(r.d_z, 2)}$",
                _mark_tex(str(r.mark)),
                "" if not r.detectable else f"${_fmt(r.mde, p)}$",
            ]
            + ([verdict.get((str(r.system), str(r.metric)), "")] if verdict else [])
        )
    text = (
        f"Differences to the baseline ({latex_escape(cmp.baseline)}) with their {conf} "
        f"intervals, relative differences (\\%) and $d_z$; "
        r"$^{\blacktriangle}$/$^{\blacktriangledown}$: significantly better/worse "
        f"after correction ($\\alpha = {s['alpha']:g}$). Detectable: for a non-significant "
        "difference, the smallest one the comparison could detect at 80\\% power, from "
        + latex_escape(POWER_BASIS.get(s["test"], POWER_BASIS["t"]))
        + "."
    )
    header = [
        "Metric",
        "System",
        r"$\Delta$ [CI]",
        r"Rel.\ $\Delta$ [CI]",
        "$d_z$",
        "",
        "Detectable",
    ]
    if verdict:
        text += (
            " Verdict: Bayesian paired t-test of the mean difference with its rope "
            f"({latex_escape(rope_text(rope))}; Benavoli et al. 2017; over replicates that "
            "draw their own split the correlated t-test), better or worse when its probability "
            f"reaches {1 - s['alpha'] / 2:g}, equivalent when both tails are below "
            f"{s['alpha']:g}, else undecided."
        )
        header.append("Verdict")
    full = (latex_escape(caption) + " " if caption else "") + text
    return _table("llrrrcr" + ("l" if verdict else ""), header, rows, full, label)


def baselines_latex(
    cmp: ComparisonView,
    metrics: Sequence[str] | None = None,
    *,
    dataset: str | None = None,
    precision: int = 4,
    intervals: bool = True,
    caption: str = "",
    label: str = "tab:baselines",
) -> str:
    """Every system against every baseline of a sweep (two or more; else ``""``): one row per
    system, one column per (metric, baseline) (``metrics`` default: the first headline
    metric), each cell the difference with its interval and mark
    (:meth:`~.verdicts.VerdictMethods.against_baselines`, the page's table); booktabs."""
    precision = check_int(precision, "precision", "baselines_latex", minimum=0)
    chosen = list(metrics) if metrics else headline_metrics(cmp.metrics)[:1]
    for m in chosen:
        if m not in cmp.metrics:
            raise param_error(
                "metrics", "baselines_latex", f"metrics of the comparison {cmp.metrics}", m
            )
    table = cmp.against_baselines(dataset=dataset)
    bases = list(dict.fromkeys(table["baseline"]))
    if len(bases) < 2:
        return ""
    systems = [n for n in cmp.systems if n not in bases] + bases
    cells = {(r.system, r.baseline, r.metric): r for r in table.itertuples()}
    small = False
    rows = []
    for n in systems:
        row = [latex_escape(n + (" (baseline)" if n in bases else ""))]
        for m in chosen:
            for b in bases:
                r = cells.get((n, b, m))
                if r is None:
                    row.append("" if n == b else "--")
                    continue
                text = f"${r.delta:+.{precision}f}$"
                if intervals and math.isfinite(r.delta_low):
                    text += (
                        r"\,{\scriptsize[$"
                        + f"{r.delta_low:+.{precision}f}$, ${r.delta_high:+.{precision}f}"
                        + "$]}"
                    )
                text += _mark_tex(str(r.mark))
                small = small or str(r.mark).endswith(SMALL_N_MARK)
                row.append(text)
        rows.append(row)
    header = ["System"] + [
        f"{metric_label(m)} vs {latex_escape(b)}" if len(chosen) > 1 else f"vs {latex_escape(b)}"
        for m in chosen
        for b in bases
    ]
    s = cmp.settings
    key = s.get("replicate_key")
    parts = [latex_escape(caption)] if caption else []
    parts.append(
        (
            f"Difference to each baseline in {', '.join(_plain_label(m) for m in chosen)}"
            + (f", mean over the paired {key} replicates" if key else ", mean over users")
            + (f" with its {percent(s['confidence'])} t interval" if intervals else "")
            + "."
        )
        .replace("%", r"\%")
        .replace("_", r"\_")
    )
    parts.append(
        r"$^{\blacktriangle}$/$^{\blacktriangledown}$: significantly better/worse than that "
        f"baseline, {_TEST_NAMES[s['test']]}, {_CORRECTION_NAMES[s['correction']]} correction "
        f"over each metric's comparisons with that baseline, $\\alpha = {s['alpha']:g}$."
    )
    if small:
        parts.append(
            r"$^{\dagger}$: too few pairs for a distribution-free test to reach $\alpha$ after "
            "correction (the arrow gives the direction only)."
        )
    if protocol_text(s):
        parts.append(latex_escape(protocol_text(s)))
    return _table("l" + "r" * (len(header) - 1), header, rows, " ".join(parts), label)


register_output("latex", comparison_latex)  # Comparison.to_latex
register_output("effects_latex", effects_latex)  # Comparison.effects_to_latex
