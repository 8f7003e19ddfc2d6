"""One comparison object behind every surface: :func:`compare` returns a :class:`Comparison`
that prints a summary, holds the per-metric tables, the win/tie/loss counts, Tukey's HSD and,
over several datasets, the mean ranks, the Friedman test and the critical-difference diagram;
it writes LaTeX, Markdown and HTML. The report command builds its page from the same object,
so a number in a notebook and in the page is the same number.

The statistics are those of :func:`~recoeval_tracking.reporting.report.build_report` (one
:class:`~recoeval_tracking.reporting.report.Report` per dataset) and of
:mod:`recoeval_tracking.stats` (labelled by :mod:`~recoeval_tracking.reporting.multisystem`);
nothing is computed twice.

Examples
--------
The notebook workflow: evaluate two models, compare them, write the table for the paper.

>>> import recoeval_tracking as rt
>>> data = rt.make_synthetic(n_users=120, n_items=60, seed=0)
>>> split = rt.make_split("random", data, test_fraction=0.3, seed=0)
>>> runs = {name: rt.evaluate(split.train, split.test,
...                           scores=rt.make_model(name).fit(split.train.matrix).score_source(),
...                           metrics=["ndcg", "p"], k=5)
...         for name in ("random", "popularity")}
>>> cmp = rt.compare(runs, baseline="random", test="wilcoxon", n_bootstrap=200)
>>> sorted(cmp.systems)
['popularity', 'random']
>>> cmp.summary().columns[:4].tolist()
['system', 'metric', 'mean', 'ci_low']
>>> tex = cmp.to_latex(caption="Two baselines.")
>>> "\\\\toprule" in tex and "\\\\bottomrule" in tex
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import stats as st
from .._validation import InputError, param_error
from ..stats import resolve_rope
from . import multisystem as ms
from .comparability import LEFT_OUT_COLUMNS, check_labels, check_option_names
from .compare_inputs import (
    check_labels_used,
    check_unique_names,
    detect_dataset_key,
    group_datasets,
    runs_from,
)
from .equivalence import rope_text
from .outputs import output
from .posthoc import POSTHOCS
from .report import (
    Report,
    _check_settings,
    build_report,
    correct_replicate_tests,
    detect_replicate_key,
    setting_options,
)
from .runs import _lower_better
from .verdicts import VerdictMethods, cd_diagram_for

__all__ = ["compare", "Comparison", "detect_dataset_key", "runs_from"]

_FUNC = "compare"


# ---------------------------------------------------------------------------------------------
# The comparison
# ---------------------------------------------------------------------------------------------


def compare(
    runs: Any,
    baseline: str | None = None,
    *,
    metrics: Sequence[str] | str | None = None,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    family: str = "metric",
    n_bootstrap: int = 1000,
    n_permutations: int | str = "auto",
    seed: int = 0,
    dataset_key: str | None = "auto",
    replicate_key: str | None = "auto",
    group_by: Sequence[str] | None = None,
    allow_mismatch: bool = False,
    lower_is_better: Sequence[str] = (),
    slices: Sequence[Mapping[str, Any]] | None = None,
    user_features: pd.DataFrame | None = None,
    tracking_uri: str | None = None,
    config: Mapping[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
    rope: Any = None,
    posthoc: str = "wilcoxon",
    format: str | None = None,
) -> Comparison:
    """Compare systems on the same users: means with intervals, paired tests against a
    baseline with a multiple-comparison correction, win/tie/loss counts, and with a ``rope``
    each system's verdict (better / equivalent / worse); over several datasets, mean ranks, the
    Friedman test, Nemenyi's critical difference and the critical-difference diagram (pairwise
    Wilcoxon tests with Holm by default, ``posthoc``).

    Parameters
    ----------
    runs : dict or list
        ``{name: item}``, ``{dataset: {name: item}}`` or a list of items, where an item is a
        :class:`~recoeval_tracking.metrics.results.Results` (from
        :func:`recoeval_tracking.evaluate`), a job folder, a per-user file written by another
        tool (trec_eval ``-q``, ranx, PyTerrier, LensKit, WarpRec, or a plain table; see
        :mod:`~recoeval_tracking.reporting.per_user_files`), an MLflow run id (read through
        :mod:`recoeval_tracking.tracking`, from ``tracking_uri``) or a :class:`RunData`.
    baseline : str, optional
        The system the others are tested against: a name, ``"best:<metric>"``,
        ``"worst:<metric>"`` or ``"tag:<key>=<value>"``; default a sweep's first baseline
        (the run tagged ``recoeval.baseline_rank=0``), else the first.
    metrics : list of str, optional
        Per-user metric columns (default: every one).
    test : {"t", "wilcoxon", "randomization"}
        The paired test whose corrected p-value sets the marks.
    correction : {"holm", "bonferroni", "bh", "none"}
    alpha, confidence : float
    family : {"metric", "table"}
        The family each correction runs over (see
        :func:`~recoeval_tracking.reporting.report.build_report`).
    n_bootstrap, n_permutations, seed
        Resampling of the bootstrap intervals and the randomisation test.
    dataset_key : str or None
        The param telling datasets apart (``"auto"``: :func:`detect_dataset_key`); ignored for
        a nested mapping, whose keys are the datasets.
    replicate_key : str or None
        A param whose values are replicates (seeds, folds); ``"auto"`` detects them.
    group_by, allow_mismatch, lower_is_better, slices, user_features, config
        As :func:`~recoeval_tracking.reporting.report.build_report`. Which runs and metrics
        are compared follows :func:`~recoeval_tracking.reporting.comparability.comparability`
        (the report command's rule too): runs on other data or another split are refused
        unless ``allow_mismatch``; what is left out is in :attr:`Comparison.left_out` and the
        printed text; a name in ``metrics``, ``baseline``, ``lower_is_better``, ``group_by``
        or ``labels`` that the runs lack is refused, listing the known names.
    tracking_uri : str, optional
        The MLflow store of run ids.
    labels : dict, optional
        A display name per system, ``{name or run id: label}`` (over several datasets, the
        system's name there), shown in the summary, the page, the LaTeX table and the plots;
        ``baseline`` may still name the system by its own name. A key that names no system is
        refused, listing the known names.
    rope : float, str or dict, optional
        A region of practical equivalence: absolute (``0.01``), relative to the baseline's
        mean (``"5%"``) or per metric (``{"ndcg_at_10": 0.01}``; a metric it lacks gets no verdict on the page or in the printed summary),
        as :func:`~recoeval_tracking.stats.resolve_rope` takes it. When given,
        the page and the printed summary show each system's verdict against the baseline
        (better / equivalent / worse with their probabilities, the Bayesian paired t-test of the
        mean difference over users, and the TOST beside it), and :meth:`Comparison.verdicts` uses it by default.
    posthoc : {"wilcoxon", "sign", "nemenyi"}
        The post-hoc of the critical-difference diagrams over datasets: pairwise Wilcoxon
        signed-rank (or sign) tests with Holm (default; Benavoli, Corani & Mangili 2016), or
        Nemenyi's critical difference of mean ranks.
    format : str, optional
        The format of the per-user files among ``runs`` (one of
        :data:`~recoeval_tracking.reporting.per_user_files.FORMATS`); default: each recognised
        by its content.

    Returns
    -------
    Comparison
    """
    # build_report's options, checked before any run is read (build_report checks them again)
    options = setting_options(locals())
    _check_settings(_FUNC, **options)
    check_rope(rope, _FUNC)
    if posthoc not in POSTHOCS:
        raise param_error("posthoc", _FUNC, f"one of {list(POSTHOCS)}", posthoc)
    read, datasets = runs_from(
        runs, tracking_uri, format=format, allow_mismatch=bool(allow_mismatch)
    )
    check_option_names(read, lower_is_better=lower_is_better, group_by=group_by, func=_FUNC)
    labels = check_labels(labels, _FUNC)
    groups, key = group_datasets(read, datasets, dataset_key, _FUNC)
    kw: dict[str, Any] = {
        **options,
        "metrics": metrics,
        "lower_is_better": tuple(lower_is_better),
        "config": config,
        "group_by": group_by,
        "labels": labels,
        "_check_names": False,
        "_func": _FUNC,
    }
    reports: dict[str, Report] = {}
    for ds, members in groups.items():
        rep_key = replicate_key
        if rep_key == "auto":
            rep_key = detect_replicate_key(members)
            if rep_key is not None and not all(rep_key in r.params for r in members):
                # a key some runs lack (a notebook's Results have no params) draws no
                # replicates of them: the runs' own mismatch is the message
                rep_key = None
        try:
            reports[ds] = build_report(members, baseline, replicate_key=rep_key, **kw)
        except InputError as err:
            if ds:
                raise InputError(f"dataset {ds}: {err}") from None
            raise
        correct_replicate_tests(reports[ds])
        if len(groups) > 1:
            check_unique_names(reports[ds], ds)
    check_labels_used(labels, reports, read, _FUNC)
    chosen = {ds: rep.run(rep.baseline).name for ds, rep in reports.items()}
    if len(set(chosen.values())) > 1:
        raise param_error(
            "baseline",
            _FUNC,
            "one system, the same in every dataset",
            baseline,
            "It picks "
            + ", ".join(f"{n} in {ds}" for ds, n in chosen.items())
            + "; name the system instead.",
        )
    comparison = Comparison(
        reports=reports,
        dataset_key=key if len(groups) > 1 else None,
        n_runs=len(read),
        rope=rope,
        cd_posthoc=posthoc,
    )
    from .equivalence import check_rope_metrics

    # a per-metric rope naming no metric compared: refused here, not dropped by the page
    check_rope_metrics(rope, comparison.metrics, "compare")
    return comparison


def check_rope(rope: Any, func: str) -> None:
    """Refuse a rope :func:`~recoeval_tracking.stats.resolve_rope` cannot read (``None``: no
    rope)."""
    if rope is None:
        return
    widths = rope.values() if isinstance(rope, Mapping) else [rope]
    if isinstance(rope, Mapping) and not rope:
        raise param_error("rope", func, "a number, 'x%' or a non-empty dict per metric", rope)
    for width in widths:
        try:
            resolve_rope(width, 1.0)
        except InputError as err:
            raise param_error(
                "rope",
                func,
                "a number >= 0, a string 'x%' or a dict metric -> either",
                rope,
            ) from err


@dataclass
class Comparison(VerdictMethods):
    """Systems compared on one dataset or several; returned by :func:`compare`.

    Attributes
    ----------
    reports : dict of str to Report
        One :class:`~recoeval_tracking.reporting.report.Report` per dataset (key ``""`` for a
        single one): its ``summary`` and ``comparisons`` tables hold every number.
    dataset_key : str or None
        The param that told the datasets apart.
    n_runs : int
        Runs given (replicates counted one by one).
    rope : float, str, dict or None
        The region of practical equivalence of the verdicts (see :func:`compare`).
    cd_posthoc : str
        The post-hoc of the critical-difference diagrams (``compare(..., posthoc=...)``).
    """

    reports: dict[str, Report]
    dataset_key: str | None = None
    n_runs: int = 0
    rope: Any = None
    cd_posthoc: str = "wilcoxon"
    _values: dict[tuple[str, str], pd.DataFrame] = field(
        default_factory=dict, repr=False, init=False
    )

    # -- structure -----------------------------------------------------------------------------

    @classmethod
    def from_report(cls, report: Report) -> Comparison:
        """A comparison over one dataset from a built report."""
        if not isinstance(report, Report):
            raise param_error("report", "Comparison.from_report", "a Report", report)
        correct_replicate_tests(report)
        return cls(
            reports={"": report}, n_runs=int(report.settings.get("n_runs", len(report.runs)))
        )

    @property
    def datasets(self) -> list[str]:
        """The datasets compared over (``[""]`` for one unnamed dataset)."""
        return list(self.reports)

    @property
    def multi_dataset(self) -> bool:
        """Whether the systems were compared over two datasets or more."""
        return len(self.reports) > 1

    @property
    def report(self) -> Report:
        """The report of the only dataset (an error when there are several)."""
        if self.multi_dataset:
            raise InputError(
                f"This comparison spans {len(self.reports)} datasets "
                f"({', '.join(self.reports)}); use .reports[<dataset>]."
            )
        return next(iter(self.reports.values()))

    def _report(self, dataset: str | None) -> Report:
        if dataset is None:
            if self.multi_dataset:
                raise param_error(
                    "dataset",
                    "Comparison",
                    f"one of {self.datasets} (the comparison spans several datasets)",
                    None,
                )
            return self.report
        if dataset not in self.reports:
            raise param_error("dataset", "Comparison", f"one of {self.datasets}", dataset)
        return self.reports[dataset]

    @property
    def settings(self) -> dict[str, Any]:
        """The statistical settings (test, correction, alpha...)."""
        return next(iter(self.reports.values())).settings

    @property
    def metrics(self) -> list[str]:
        """The metrics compared (those of every dataset, in first-seen order)."""
        return list(dict.fromkeys(m for r in self.reports.values() for m in r.metrics))

    @property
    def systems(self) -> list[str]:
        """System names, the baseline first."""
        return list(dict.fromkeys(r.name for rep in self.reports.values() for r in rep.runs))

    @property
    def baseline(self) -> str:
        """The baseline's name (of the first dataset)."""
        rep = next(iter(self.reports.values()))
        return rep.run(rep.baseline).name

    @property
    def left_out(self) -> pd.DataFrame:
        """Every (metric, system) left out of the comparison, with its reason: ``metric,
        system, run_id, left_out`` (``"values"``: the system's values of the metric are not
        compared; ``"test"``: its mean is shown, but the baseline is left out of the metric so
        it is not tested) and ``reason``; with several datasets, a leading ``dataset``."""
        parts = [
            rep.left_out.assign(dataset=ds) for ds, rep in self.reports.items() if len(rep.left_out)
        ]
        if not parts:
            out = pd.DataFrame(columns=["dataset", *LEFT_OUT_COLUMNS])
        else:
            out = pd.concat(parts, ignore_index=True)[["dataset", *LEFT_OUT_COLUMNS]]
        return out if self.multi_dataset else out.drop(columns="dataset")

    def lower_is_better(self, metric: str) -> bool:
        """The direction of ``metric`` (registry and the ``lower_is_better`` prefixes)."""
        return _lower_better(metric, self.settings.get("lower_is_better", ()))

    # -- per-user values -----------------------------------------------------------------------

    def values(self, metric: str, dataset: str | None = None) -> pd.DataFrame:
        """Per-user values of ``metric`` aligned by user: one column per system (NaN where a
        user is missing or undefined; a system the metric is not compared over is left out)."""
        rep = self._report(dataset)
        key = (dataset or "", metric)
        if key not in self._values:
            compared = set(rep.summary.loc[rep.summary["metric"] == metric, "run_id"])
            cols = {}
            for r in rep.runs:
                if r.run_id in compared and metric in r.per_user.columns:
                    cols[r.name] = r.per_user.set_index("user_id")[metric].astype(np.float64)
            self._values[key] = pd.DataFrame(cols)
        return self._values[key]

    # -- tables --------------------------------------------------------------------------------

    def summary(self, dataset: str | None = None) -> pd.DataFrame:
        """One row per (system, metric): ``mean``, its ``ci_low``/``ci_high`` (Student t), users
        ``n``, the difference to the baseline ``delta`` with its interval, the chosen test's
        ``p`` and corrected ``p_adj``, the ``mark`` (``▲``/``▼`` and stars; ``†`` when the
        pairs are too few, see :func:`~recoeval_tracking.reporting.multisystem.small_n_mark`) and
        the ``wins``/``ties``/``losses`` against the baseline (users where the system is
        better, equal, worse). With several datasets, a leading ``dataset`` column, over all of
        them unless ``dataset`` is given."""
        if dataset is None and self.multi_dataset:
            return pd.concat(
                [self.summary(ds).assign(dataset=ds) for ds in self.datasets], ignore_index=True
            ).pipe(lambda df: df[["dataset"] + [c for c in df.columns if c != "dataset"]])
        rep = self._report(dataset)
        test = rep.settings["test"]
        p_col = {"t": "p_t", "wilcoxon": "p_wilcoxon", "randomization": "p_randomization"}[test]
        comp = rep.comparisons.set_index(["run_id", "metric"])
        base_name = rep.run(rep.baseline).name
        rows = []
        for _, s in rep.summary.iterrows():
            row = {
                "system": s["run"],
                "metric": s["metric"],
                "mean": s["mean"],
                "ci_low": s["t_low"],
                "ci_high": s["t_high"],
                "n": s["n"],
                "delta": math.nan,
                "delta_low": math.nan,
                "delta_high": math.nan,
                "p": math.nan,
                "p_adj": math.nan,
                "mark": "",
                "wins": pd.NA,
                "ties": pd.NA,
                "losses": pd.NA,
            }
            key = (s["run_id"], s["metric"])
            if key in comp.index:
                c = comp.loc[key]
                row.update(
                    delta=c["mean_diff"],
                    delta_low=c["t_low"],
                    delta_high=c["t_high"],
                    p=c[p_col],
                    p_adj=c[f"{p_col}_adj"],
                    mark=c["mark"],
                )
                v = self.values(s["metric"], dataset)
                if s["run"] in v.columns and base_name in v.columns:
                    w, t, l_ = st.win_tie_loss(
                        v[s["run"]].to_numpy(),
                        v[base_name].to_numpy(),
                        lower_is_better=self.lower_is_better(s["metric"]),
                    )
                    row.update(wins=w, ties=t, losses=l_)
            rows.append(row)
        out = pd.DataFrame(rows)
        for c in ("wins", "ties", "losses"):
            out[c] = out[c].astype("Int64")
        return out

    def table(self, metric: str, dataset: str | None = None) -> pd.DataFrame:
        """Every number of ``metric``: each system's mean with its t and bootstrap intervals
        and counts, joined with its comparison to the baseline (difference, both intervals,
        the three tests' raw and corrected p-values, Cohen's d_z, the mark)."""
        rep = self._report(dataset)
        if metric not in rep.metrics:
            raise param_error("metric", "Comparison.table", f"one of {rep.metrics}", metric)
        s = rep.summary[rep.summary["metric"] == metric].drop(columns="metric")
        c = rep.comparisons[rep.comparisons["metric"] == metric].drop(columns=["metric", "run"])
        c = c.rename(
            columns={k: f"delta_{k}" for k in ("t_low", "t_high", "boot_low", "boot_high")}
        )
        return s.merge(c, on="run_id", how="left").set_index("run")

    def tables(self, dataset: str | None = None) -> dict[str, pd.DataFrame]:
        """:meth:`table` of every metric."""
        return {m: self.table(m, dataset) for m in self._report(dataset).metrics}

    def win_tie_loss(self, metric: str | None = None, dataset: str | None = None) -> pd.DataFrame:
        """For every pair of systems (``system`` listed before ``other``) and metric: the users
        where ``system`` is better (``wins``), equal (``ties``), worse (``losses``) than
        ``other``, over the users defined in both (``n``)."""
        rep = self._report(dataset)
        rows = []
        for m in [metric] if metric else rep.metrics:
            v = self.values(m, dataset)
            names = list(v.columns)
            for i, a in enumerate(names):
                for b in names[i + 1 :]:
                    w, t, l_ = st.win_tie_loss(
                        v[a].to_numpy(), v[b].to_numpy(), lower_is_better=self.lower_is_better(m)
                    )
                    rows.append(
                        {
                            "metric": m,
                            "system": a,
                            "other": b,
                            "wins": w,
                            "ties": t,
                            "losses": l_,
                            "n": w + t + l_,
                        }
                    )
        return pd.DataFrame(
            rows, columns=["metric", "system", "other", "wins", "ties", "losses", "n"]
        )

    def tukey(
        self, metric: str, dataset: str | None = None, *, paired: bool = True
    ) -> pd.DataFrame:
        """Tukey's HSD over every pair of systems on ``metric``
        (:func:`~recoeval_tracking.reporting.multisystem.tukey_hsd`; paired by user unless
        ``paired=False``), at the comparison's confidence; ``significant`` at its alpha."""
        v = self.values(metric, dataset)
        out = ms.tukey_hsd(
            v.to_numpy(), list(v.columns), paired=paired, confidence=self.settings["confidence"]
        )
        out.insert(0, "metric", metric)
        out["significant"] = out["p"] < self.settings["alpha"]
        return out

    # -- several datasets ----------------------------------------------------------------------

    def _need_datasets(self, what: str) -> None:
        if not self.multi_dataset:
            raise InputError(
                f"{what} compares systems over several datasets; this comparison "
                "has one, so it does not apply (the paired tests over users do)."
            )

    def dataset_table(self, metric: str) -> pd.DataFrame:
        """Systems (rows) x datasets (columns) of the mean of ``metric``, and each system's
        ``mean rank`` over the datasets where every system is defined (1 = best)."""
        cols = {}
        for ds, rep in self.reports.items():
            s = rep.summary[rep.summary["metric"] == metric]
            cols[ds] = pd.Series(s["mean"].to_numpy(), index=s["run"].to_numpy())
        table = pd.DataFrame(cols).reindex(self.systems)
        if self.multi_dataset:
            ranks = ms.rank_table(table.T, self.lower_is_better(metric))
            table["mean rank"] = ranks.mean(axis=0).reindex(table.index)
        return table

    def friedman(self, metric: str) -> ms.FriedmanResult:
        """The Friedman test of ``metric`` over the datasets
        (:func:`~recoeval_tracking.reporting.multisystem.friedman_test`)."""
        self._need_datasets("The Friedman test")
        table = self.dataset_table(metric).drop(columns="mean rank")
        return ms.friedman_test(table.T, self.lower_is_better(metric))

    def critical_difference(self, metric: str) -> float:
        """Nemenyi's critical difference of mean ranks at the comparison's alpha."""
        f = self.friedman(metric)
        return st.critical_difference(f.n_systems, f.n_datasets, self.settings["alpha"])

    def posthoc(
        self, metric: str, method: str = "nemenyi", control: str | None = None
    ) -> pd.DataFrame:
        """Post-hoc tests after Friedman: ``"nemenyi"`` (every pair; a square table of
        p-values) or ``"holm"`` (every system against ``control``, default the baseline; z,
        p and Holm-adjusted p)."""
        f = self.friedman(metric)
        if method == "nemenyi":
            return ms.nemenyi_pvalues(f.mean_ranks, f.n_datasets)
        if method == "holm":
            return ms.posthoc_vs_control(
                f.mean_ranks, f.n_datasets, control or self.baseline, "holm"
            )
        raise param_error("method", "Comparison.posthoc", "'nemenyi' or 'holm'", method)

    def cd_diagram(self, metric: str, posthoc: str | None = None):
        """The critical-difference diagram of ``metric`` (a matplotlib Figure): systems by mean
        rank on an axis from 1 to k, the best on the left; a bar joins each group the post-hoc
        finds no difference in: ``"wilcoxon"`` / ``"sign"`` pairwise tests with Holm, or
        Nemenyi's CD (``"nemenyi"``, shown above the axis); default the comparison's
        ``cd_posthoc`` (pairwise Wilcoxon unless :func:`compare` was told otherwise). The title
        says which (:func:`~.verdicts.cd_diagram_for`)."""
        return cd_diagram_for(self, metric, self.cd_posthoc if posthoc is None else posthoc)

    # -- output --------------------------------------------------------------------------------

    def to_latex(
        self,
        metrics: Sequence[str] | None = None,
        *,
        precision: int = 4,
        intervals: bool = False,
        underline_second: bool = False,
        caption: str = "",
        label: str = "tab:comparison",
        win_tie_loss: bool = False,
    ) -> str:
        """A booktabs table for a paper (see :func:`~recoeval_tracking.reporting.latex.
        comparison_latex`): one row per system, the best of each column bold, marks against
        the baseline as superscripts explained in the caption, ``W/T/L`` columns against the
        baseline if asked; one table per metric over datasets when there are several."""
        return output("latex")(
            self,
            metrics,
            precision=precision,
            intervals=intervals,
            underline_second=underline_second,
            caption=caption,
            label=label,
            win_tie_loss=win_tie_loss,
        )

    def to_markdown(self, *, title: str = "Run comparison") -> str:
        """The report page as Markdown (figures left out)."""
        return output("markdown")(self, title=title)

    def to_html(self, *, title: str = "Run comparison") -> str:
        """The report page as one self-contained HTML document (figures embedded)."""
        return output("html")(self, title=title)

    def write(self, folder: str | Path, *, title: str = "Run comparison") -> dict[str, Path]:
        """Write ``report.html``, ``report.md`` (figures beside it) and ``report.tex`` into
        ``folder``; returns the paths."""
        folder = Path(folder)
        return output("write")(
            self,
            folder / "report.html",
            folder / "report.md",
            latex_path=folder / "report.tex",
            title=title,
        )

    def plot(self, metric: str | None = None, dataset: str | None = None):
        """Curves of ``metric`` @1..K with their 95% bands (as the runs recorded them), one
        line per system (a matplotlib Figure); ``metric`` is a curve (``ndcg_at_k``) or a
        column (``ndcg_at_10``: its curve), default the first curve. Without curves, the means
        with their intervals at the comparison's confidence."""
        return output("plot")(self._report(dataset), metric)

    def __str__(self) -> str:
        from .left_out import left_out_lines

        s = self.summary()
        shown = s.copy()
        for c in ("mean", "ci_low", "ci_high", "delta"):
            shown[c] = shown[c].map(lambda x: "–" if pd.isna(x) else f"{x:.4f}")
        shown["p_adj"] = shown["p_adj"].map(lambda x: "–" if pd.isna(x) else f"{x:.3g}")
        for c in ("wins", "ties", "losses"):
            shown[c] = shown[c].map(lambda x: "" if pd.isna(x) else str(int(x)))
        cols = (["dataset"] if "dataset" in shown.columns else []) + [
            "system",
            "metric",
            "mean",
            "ci_low",
            "ci_high",
            "delta",
            "p_adj",
            "mark",
            "wins",
            "ties",
            "losses",
        ]
        st_ = self.settings
        head = (
            f"{len(self.systems)} systems against {self.baseline}; {st_['test']}-test, "
            f"{st_['correction']} correction, alpha {st_['alpha']:g}"
        )
        lines = [head, shown[cols].to_string(index=False)]
        lines += self._verdict_lines()
        # how the compared configurations were chosen, as the report's pages say it
        lines += [f"protocol: {st_['protocol']}"] if st_.get("protocol") else []
        lines += [str(st_["leakage"])] if st_.get("leakage") else []
        for ds, rep in self.reports.items():
            where = f"dataset {ds}: " if self.multi_dataset else ""
            lines += [
                f"NOT COMPARABLE ({where}compared anyway, allow_mismatch): {m}"
                for m in rep.mismatches
            ]
            lines += left_out_lines(rep, f" ({where.removesuffix(': ')})" if where else "")
            lines += [f"note: {where}{n}" for n in rep.notes if n.startswith("group_by")]
        return "\n".join(lines)

    def _verdict_lines(self) -> list[str]:
        """With a rope: each system's verdict against the baseline, for the printed summary."""
        if self.rope is None:
            return []
        try:
            v = self.verdicts()
        except InputError:  # nothing to compare (one run, no shared metric)
            return []
        if isinstance(self.rope, Mapping):  # a per-metric rope: only the metrics it names
            v = v[v["metric"].isin(list(self.rope))]
        if v.empty:
            return []
        shown = pd.DataFrame(
            {
                **({"dataset": v["dataset"]} if "dataset" in v.columns else {}),
                "system": v["system"],
                "metric": v["metric"],
                "rope": v["rope"].map(lambda x: f"{x:.4g}"),
                "P(better)": v["p_better"].map(lambda x: f"{x:.3f}"),
                "P(equiv.)": v["p_equivalent"].map(lambda x: f"{x:.3f}"),
                "P(worse)": v["p_worse"].map(lambda x: f"{x:.3f}"),
                "verdict": v["verdict"],
                "TOST p": v["p_tost"].map(lambda x: "–" if pd.isna(x) else f"{x:.3g}"),
            }
        )
        return [
            f"verdicts for the rope {rope_text(self.rope)} ({self._verdict_test()}: better or "
            f"worse at P >= {1 - self.settings['alpha'] / 2:g}, equivalent when TOST "
            f"p < {self.settings['alpha']:g}; TOST beside):",
            shown.to_string(index=False),
        ]

    def _verdict_test(self) -> str:
        """The test of the verdicts over the rows of the tables, in words."""
        if not self.settings.get("replicate_key"):
            return "Bayesian paired t over users"
        if self.settings.get("replicate_ratio", 0) > 0:
            return "Bayesian correlated t over replicates, Nadeau-Bengio's variance"
        return "Bayesian paired t over replicates"

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()
