"""Plots of one job: @1..K curves with confidence bands and per-user distributions.

:func:`write_job_plots` fills the ``plots/`` folder of a job directory; reports draw their own
figures on :func:`new_figure`. Figures are built with :class:`matplotlib.figure.Figure` and the
Agg canvas directly, never through ``pyplot``: no global figure state, no GUI backend, safe in
worker processes (joblib) and threads.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from .._validation import param_error

__all__ = ["new_figure", "plot_curves", "curve_panels", "plot_per_user", "write_job_plots"]


def new_figure(width: float = 7.0, height: float = 4.5):
    """A :class:`matplotlib.figure.Figure` on its own Agg canvas, with fixed margins."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    # Fixed margins: a constrained layout doubles the drawing time of these small figures.
    fig = Figure(figsize=(width, height), dpi=100)
    fig.subplots_adjust(left=0.12, right=0.97, top=0.9, bottom=0.13)
    FigureCanvasAgg(fig)
    return fig


def _curve_names(curves: pd.DataFrame) -> list[str]:
    return [
        c
        for c in curves.columns
        if c != "k" and not c.endswith("_ci95_low") and not c.endswith("_ci95_high")
    ]


#: Curves per panel at most, so each keeps a distinct colour of ``tab10``.
_PER_PANEL = 6


def curve_panels(curves: pd.DataFrame) -> list[list[str]]:
    """The curves grouped by scale: those within [0, 1] (precision, recall, NDCG...) share
    panels of at most :data:`_PER_PANEL`; each curve with values above 1 (DCG, novelty) gets its
    own panel, so that its scale does not flatten the others."""
    bounded, own = [], []
    for name in _curve_names(curves):
        cols = [c for c in (name, f"{name}_ci95_high") if c in curves.columns]
        top = np.nanmax(curves[cols].to_numpy(dtype=float)) if len(curves) else 0.0
        (own if np.isfinite(top) and top > 1.0 + 1e-9 else bounded).append(name)
    panels = [bounded[i : i + _PER_PANEL] for i in range(0, len(bounded), _PER_PANEL)]
    return panels + [[name] for name in own]


def plot_curves(curves: pd.DataFrame, path: str | Path | None = None, *, title: str | None = None):
    """Plot mean @1..K curves, each with its 95% confidence band when the bounds are given, one
    panel per scale (:func:`curve_panels`), distinct colours within a panel.

    Parameters
    ----------
    curves : pandas.DataFrame
        A column ``k`` and one column per curve (``ndcg_at_k``, ...), optionally with
        ``<curve>_ci95_low`` and ``<curve>_ci95_high`` columns (the layout of ``curves.csv``).
        The band is the Student-t interval ``mean ± t_{0.975, n-1} s / sqrt(n)`` over users.
    path : str or Path, optional
        Where to save the PNG (parent folders are created).
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib import colormaps

    if not isinstance(curves, pd.DataFrame) or "k" not in curves.columns:
        raise param_error(
            "curves",
            "plot_curves",
            "a DataFrame with a column 'k' and one column per curve",
            curves,
        )
    panels = curve_panels(curves) or [[]]
    ncols = 1 if len(panels) == 1 else 2
    nrows = -(-len(panels) // ncols)
    fig = new_figure(7.0 * ncols, 4.0 * nrows)
    height = 4.0 * nrows  # inches: 0.6 for the title on top, 0.5 for the axis label below
    fig.subplots_adjust(
        left=0.08 if ncols > 1 else 0.12,
        right=0.97,
        top=1 - 0.6 / height,
        bottom=0.5 / height,
        wspace=0.25,
        hspace=0.45,
    )
    k = curves["k"].to_numpy()
    colours = colormaps["tab10"]
    for i, names in enumerate(panels):
        ax = fig.add_subplot(nrows, ncols, i + 1)
        for j, name in enumerate(names):
            ax.plot(
                k,
                curves[name].to_numpy(dtype=float),
                marker="o",
                markersize=3,
                color=colours(j),
                label=name.removesuffix("_at_k"),
            )
            low, high = f"{name}_ci95_low", f"{name}_ci95_high"
            if low in curves.columns and high in curves.columns:
                ax.fill_between(
                    k,
                    curves[low].to_numpy(dtype=float),
                    curves[high].to_numpy(dtype=float),
                    color=colours(j),
                    alpha=0.2,
                    linewidth=0,
                )
        ax.set_xlabel("k (cutoff)")
        ax.set_ylabel("mean over users (95% CI band)")
        if len(k):
            ax.set_xlim(float(k.min()), float(k.max()))
        ax.grid(True, alpha=0.3)
        if names:
            ax.legend(loc="best", fontsize="small", ncols=2 if len(names) > 3 else 1)
    fig.suptitle(title or "Metrics @1..K")
    if path is not None:
        _save(fig, path)
    return fig


def plot_per_user(
    values: np.ndarray | pd.Series,
    metric: str,
    path: str | Path | None = None,
    *,
    title: str | None = None,
    bins: int = 40,
):
    """Histogram of one metric's per-user values, with the mean and the NaN count.

    Parameters
    ----------
    values : array-like of float
        Per-user values; NaN marks users for whom the metric is undefined (counted, not plotted).
    metric : str
        The metric name, for labels.
    path : str or Path, optional
        Where to save the PNG.
    title : str, optional
    bins : int
        Histogram bins.

    Returns
    -------
    matplotlib.figure.Figure
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    defined = v[~np.isnan(v)]
    n_nan = int(v.size - defined.size)
    fig = new_figure(6.0, 4.0)
    ax = fig.add_subplot()
    if defined.size:
        lo, hi = float(defined.min()), float(defined.max())
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        counts, edges = np.histogram(defined, bins=bins, range=(lo, hi))
        # One step artist instead of one patch per bin: several times faster to draw.
        ax.stairs(counts, edges, fill=True, color="#4C72B0", alpha=0.85)
        mean = float(defined.mean())
        ax.axvline(mean, color="#C44E52", linestyle="--", label=f"mean = {mean:.4f}")
        ax.legend(loc="best", fontsize="small")
    else:
        ax.text(0.5, 0.5, "no defined values", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel(metric)
    ax.set_ylabel("users")
    ax.grid(True, alpha=0.3)
    ax.set_title(title or f"{metric}: {defined.size} users defined, {n_nan} NaN")
    if path is not None:
        _save(fig, path)
    return fig


def _save(fig, path: str | Path) -> None:
    """Save ``fig`` as PNG to ``path`` atomically (a temporary name, then a rename)."""
    from .markers import atomic_write

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda tmp: fig.savefig(tmp, format="png"))


def write_job_plots(
    per_user: pd.DataFrame,
    metric_columns: Iterable[str],
    curves: pd.DataFrame | None,
    directory: str | Path,
) -> list[Path]:
    """Write ``curves.png`` (when there are curves) and ``per_user_<metric>.png`` into
    ``directory``.

    Returns the paths written.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    if curves is not None and len(_curve_names(curves)) and len(curves):
        p = directory / "curves.png"
        plot_curves(curves, p)
        written.append(p)
    for metric in metric_columns:
        p = directory / f"per_user_{metric}.png"
        plot_per_user(per_user[metric].to_numpy(dtype=np.float64), metric, p)
        written.append(p)
    return written
