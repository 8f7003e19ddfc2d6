"""Per-job curves: one panel per scale, so that DCG or novelty (values above 1) do not flatten
the metrics within [0, 1]."""

from __future__ import annotations

import numpy as np
import pandas as pd

from recoeval_tracking.jobdir.plots import curve_panels, plot_curves


def _curves(tops: dict[str, float]) -> pd.DataFrame:
    k = np.arange(1, 6)
    out = {"k": k}
    for name, top in tops.items():
        out[name] = top * k / 5
        out[f"{name}_ci95_low"] = out[name] * 0.9
        out[f"{name}_ci95_high"] = out[name] * 1.05
    return pd.DataFrame(out)


def test_bounded_curves_share_panels_of_six_and_others_get_their_own():
    bounded = [f"m{i}_at_k" for i in range(8)]
    curves = _curves({**{b: 0.5 for b in bounded}, "dcg_at_k": 7.0, "novelty_at_k": 2.2})
    assert curve_panels(curves) == [bounded[:6], bounded[6:], ["dcg_at_k"], ["novelty_at_k"]]


def test_the_upper_band_decides_the_scale():
    # A mean of 0.96 whose band reaches 1.008 is not within [0, 1]: its own panel.
    curves = _curves({"p_at_k": 0.5, "x_at_k": 0.96})
    assert curve_panels(curves) == [["p_at_k"], ["x_at_k"]]


def test_one_axis_per_panel_with_distinct_colours(tmp_path):
    curves = _curves({"p_at_k": 0.3, "r_at_k": 0.6, "ndcg_at_k": 0.4, "dcg_at_k": 5.0})
    fig = plot_curves(curves, tmp_path / "curves.png")
    assert (tmp_path / "curves.png").stat().st_size > 0
    axes = fig.get_axes()
    assert len(axes) == 2
    lines = axes[0].get_lines()
    assert [ln.get_label() for ln in lines] == ["p", "r", "ndcg"]
    assert len({ln.get_color() for ln in lines}) == 3
    assert [ln.get_label() for ln in axes[1].get_lines()] == ["dcg"]
