"""The :class:`Results` object returned by :func:`recoeval_tracking.evaluate`.

Aggregation (means, confidence intervals, curves of means) is a named step after the per-user
values, never inside a kernel: every aggregate here is computed from the per-user table.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pandas is imported when a frame is first made (0.8 s of a first call)
    import pandas as pd

__all__ = [
    "Results",
    "mean_ci95",
    "ci95_half_width",
    "curve_ci_table",
    "headline_metrics",
    "HEADLINE_FAMILIES",
    "relevance_text",
    "nothing_evaluated",
    "warn_if_nothing_evaluated",
]

#: Columns of the per-user table that are not metrics.
ID_COLUMNS = ("user_id", "n_train", "n_test", "nan_reason", "n_tied_topk")

#: The metrics shown first (terminal table, MLflow columns, leaderboards), in this order, at K:
#: NDCG, precision, recall, MAP, hit rate, MRR, catalogue coverage.
HEADLINE_FAMILIES = ("ndcg", "p", "r", "ap", "hit", "rr", "coverage")


def headline_metrics(names: Any, k: int | None = None, limit: int = 7) -> list[str]:
    """The headline metrics among ``names`` (metric keys such as ``ndcg_at_10``), in the order
    of :data:`HEADLINE_FAMILIES`; when none is there, the first ``limit`` names.

    Parameters
    ----------
    names : iterable of str
    k : int, optional
        The cutoff; default: any (the first key of each family).
    limit : int
        At most this many.

    Examples
    --------
    >>> headline_metrics(["aclt_at_10", "r_at_10", "ndcg_at_10", "roc_auc"])
    ['ndcg_at_10', 'r_at_10']
    >>> headline_metrics(["val_r_at_10", "val_ndcg_at_10"], 10)
    ['val_ndcg_at_10', 'val_r_at_10']
    """
    names = [str(n) for n in names]
    out = []
    for family in HEADLINE_FAMILIES:
        wanted = f"{family}_at_{k}" if k is not None else None
        for n in names:
            bare = n.removeprefix("val_")  # an evaluation on the validation part
            fam, sep, cut = bare.rpartition("_at_")
            if sep and fam == family and cut.isdigit() and (wanted is None or bare == wanted):
                out.append(n)
                break
    return (out or names)[:limit]


def relevance_text(definitions: dict[str, Any]) -> str:
    """One line saying what counted as relevant, from a result's definitions record."""
    level = definitions.get("relevance_level")
    gains = "gain 1" if definitions.get("gains") == "binary" else "their values as gains"
    if level is None:
        return f"relevance: every test entry is a positive, with {gains}"
    return (
        f"relevance: test entries >= {level:g} are the positives, with {gains}; lower "
        "ones are judged non-relevant"
    )


def mean_ci95(values: np.ndarray) -> tuple[float, float, float, int]:
    """Mean of the non-NaN ``values`` with a 95% Student-t confidence interval.

    Returns ``(mean, low, high, n)``; the bounds are NaN when fewer than two values are defined.
    """
    v = np.asarray(values, dtype=np.float64)
    v = v[~np.isnan(v)]
    n = int(v.shape[0])
    if n == 0:
        return math.nan, math.nan, math.nan, 0
    mean = float(v.mean())
    if n < 2:
        return mean, math.nan, math.nan, n
    half = ci95_half_width(float(v.std(ddof=1)), n)
    return mean, mean - half, mean + half, n


def curve_ci_table(
    intervals: Mapping[str, Sequence[tuple[float, float, float, int]]],
) -> pd.DataFrame:
    """The long table of :meth:`Results.curves_ci` (``curve, k, mean, ci95_low, ci95_high,
    n``) from each curve's ``(mean, low, high, n)`` at k = 1, 2, ... (:func:`mean_ci95`, or
    the same from merged moments)."""
    import pandas as pd

    rows = [
        (name, k, *cell) for name, cells in intervals.items() for k, cell in enumerate(cells, 1)
    ]
    return pd.DataFrame(rows, columns=["curve", "k", "mean", "ci95_low", "ci95_high", "n"])


def left_out_by_reason(definitions: Mapping[str, Any]) -> dict[str, list[str]]:
    """The metrics a run left out (``definitions["left_out"]``), sorted, grouped by reason."""
    by_reason: dict[str, list[str]] = {}
    for name, reason in (definitions.get("left_out") or {}).items():
        by_reason.setdefault(str(reason), []).append(str(name))
    return {reason: sorted(names) for reason, names in by_reason.items()}


