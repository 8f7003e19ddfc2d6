"""The comparison's effect sizes and verdicts: the methods :class:`~.compare.Comparison` gains
from :class:`VerdictMethods`, built on the statistics of :mod:`recoeval_tracking.stats`
(effect sizes, equivalence and the Bayesian verdicts, replicate corrections, post-hoc tests,
power) and the labelled tables of :mod:`.posthoc`.

* :meth:`VerdictMethods.effects`: per system and metric against the baseline, the difference
  with its interval, the relative difference with its interval, d_z, the corrected p and mark,
  and beside every non-significant difference the smallest one the comparison could detect at
  80% power after its correction ("could detect 0.011; observed 0.004");
* :meth:`VerdictMethods.verdicts`: better / equivalent / worse with their probabilities (Bayesian
  signed-rank test) and the TOST p-value, for a rope, over users or over datasets;
* :meth:`VerdictMethods.replicate_tests`: Nadeau-Bengio's corrected t and the correlated
  t-test's verdict over fold or seed replicates (over replicates that draw their own split the
  effects and verdicts use the same corrected variance, as the marks do:
  :func:`~.compare.correct_replicate_tests`);
* :meth:`VerdictMethods.pairwise_posthoc` and :func:`cd_diagram_for`: pairwise Wilcoxon (or sign)
  tests with Holm over datasets, the post-hoc a critical-difference diagram can use;
* :meth:`VerdictMethods.users_needed`: the users (or datasets) a named difference needs;
* :meth:`VerdictMethods.against_baselines`: every system against every baseline of a sweep.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .._validation import InputError, param_error
from ..stats import (
    CORRECTION_FOR,
    BayesianVerdict,
    adjust_pvalues,
    bayesian_paired_t,
    bayesian_signed_rank,
    corrected_alpha,
    corrected_resampled_t,
    correlated_t_verdict,
    critical_difference,
    detectable_difference,
    effect_size,
    resolve_rope,
    sample_size,
    tost_paired,
)
from .equivalence import check_rope_metrics
from .outputs import output
from .posthoc import POSTHOCS, pairwise_cliques, pairwise_tests
from .power import detectable_text
from .replicates import design_of

if TYPE_CHECKING:
    from .compare import Comparison

__all__ = ["VerdictMethods", "cd_diagram_for"]


def _oriented(
    cmp: Comparison, metric: str, a: np.ndarray, b: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Values with "higher is better" for every metric (negated when lower is better)."""
    return (-a, -b) if cmp.lower_is_better(metric) else (a, b)


