"""Metrics where lower is better (``mpr``, timings ``*_seconds``, the user's
``lower_is_better`` prefixes) through every place of a comparison that says which system is
better: win/tie/loss against the baseline and between every pair, the LaTeX table's bold
(best) cell, and the mean-rank column of the multi-dataset table (1 = best, bold).

Expected counts and cells are worked out by hand from the per-user values below; each test
fails when the direction is ignored (wins and losses swapped, the largest value bolded, the
worst mean rank bolded)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import recoeval_tracking as rt
from recoeval_tracking.reporting.runs import RunData

NAN = float("nan")
# 8 users; the baseline A and the system B.
A_LOW = [0.5, 0.2, 0.3, 0.4, 0.6, 0.7, 0.1, NAN]
B_LOW = [0.1, 0.2, 0.6, 0.3, 0.5, 0.2, 0.1, 0.3]
# B against A where lower is better: users 0, 3, 4, 5 better (4 wins), users 1 and 6 equal
# (2 ties), user 2 worse (1 loss); user 7 has no value for A and is left out.
WTL_LOW = (4, 2, 1)
A_HIGH = [0.1, 0.5, 0.2, 0.3, 0.4, 0.0, 0.6, 0.2]
B_HIGH = [0.2, 0.5, 0.1, 0.4, 0.4, 0.3, 0.5, 0.2]
# B against A where greater is better: users 0, 3, 5 better, 1, 4, 7 equal, 2, 6 worse.
WTL_HIGH = (3, 3, 2)


def _run(name: str, columns: dict[str, list[float]], dataset: str | None = None) -> RunData:
    n = len(next(iter(columns.values())))
    per_user = pd.DataFrame(
        {
            "user_id": np.arange(n),
            "n_train": 5,
            "n_test": 5,
            **{k: np.asarray(v, dtype=np.float64) for k, v in columns.items()},
        }
    )
    params = {"model.name": name}
    fps = {"data": "d", "split": "s", "definitions": "f"}
    if dataset is not None:
        params["dataset.name"] = dataset
        fps = {**fps, "data": dataset, "split": dataset}
    return RunData(
        run_id=f"{name}@{dataset}", name=name, per_user=per_user, params=params, fingerprints=fps
    )


@pytest.fixture(scope="module")
def pair():
    cols = {
        "A": {"mpr": A_LOW, "latency_ms": A_LOW, "fit_seconds": A_LOW, "ndcg_at_10": A_HIGH},
        "B": {"mpr": B_LOW, "latency_ms": B_LOW, "fit_seconds": B_LOW, "ndcg_at_10": B_HIGH},
    }
    return rt.compare(
        [_run("A", cols["A"]), _run("B", cols["B"])],
        baseline="A",
        lower_is_better=("latency",),
        n_bootstrap=0,
        n_permutations=50,
    )


@pytest.mark.parametrize(
    "metric, expected",
    [("mpr", WTL_LOW), ("fit_seconds", WTL_LOW), ("latency_ms", WTL_LOW), ("ndcg_at_10", WTL_HIGH)],
)
def test_win_tie_loss_against_the_baseline_follows_the_direction(pair, metric, expected):
    assert pair.lower_is_better(metric) == (metric != "ndcg_at_10")
    row = pair.summary().set_index(["system", "metric"]).loc[("B", metric)]
    assert (int(row["wins"]), int(row["ties"]), int(row["losses"])) == expected


@pytest.mark.parametrize("metric, expected", [("mpr", WTL_LOW), ("ndcg_at_10", WTL_HIGH)])
def test_win_tie_loss_of_every_pair_follows_the_direction(pair, metric, expected):
    wtl = pair.win_tie_loss(metric)
    assert len(wtl) == 1  # one row per pair of systems: A against B
    a_vs_b = wtl.iloc[0]
    assert (a_vs_b["system"], a_vs_b["other"]) == ("A", "B")
    assert (a_vs_b["wins"], a_vs_b["ties"], a_vs_b["losses"], a_vs_b["n"]) == (
        *expected[::-1],
        sum(expected),
    )


def _row(tex: str, name: str) -> list[str]:
    """The cells of the LaTeX table row of system ``name``."""
    for line in tex.splitlines():
        cells = [c.strip() for c in line.rstrip("\\ ").split("&")]
        if len(cells) > 1 and cells[0].split(" (")[0] == name:
            return cells
    raise AssertionError(f"no row {name} in\n{tex}")


def test_latex_wtl_column_counts_for_a_lower_is_better_metric(pair):
    tex = pair.to_latex(["mpr"], win_tie_loss=True)
    assert _row(tex, "B")[2] == "/".join(map(str, WTL_LOW))


def test_latex_bolds_the_smallest_mean_of_a_lower_is_better_metric(pair):
    # mpr means: A = 2.8 / 7 = 0.4 (user 7 has none), B = 2.3 / 8 = 0.2875: B is best.
    tex = pair.to_latex(["mpr", "ndcg_at_10"])
    a, b = _row(tex, "A"), _row(tex, "B")
    assert b[1].startswith(r"\textbf{0.2875}") and r"\textbf" not in a[1]
    # ndcg_at_10 means: A = 2.3 / 8 = 0.2875, B = 2.6 / 8 = 0.325: B is best again
    assert b[2].startswith(r"\textbf{0.3250}") and r"\textbf" not in a[2]


def _three_datasets(metric: str, means: dict[str, list[float]]):
    """Systems S1..S3 over datasets D0..D2 with the given per-dataset means (20 users each,
    a small spread around the mean)."""
    rng = np.random.default_rng(3)
    runs = []
    for d in range(3):
        for name, per_ds in means.items():
            values = per_ds[d] + rng.uniform(-0.005, 0.005, 20)
            values -= values.mean() - per_ds[d]
            runs.append(_run(name, {metric: list(values)}, dataset=f"D{d}"))
    return rt.compare(runs, baseline="S1", n_bootstrap=0, n_permutations=50)


@pytest.mark.parametrize(
    "metric, means, best",
    [
        # greater is better: S1 highest on every dataset (mean rank 1), S3 lowest (rank 3)
        ("ndcg_at_10", {"S1": [0.5, 0.6, 0.4], "S2": [0.4, 0.5, 0.3], "S3": [0.3, 0.2, 0.1]}, "S1"),
        # lower is better: S3 has the smallest mpr everywhere (mean rank 1)
        ("mpr", {"S1": [0.5, 0.6, 0.4], "S2": [0.4, 0.5, 0.3], "S3": [0.3, 0.2, 0.1]}, "S3"),
    ],
)
def test_multi_dataset_table_bolds_the_best_values_and_the_best_mean_rank(metric, means, best):
    cmp = _three_datasets(metric, means)
    table = cmp.dataset_table(metric)
    worst = "S3" if best == "S1" else "S1"
    assert table.loc[best, "mean rank"] == 1.0 and table.loc[worst, "mean rank"] == 3.0
    tex = cmp.to_latex([metric])
    best_row, worst_row = _row(tex, best), _row(tex, worst)
    assert best_row[-1] == r"\textbf{1.00}" and worst_row[-1] == "3.00"
    for cell in best_row[1:-1]:  # the best value of each dataset's column
        assert cell.startswith(r"\textbf{")
    assert not any(r"\textbf" in cell for cell in worst_row[1:])