def ci95_half_width(sd: float, n: int) -> float:
    """Half-width ``t_{0.975, n-1} * sd / sqrt(n)`` of the 95% interval of a mean of ``n >= 2``
    values with sample standard deviation ``sd`` (also used when merging shards of users).
    The quantile is ``scipy.special.stdtrit``, the function ``scipy.stats.t.ppf`` calls: the
    same value without importing scipy.stats (a second of a new process's first job)."""
    from scipy.special import stdtrit

    return float(stdtrit(n - 1, 0.975)) * (sd / math.sqrt(n))


@dataclass
class Results:
    """Per-user evaluation results and everything needed to aggregate and log them.

    Attributes
    ----------
    per_user : pandas.DataFrame
        One row per user of the test matrix, in row order: ``user_id`` (original ids when an id map
        was given, else the row index), ``n_train``, ``n_test``, ``nan_reason`` (empty string for
        users whose metrics are defined) and one float64 column per metric at the requested K
        (``p_at_10``, ``ndcg_at_10``, ..., ``roc_auc``, ``pr_auc``). Given as a dict of columns
        (as :func:`~recoeval_tracking.evaluate` does), the frame is made when first read, so that
        the means, the counts and the summary need no pandas.
    k : int
        The cutoff K.
    curves_per_user : dict of str to ndarray
        For cumulative evaluation, per-user values at k = 1..K, keyed ``ndcg_at_k`` etc., each of
        shape ``(n_users, K)``. Empty when curves were not requested.
    definitions : dict
        The definitions used (metric variants, tie policy, NaN rules, thresholds), JSON-able.
    fingerprint : str
        A short stable hash of ``definitions``.
    topk_only : bool
        True when the input was ranked top-K lists: only top-K metrics are available.
    timings : dict of str to float
        Seconds spent per stage.
    topk : ndarray or None
        Each user's top-K item indices, best first (-1 where undefined), when extracted.
    aggregates : dict of str to float
        Metrics defined over the whole set of users (coverage, gini, GAUC, pooled precision...).
    split_fingerprint : str
        The fingerprint of the split part these results were evaluated on, as a job folder's
        ``dataset.json`` records it (``split_fingerprint``), so that ``rt.compare`` pairs a
        notebook's results with the app's runs of the same split and refuses those of another:
        set by ``rt.evaluate(split, ...)`` (a :class:`~recoeval_tracking.splitting.Split`
        given in place of train and test); empty when the results were evaluated on matrices
        or parts, which do not say which split they are (a random split of a fixed fraction
        keeps every user's counts: nothing in the parts tells two such splits apart).
    parts_fingerprint : str
        A hash of the fingerprints of the train and test interactions evaluated, when both were
        given as :class:`~recoeval_tracking.data.Interactions` (a split's parts); empty for
        matrices. Two results of different random splits of the same data differ in it, so
        ``rt.compare`` refuses to pair them user by user even without a split fingerprint.
    """

    per_user: pd.DataFrame
    k: int
    curves_per_user: dict[str, np.ndarray] = field(default_factory=dict)
    definitions: dict[str, Any] = field(default_factory=dict)
    fingerprint: str = ""
    topk_only: bool = False
    timings: dict[str, float] = field(default_factory=dict)
    topk: np.ndarray | None = None
    aggregates: dict[str, float] = field(default_factory=dict)
    split_fingerprint: str = ""
    parts_fingerprint: str = ""

    def _column(self, name: str) -> np.ndarray:
        """One per-user column as an array (from the columns when the frame is not made yet)."""
        source = self.__dict__["_per_user"]
        if isinstance(source, dict):
            return np.asarray(source[name])
        return source[name].to_numpy()

    @property
    def metric_columns(self) -> list[str]:
        """Names of the per-user metric columns at K."""
        source = self.__dict__["_per_user"]
        names = source if isinstance(source, dict) else source.columns
        return [c for c in names if c not in ID_COLUMNS]

    @property
    def means(self) -> dict[str, float]:
        """Mean of each metric over the users for whom it is defined (NaN users excluded), and
        the aggregate metrics, which are already one number over the whole set of users."""
        out = {}
        for c in self.metric_columns:
            v = self._column(c).astype(np.float64, copy=False)
            out[c] = float(np.nanmean(v)) if np.any(~np.isnan(v)) else math.nan
        out.update(self.aggregates)
        return out

    def mean_ci(self) -> pd.DataFrame:
        """Mean, 95% t-interval and number of defined users for each metric column."""
        rows = []
        for c in self.metric_columns:
            mean, low, high, n = mean_ci95(self._column(c))
            rows.append({"metric": c, "mean": mean, "ci95_low": low, "ci95_high": high, "n": n})
        import pandas as pd

        return pd.DataFrame(rows).set_index("metric")

    @property
    def curves(self) -> pd.DataFrame:
        """Mean @1..K curves: a column ``k`` and one column per curve (``ndcg_at_k``...)."""
        data: dict[str, Any] = {"k": np.arange(1, self.k + 1)}
        for name, arr in self.curves_per_user.items():
            with np.errstate(all="ignore"):
                defined = (~np.isnan(arr)).sum(axis=0)
                sums = np.nansum(arr, axis=0)
                data[name] = np.where(defined > 0, sums / np.maximum(defined, 1), np.nan)
        import pandas as pd

        return pd.DataFrame(data)

    def curves_ci(self) -> pd.DataFrame:
        """Long table of curve means with 95% t-intervals: ``curve, k, mean, ci95_low, ci95_high, n``."""
        return curve_ci_table(
            {
                name: [mean_ci95(arr[:, j]) for j in range(arr.shape[1])]
                for name, arr in self.curves_per_user.items()
            }
        )

    @property
    def nan_counts(self) -> dict[str, int]:
        """Number of users whose metrics are all NaN, by reason (``no_test``, ``cold_start``...)."""
        reasons = self.per_user["nan_reason"]
        counts = reasons[reasons != ""].value_counts()
        return {str(k): int(v) for k, v in counts.items()}

    @property
    def n_users_evaluated(self) -> int:
        """Users with no NaN reason (their metrics are defined, possibly except a few by rule)."""
        return int((self._column("nan_reason") == "").sum())

    @property
    def headline(self) -> list[str]:
        """The headline metrics of these results (:func:`headline_metrics`)."""
        return headline_metrics([*self.metric_columns, *self.aggregates], self.k)

    def summary(self, metrics: Any = None) -> str:
        """A plain-text table of means with 95% intervals, for terminals and logs.

        The last lines count the users evaluated (and the NaN ones by reason) and say which
        relevance rule judged the test entries (:func:`relevance_text`).

        Parameters
        ----------
        metrics : list of str or "headline", optional
            Only these rows (``"headline"``: :attr:`headline`), and a line counting the others;
            default: every metric.
        """
        table = self.mean_ci()
        aggregates = dict(self.aggregates)
        hidden = 0
        if metrics is not None:
            keep = (
                self.headline
                if isinstance(metrics, str) and metrics == "headline"
                else [str(m) for m in metrics]
            )
            hidden = len(table) + len(aggregates)
            table = table.loc[[m for m in keep if m in table.index]]
            aggregates = {m: aggregates[m] for m in keep if m in aggregates}
            hidden -= len(table) + len(aggregates)
        width = max(
            [16, *(len(str(n)) + 2 for n in table.index), *(len(n) + 2 for n in self.aggregates)]
        )
        lines = [f"{'metric':<{width}}{'mean':>10}{'ci95_low':>10}{'ci95_high':>10}{'users':>8}"]
        for name, row in table.iterrows():
            lines.append(
                f"{name:<{width}}{row['mean']:>10.4f}{row['ci95_low']:>10.4f}"
                f"{row['ci95_high']:>10.4f}{int(row['n']):>8d}"
            )
        for name, value in aggregates.items():  # one number over the whole set of users
            lines.append(
                f"{name:<{width}}{value:>10.4f}{'':>10}{'':>10}{self.n_users_evaluated:>8d}"
            )
        if hidden:
            lines.append(f"(and {hidden} more metrics: Results.summary(), metrics.json)")
        lines.append(f"users evaluated: {self.n_users_evaluated}; NaN by reason: {self.nan_counts}")
        if "positives" in self.definitions:  # the relevance rule the values were computed with
            lines.append(relevance_text(self.definitions))
        if self.topk_only:
            lines.append("input was ranked top-K lists: whole-ranking metrics are not available")
        lines += [
            f"left out: {', '.join(names)} ({reason})"
            for reason, names in left_out_by_reason(self.definitions).items()
        ]
        return "\n".join(lines)

    def plot(self, metrics: Any = None, *, ax: Any = None):
        """Draw the results with matplotlib: the mean @1..K curves with their 95% bands when the
        evaluation was cumulative, else one bar per metric with its 95% interval.

        Parameters
        ----------
        metrics : list of str, optional
            Metrics at K (``ndcg_at_10``) or curves (``ndcg_at_k``); default: the headline
            metrics that lie in [0, 1] (:attr:`headline`).
        ax : matplotlib Axes, optional
            Draw there; default: a new figure.

        Returns
        -------
        matplotlib.axes.Axes
        """
        if ax is None:
            from matplotlib.figure import Figure

            ax = Figure(figsize=(7.0, 4.5), dpi=100).add_subplot()
        means = self.means
        if metrics is None:
            metrics = [
                m
                for m in self.headline
                if m in means and np.isfinite(means[m]) and 0.0 <= means[m] <= 1.0
            ]
        names = [str(m) for m in metrics]
        unknown = [
            m
            for m in names
            if m not in means
            and m not in self.curves_per_user
            and f"{m.rpartition('_at_')[0]}_at_k" not in self.curves_per_user
        ]
        if unknown:
            from .._validation import param_error

            raise param_error(
                "metrics",
                "Results.plot",
                f"metrics of these results ({', '.join(self.metric_columns[:8])}, ...)",
                unknown,
            )
        curves = [n if n.endswith("_at_k") else f"{n.rpartition('_at_')[0]}_at_k" for n in names]
        if self.curves_per_user and all(c in self.curves_per_user for c in curves):
            ks = np.arange(1, self.k + 1)
            ci = self.curves_ci()
            for name in dict.fromkeys(curves):
                part = ci[ci["curve"] == name]
                (line,) = ax.plot(ks, part["mean"], marker="o", markersize=3, label=name)
                ax.fill_between(
                    ks, part["ci95_low"], part["ci95_high"], alpha=0.2, color=line.get_color()
                )
            ax.set_xlabel("k")
            ax.set_ylabel("mean over users")
            ax.legend(loc="best", fontsize="small")
        else:
            table = self.mean_ci()
            values = [means[m] for m in names]
            low = [table.loc[m, "ci95_low"] if m in table.index else np.nan for m in names]
            high = [table.loc[m, "ci95_high"] if m in table.index else np.nan for m in names]
            err = np.array(
                [
                    [v - lo if np.isfinite(lo) else 0.0 for v, lo in zip(values, low)],
                    [hi - v if np.isfinite(hi) else 0.0 for v, hi in zip(values, high)],
                ]
            )
            y = np.arange(len(names))
            ax.barh(y, values, xerr=err, color="#4C72B0", alpha=0.85, capsize=3)
            ax.set_yticks(y, names)
            ax.invert_yaxis()
            ax.set_xlabel(f"mean over users (95% interval), K={self.k}")
        ax.grid(True, alpha=0.3)
        return ax