class VerdictMethods:
    """Effect sizes, equivalence verdicts, replicate tests, pairwise post-hoc and power of a
    :class:`~recoeval_tracking.reporting.compare.Comparison` (mixed into it)."""

    def _replicate_ratio(self: Comparison, dataset: str | None) -> float:
        """Nadeau-Bengio's ``n_test / n_train`` of the replicates compared (0 over users, or
        over replicates on one split): the variance of a mean difference over ``n``
        replicates is ``(1/n + ratio) s^2`` (:func:`~.replicates.replicate_design`)."""
        rep = self._report(dataset if dataset is not None else self.datasets[0])
        design = design_of(rep.runs)
        return design.ratio if design is not None else 0.0

    def _pairs(self: Comparison, metric: str, dataset: str | None):
        v = self.values(metric, dataset)
        base = self.baseline
        for system in v.columns:
            if system != base and base in v.columns:
                yield system, v[system].to_numpy(), v[base].to_numpy()

    def effects(
        self: Comparison, dataset: str | None = None, *, power: float = 0.8
    ) -> pd.DataFrame:
        """Effect sizes first: one row per (system, metric) against the baseline.

        Columns: ``diff`` with ``diff_low``/``diff_high`` (t interval at the comparison's
        confidence), ``rel`` (``diff / baseline mean``) with ``rel_low``/``rel_high``
        (delta method), ``d_z``, ``n`` pairs, the chosen test's corrected ``p_adj`` and ``mark``,
        ``alpha_used`` (the per-comparison alpha at the correction's strictest step), ``mde``
        (the smallest difference the comparison's test, ``test=``, detects with probability
        ``power`` at that alpha, from the spread of the paired differences:
        :func:`~recoeval_tracking.stats.detectable_difference`, ``inf`` when that test cannot
        pass the alpha with the pairs there) and ``detectable``, the text shown beside a
        non-significant difference. With several datasets, one block per dataset.
        Over replicates that draw their own split, the intervals and ``mde`` use Nadeau &
        Bengio's variance ``(1/n + n_test/n_train) s^2``, as the marks do.
        """
        if dataset is None and self.multi_dataset:
            return pd.concat(
                [self.effects(ds, power=power).assign(dataset=ds) for ds in self.datasets],
                ignore_index=True,
            )
        s = self.settings
        summary = self.summary(dataset).set_index(["system", "metric"])
        metrics = [m for m in self._report(dataset).metrics]
        n_others = max(1, len(self.systems) - 1)
        m = n_others * (len(metrics) if s.get("family", "metric") == "table" else 1)
        alpha = corrected_alpha(s["alpha"], m, s["correction"])
        ratio = self._replicate_ratio(dataset)
        rows = []
        for metric in metrics:
            for system, a, b in self._pairs(metric, dataset):
                e = effect_size(a, b, confidence=s["confidence"])
                d = a - b
                d = d[~np.isnan(d)]
                sd = float(d.std(ddof=1)) if d.size > 1 else math.nan
                if ratio > 0 and d.size > 1:
                    # replicates sharing training data: Nadeau-Bengio's variance
                    # (1/n + ratio) s^2, the intervals widened by sqrt(1 + n ratio)
                    e = _widened(e, math.sqrt(1.0 + d.size * ratio))
                    sd *= math.sqrt(1.0 + d.size * ratio)
                # the power of the test that sets the marks (POWER_BASIS says how)
                mde = detectable_difference(
                    sd, int(d.size), alpha, power, s["test"], int(np.count_nonzero(d))
                )
                p_adj, mark = math.nan, ""
                if (system, metric) in summary.index:
                    p_adj = summary.loc[(system, metric), "p_adj"]
                    mark = summary.loc[(system, metric), "mark"]
                significant = bool(np.isfinite(p_adj) and p_adj < s["alpha"])
                rows.append(
                    {
                        "system": system,
                        "metric": metric,
                        **e.as_dict(),
                        "p_adj": p_adj,
                        "mark": mark,
                        "alpha_used": alpha,
                        "mde": mde,
                        "detectable": "" if significant else detectable_text(mde, e.diff),
                    }
                )
        return pd.DataFrame(rows)

    def against_baselines(
        self: Comparison, metric: str | None = None, dataset: str | None = None
    ) -> pd.DataFrame:
        """Every system against every baseline of the sweep (the runs tagged
        ``recoeval.baseline_rank``, in the order ``baselines=[...]`` named them; the
        comparison's baseline alone when none is tagged): one row per (baseline, system,
        metric) with ``delta`` and its interval ``delta_low``/``delta_high``, the chosen test's
        ``p`` and corrected ``p_adj`` (over each metric's comparisons with that baseline, as
        for the first), the ``mark`` and ``n`` pairs (users, or replicates paired by fold or
        seed). The rows of the comparison's own baseline are :meth:`summary`'s numbers. With
        several datasets, a leading ``dataset`` column."""
        from .report import against_baseline, baseline_ids

        if dataset is None and self.multi_dataset:
            return pd.concat(
                [self.against_baselines(metric, ds).assign(dataset=ds) for ds in self.datasets],
                ignore_index=True,
            ).pipe(lambda df: df[["dataset"] + [c for c in df.columns if c != "dataset"]])
        rep = self._report(dataset)
        p_col = {"t": "p_t", "wilcoxon": "p_wilcoxon", "randomization": "p_randomization"}[
            rep.settings["test"]
        ]
        rows = []
        for bid in baseline_ids(rep):
            name = rep.run(bid).name
            comp = against_baseline(rep, bid)
            for c in comp.to_dict("records"):
                if metric is not None and c["metric"] != metric:
                    continue
                rows.append(
                    {
                        "baseline": name,
                        "system": c["run"],
                        "metric": c["metric"],
                        "delta": c["mean_diff"],
                        "delta_low": c["t_low"],
                        "delta_high": c["t_high"],
                        "p": c[p_col],
                        "p_adj": c[f"{p_col}_adj"],
                        "mark": c["mark"],
                        "n": c["n_pairs"],
                    }
                )
        columns = [
            "baseline",
            "system",
            "metric",
            "delta",
            "delta_low",
            "delta_high",
            "p",
            "p_adj",
            "mark",
            "n",
        ]
        return pd.DataFrame(rows, columns=columns)

    def effects_to_latex(
        self: Comparison,
        metrics: list[str] | None = None,
        *,
        dataset: str | None = None,
        precision: int = 3,
        rope: Any = None,
        caption: str = "",
        label: str = "tab:effects",
    ) -> str:
        """The effect table for a paper (booktabs):
        :func:`~recoeval_tracking.reporting.latex.effects_latex`."""
        return output("effects_latex")(
            self,
            metrics,
            dataset=dataset,
            precision=precision,
            rope=rope,
            caption=caption,
            label=label,
        )

    def verdicts(
        self: Comparison,
        rope: Any = None,
        *,
        over: str = "users",
        dataset: str | None = None,
        threshold: float | None = None,
        n_samples: int | None = None,
        test: str | None = None,
    ) -> pd.DataFrame:
        """Better / equivalent / worse against the baseline for a region of practical
        equivalence ``rope``: absolute (a number), relative (``"2%"`` of the baseline's mean)
        or per metric (a dict metric -> either; a metric it lacks gets 0).

        ``over="users"`` pairs the users of one dataset (each dataset in turn when several),
        or the replicates (seeds, folds) of a comparison over replicates; ``over="datasets"``
        pairs the datasets' means. Columns: ``rope`` (absolute), the Bayesian test's
        ``p_worse``, ``p_equivalent``, ``p_better`` and ``verdict``
        (:func:`~recoeval_tracking.stats.decide` at credibility ``threshold``, default
        ``1 - alpha``: better or worse when its probability reaches ``(1 + threshold) / 2``,
        equivalent when both of theirs are below ``1 - threshold``, else undecided),
        ``p_tost``, the TOST's p-value (equivalence shown when below alpha; with the t tests the
        verdict is "equivalent" exactly when ``p_tost < 1 - threshold``) and ``n``, the pairs
        (users, replicates or datasets). ``test``: ``"t"`` (the Bayesian paired t on the mean
        difference, :func:`~recoeval_tracking.stats.bayesian_paired_t`; the default over users;
        over replicates that draw their own split, the correlated t-test with Nadeau-Bengio's
        ``n_test / n_train``, :func:`~recoeval_tracking.stats.correlated_t_verdict`, and the
        TOST with the same variance) or ``"signed-rank"``
        (:func:`~recoeval_tracking.stats.bayesian_signed_rank`; the default over datasets, its design: over users it judges pairs of users, and calls a
        Hit@K difference of many ropes "equivalent" when most users' differences are 0). For a
        lower-is-better metric "better" means lower. ``rope`` defaults to the comparison's
        (``compare(..., rope=...)``).
        """
        if threshold is None:
            threshold = 1.0 - float(self.settings["alpha"])
        if test is None:
            test = "signed-rank" if over == "datasets" else "t"
        if test not in ("t", "signed-rank"):
            raise param_error("test", "Comparison.verdicts", "'t' or 'signed-rank'", test)
        if rope is None:
            rope = self.rope
        if rope is None:
            raise param_error(
                "rope",
                "Comparison.verdicts",
                "a rope (a number, 'x%' or a dict per metric), here or in compare(rope=...)",
                None,
            )
        check_rope_metrics(rope, self.metrics, "Comparison.verdicts")
        if over not in ("users", "datasets"):
            raise param_error("over", "Comparison.verdicts", "'users' or 'datasets'", over)
        if over == "datasets":
            self._need_datasets("A verdict over datasets")
            blocks = []
            for metric in self.metrics:
                table = self.dataset_table(metric).drop(columns="mean rank").T
                blocks += [
                    (metric, sys, table[sys].to_numpy(), table[self.baseline].to_numpy())
                    for sys in table.columns
                    if sys != self.baseline
                ]
            return self._verdict_rows(blocks, rope, threshold, n_samples, test, 0.0)
        if dataset is None and self.multi_dataset:
            return pd.concat(
                [
                    self.verdicts(
                        rope, dataset=ds, threshold=threshold, n_samples=n_samples, test=test
                    ).assign(dataset=ds)
                    for ds in self.datasets
                ],
                ignore_index=True,
            )
        blocks = [
            (metric, sys, a, b)
            for metric in self._report(dataset).metrics
            for sys, a, b in self._pairs(metric, dataset)
        ]
        ratio = self._replicate_ratio(dataset)
        return self._verdict_rows(blocks, rope, threshold, n_samples, test, ratio)

    def _verdict_rows(
        self: Comparison, blocks, rope, threshold, n_samples, test="signed-rank", ratio=0.0
    ) -> pd.DataFrame:
        rows = []
        for metric, system, a, b in blocks:
            keep = ~(np.isnan(a) | np.isnan(b))
            width = resolve_rope(rope, float(np.mean(b[keep])) if keep.any() else math.nan, metric)
            x, y = _oriented(self, metric, a, b)
            if test == "t" and ratio > 0:
                pw, pe, pb, verdict = correlated_t_verdict(
                    x, y, width, test_train_ratio=ratio, threshold=threshold
                )
                v = BayesianVerdict(pw, pe, pb, verdict, width, int(keep.sum()))
            else:
                v = (
                    bayesian_paired_t(x, y, width, threshold=threshold)
                    if test == "t"
                    else bayesian_signed_rank(
                        x,
                        y,
                        width,
                        n_samples=n_samples,
                        seed=int(self.settings.get("seed", 0)),
                        threshold=threshold,
                    )
                )
            rows.append(
                {
                    "system": system,
                    "metric": metric,
                    "rope": width,
                    "p_worse": v.p_worse,
                    "p_equivalent": v.p_equivalent,
                    "p_better": v.p_better,
                    "verdict": v.verdict,
                    "p_tost": tost_paired(x, y, width, test_train_ratio=ratio)[0],
                    "n": v.n,
                }
            )
        return pd.DataFrame(rows)

    def replicate_tests(
        self: Comparison,
        metric: str,
        *,
        n_folds: int | None = None,
        test_fraction: float | None = None,
        rope: Any = 0.0,
        dataset: str | None = None,
    ) -> pd.DataFrame:
        """Every system against the baseline over replicates (the comparison must have a
        ``replicate_key``): Nadeau & Bengio's corrected resampled t (``mean_diff``, ``low``,
        ``high``, ``t``, ``p``, Holm-adjusted ``p_adj``) and the Bayesian correlated t-test's
        probabilities and verdict for ``rope``. ``n_folds`` for k-fold replicates,
        ``test_fraction`` for seeds that each draw a random split (see
        :data:`~recoeval_tracking.stats.CORRECTION_FOR`); neither: the design the
        comparison found (:func:`~.replicates.replicate_design`), as its marks use."""
        key = self.settings.get("replicate_key") or self._report(dataset).settings.get(
            "replicate_key"
        )
        if not key:
            raise InputError(
                "replicate_tests compares replicates (folds or seeds); this "
                "comparison has none (set replicate_key)."
            )
        check_rope_metrics(rope, self.metrics, "Comparison.replicate_tests")
        design: dict[str, Any] = {"n_folds": n_folds, "test_fraction": test_fraction}
        if n_folds is None and test_fraction is None:
            design = {"test_train_ratio": self._replicate_ratio(dataset)}
        rows = []
        for system, a, b in self._pairs(metric, dataset):
            x, y = _oriented(self, metric, a, b)
            r = corrected_resampled_t(x, y, confidence=self.settings["confidence"], **design)
            width = resolve_rope(rope, float(np.nanmean(b)), metric)
            pw, pe, pb, verdict = correlated_t_verdict(
                x, y, width, threshold=1.0 - float(self.settings["alpha"]), **design
            )
            sign = -1.0 if self.lower_is_better(metric) else 1.0
            lo, hi = sorted((sign * r.low, sign * r.high))
            rows.append(
                {
                    "system": system,
                    "mean_diff": sign * r.mean_diff,
                    "low": lo,
                    "high": hi,
                    "t": sign * r.t,
                    "p": r.p,
                    "n": r.n,
                    "rope": width,
                    "p_worse": pw,
                    "p_equivalent": pe,
                    "p_better": pb,
                    "verdict": verdict,
                }
            )
        out = pd.DataFrame(rows)
        if len(out):
            out.insert(6, "p_adj", adjust_pvalues(out["p"].to_numpy(), "holm"))
            out["correction"] = (
                CORRECTION_FOR["fold"]
                if n_folds is not None
                else CORRECTION_FOR["seed (new random split per seed)"]
                if test_fraction is not None
                else self.settings.get("replicate_correction", "")
            )
        return out

    def pairwise_posthoc(self: Comparison, metric: str, test: str = "wilcoxon") -> pd.DataFrame:
        """Every pair of systems over the datasets by a paired Wilcoxon signed-rank (or
        ``test="sign"``) test, Holm-adjusted: a square table of p-values (Benavoli, Corani &
        Mangili 2016; as aeon's critical-difference diagram)."""
        self._need_datasets("A post-hoc test over datasets")
        table = self.dataset_table(metric).drop(columns="mean rank").T
        return pairwise_tests(table, test=test, correction="holm")

    def users_needed(
        self: Comparison,
        metric: str,
        delta: float,
        *,
        power: float = 0.8,
        dataset: str | None = None,
    ) -> pd.DataFrame:
        """The users (or, over replicates, replicates) each system's comparison with the
        baseline needs to detect a mean difference ``delta`` with probability ``power`` at the
        comparison's corrected alpha, from the spread of its paired differences (Sakai's topic
        set size design with the paired t-test)."""
        eff = self.effects(dataset, power=power)
        eff = eff[eff["metric"] == metric]
        rows = []
        for system, a, b in self._pairs(metric, dataset):
            d = (a - b)[~np.isnan(a - b)]
            alpha = float(eff.loc[eff["system"] == system, "alpha_used"].iloc[0])
            rows.append(
                {
                    "system": system,
                    "sd_diff": float(d.std(ddof=1)),
                    "n_now": d.size,
                    "n_needed": sample_size(delta, float(d.std(ddof=1)), alpha, power),
                }
            )
        return pd.DataFrame(rows)


def cd_diagram_for(cmp: Comparison, metric: str, posthoc: str = "wilcoxon"):
    """The critical-difference diagram of ``metric`` with the post-hoc it names: bars join the
    groups that the pairwise Wilcoxon / sign tests with Holm find no difference in
    (``"wilcoxon"``, the default, ``"sign"``; Benavoli, Corani & Mangili 2016) or that
    Nemenyi's CD leaves together (``"nemenyi"``). The title says which."""
    cd_figure = output("cd_figure")
    if posthoc not in POSTHOCS:
        raise param_error("posthoc", "Comparison.cd_diagram", f"one of {list(POSTHOCS)}", posthoc)
    f = cmp.friedman(metric)
    alpha = cmp.settings["alpha"]
    head = f"{metric}: mean rank over {f.n_datasets} datasets (Friedman p = {f.pvalue:.3g}; "
    if posthoc == "nemenyi":
        cd = critical_difference(f.n_systems, f.n_datasets, alpha)
        return cd_figure(
            f.mean_ranks, cd, title=head + f"CD = {cd:.2f} at α = {alpha:g}; post-hoc: Nemenyi)"
        )
    cliques = pairwise_cliques(f.mean_ranks, cmp.pairwise_posthoc(metric, posthoc), alpha)
    return cd_figure(
        f.mean_ranks,
        None,
        cliques=cliques,
        title=head + f"post-hoc: pairwise "
        f"{'Wilcoxon' if posthoc == 'wilcoxon' else 'sign'} tests, Holm, "
        f"α = {alpha:g})",
    )


def _widened(e, factor: float):
    """``e`` (an :class:`~.effects.EffectSize`) with its intervals' half-widths times
    ``factor``."""
    import dataclasses

    return dataclasses.replace(
        e,
        diff_low=e.diff - factor * (e.diff - e.diff_low),
        diff_high=e.diff + factor * (e.diff_high - e.diff),
        rel_low=e.rel - factor * (e.rel - e.rel_low),
        rel_high=e.rel + factor * (e.rel_high - e.rel),
    )