def _read_per_user(self: Results) -> pd.DataFrame:
    source = self.__dict__["_per_user"]
    if isinstance(source, dict):  # made on first read (see the class's docstring)
        import pandas as pd

        source = pd.DataFrame(source)
        if "nan_reason" in source.columns:
            source["nan_reason"] = source["nan_reason"].astype(str)
        self.__dict__["_per_user"] = source
    return source


def _write_per_user(self: Results, value: Any) -> None:
    self.__dict__["_per_user"] = value


# a property over the dataclass's field: __init__ and dataclasses.replace go through it
Results.per_user = property(_read_per_user, _write_per_user, doc="The per-user table.")


def nothing_evaluated(results: Any, func: str) -> str | None:
    """The message when no user of ``results`` has a defined metric (every per-user value and
    so every mean NaN), counting the users by NaN reason with each reason's rule; None when
    some user was evaluated. Works on :class:`Results` and on the Dask path's results (both
    have ``n_users_evaluated``, ``nan_counts``, ``means`` and ``metric_columns``)."""
    if results.n_users_evaluated:
        return None
    means = results.means
    if any(math.isfinite(means.get(c, math.nan)) for c in results.metric_columns):
        return None  # e.g. every user 'only_positives': NDCG is still defined
    counts = results.nan_counts
    if not counts:
        return (
            f"{func} evaluated no user: the test data has no user, so every per-user "
            "metric and every mean is NaN."
        )
    rules = (getattr(results, "definitions", None) or {}).get("nan_rules") or {}
    reasons = "; ".join(
        f"{reason}: {n}" + (f" ({rules[reason]})" if reason in rules else "")
        for reason, n in counts.items()
    )
    return (
        f"{func} evaluated none of the {sum(counts.values())} users: every user's metrics "
        f"are NaN, so every mean is NaN. Users by NaN reason: {reasons}. A NaN or one equal "
        "score for every item points at the model's scores; no_test at the split or the "
        "test data."
    )


def warn_if_nothing_evaluated(results: Any, func: str) -> Any:
    """``results``, after a ``UserWarning`` with :func:`nothing_evaluated`'s message when no
    user was evaluated (attributed to the caller of ``func``)."""
    message = nothing_evaluated(results, func)
    if message is not None:
        warnings.warn(message, UserWarning, stacklevel=3)
    return results
