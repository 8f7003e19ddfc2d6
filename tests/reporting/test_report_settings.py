"""Every statistic and setting of the report, against hand computations and scipy.

* ``adjust_pvalues``: Holm, Bonferroni and Benjamini-Hochberg against hand-worked values where
  the step-down maximum and the step-up minimum change the result, and BH against
  :func:`scipy.stats.false_discovery_control`;
* ``build_report`` honours ``correction``, ``test``, ``alpha`` (a p-value equal to alpha is not
  significant), ``confidence`` and the direction of a lower-is-better metric (``mpr``);
* the summary and comparison intervals equal the t interval and the percentile bootstrap of the
  per-run values and of the paired differences, computed here from their definitions;
* the sweep leaderboard and its ``best_*`` metrics honour lower-is-better.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from recoeval_tracking import stats as st_
from recoeval_tracking.reporting.report import RunData, build_report, significance_mark

FPS = {"data": "d", "split": "s", "definitions": "f"}


# --------------------------------------------------------------------------------------------
# adjust_pvalues
# --------------------------------------------------------------------------------------------


def test_benjamini_hochberg_step_up_minimum():
    # sorted 0.01, 0.04, 0.045 (m = 3): m p / rank = 0.03, 0.06, 0.045; the step-up minimum
    # from the largest p down turns 0.06 into 0.045
    p = [0.045, 0.01, 0.04]
    np.testing.assert_allclose(st_.adjust_pvalues(p, "bh"), [0.045, 0.03, 0.045], rtol=1e-12)
    # a longer one: sorted 0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205 (m = 8)
    p = [0.041, 0.001, 0.074, 0.008, 0.205, 0.039, 0.06, 0.042]
    raw = {
        0.001: 8 * 0.001 / 1,
        0.008: 8 * 0.008 / 2,
        0.039: 8 * 0.039 / 3,
        0.041: 8 * 0.041 / 4,
        0.042: 8 * 0.042 / 5,
        0.06: 8 * 0.06 / 6,
        0.074: 8 * 0.074 / 7,
        0.205: 8 * 0.205 / 8,
    }
    ranked = sorted(raw)
    want = {}
    running = 1.0
    for q in reversed(ranked):
        running = min(running, raw[q])
        want[q] = running
    assert want[0.039] == pytest.approx(8 * 0.042 / 5)  # the minimum matters here
    np.testing.assert_allclose(st_.adjust_pvalues(p, "bh"), [want[q] for q in p], rtol=1e-12)


def test_holm_step_down_maximum_and_bonferroni():
    # sorted 0.01, 0.03, 0.04 (m = 3): (m - j + 1) p = 0.03, 0.06, 0.04; running max 0.03, 0.06,
    # 0.06: the largest p is raised to 0.06
    p = [0.04, 0.01, 0.03]
    np.testing.assert_allclose(st_.adjust_pvalues(p, "holm"), [0.06, 0.03, 0.06], rtol=1e-12)
    np.testing.assert_allclose(st_.adjust_pvalues(p, "bonferroni"), [0.12, 0.03, 0.09], rtol=1e-12)
    # capped at 1, NaN kept and left out of m
    out = st_.adjust_pvalues([0.3, np.nan, 0.6, 0.5], "holm")
    np.testing.assert_allclose(out, [0.9, np.nan, 1.0, 1.0], rtol=1e-12)


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(
    p=st.lists(
        st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.01, 0.05, 1.0])), min_size=1, max_size=30
    )
)
def test_corrections_agree_with_scipy_and_their_definitions(p):
    p = np.array(p)
    bh = st_.adjust_pvalues(p, "bh")
    np.testing.assert_allclose(
        bh, sps.false_discovery_control(p, method="bh"), rtol=1e-10, atol=1e-15
    )
    m = p.size
    order = np.argsort(p, kind="stable")
    holm = np.empty(m)
    running = 0.0
    for j, i in enumerate(order):  # step down: max over the smaller p-values
        running = max(running, min(1.0, (m - j) * p[i]))
        holm[i] = running
    np.testing.assert_allclose(st_.adjust_pvalues(p, "holm"), holm, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(
        st_.adjust_pvalues(p, "bonferroni"), np.minimum(1, m * p), rtol=1e-12
    )
    assert np.all(bh <= st_.adjust_pvalues(p, "holm") + 1e-15)


# --------------------------------------------------------------------------------------------
# Report settings
# --------------------------------------------------------------------------------------------


def _run(run_id: str, columns: dict[str, np.ndarray], user_ids=None) -> RunData:
    n = len(next(iter(columns.values())))
    df = pd.DataFrame(
        {
            "user_id": np.arange(n) if user_ids is None else user_ids,
            "n_train": 3,
            "n_test": 2,
            **columns,
        }
    )
    return RunData(run_id=run_id, name=run_id, per_user=df, fingerprints=dict(FPS))


@pytest.fixture(scope="module")
def runs() -> list[RunData]:
    """A baseline and three runs over six metrics with effects of every size and sign."""
    rng = np.random.default_rng(4)
    n = 60
    base = {f"m{j}_at_5": rng.random(n) for j in range(5)}
    base["mpr"] = rng.random(n) * 0.5
    out = [_run("base", base)]
    for r, shift in enumerate([0.02, 0.08, -0.15]):
        cols = {}
        for j, (name, v) in enumerate(base.items()):
            cols[name] = v + shift * (j - 2) + rng.normal(0, 0.15, n)
        out.append(_run(f"run{r}", cols))
    out[2].per_user.loc[:4, "m1_at_5"] = np.nan  # undefined users in one run
    return out


def _kw(**extra):
    return dict(n_bootstrap=200, n_permutations=200, seed=3, **extra)


@pytest.mark.parametrize("family", ["table", "metric"])
@pytest.mark.parametrize("correction", ["holm", "bonferroni", "bh", "none"])
def test_report_applies_the_chosen_correction(runs, correction, family):
    rep = build_report(runs, "base", correction=correction, family=family, **_kw())
    comp = rep.comparisons
    assert rep.settings["correction"] == correction and rep.settings["family"] == family
    assert len(comp) == 18  # 3 runs x 6 metrics
    # the families: the whole table, or each metric's 3 comparisons
    families = (
        [np.arange(18)]
        if family == "table"
        else [np.flatnonzero(comp["metric"] == m) for m in comp["metric"].unique()]
    )
    assert sum(len(f) for f in families) == 18
    for test in ("t", "wilcoxon", "randomization"):
        for idx in families:
            raw = comp[f"p_{test}"].to_numpy(dtype=np.float64)[idx]
            adj = comp[f"p_{test}_adj"].to_numpy(dtype=np.float64)[idx]
            if correction == "none":
                np.testing.assert_array_equal(adj, raw)
            elif correction == "bh":
                np.testing.assert_allclose(
                    adj, sps.false_discovery_control(raw, method="bh"), rtol=1e-10
                )
            else:
                np.testing.assert_allclose(adj, st_.adjust_pvalues(raw, correction), rtol=1e-12)
    if correction == "bonferroni":
        m = 18 if family == "table" else 3
        np.testing.assert_allclose(comp["p_t_adj"], np.minimum(1, m * comp["p_t"]), rtol=1e-12)


def test_auto_permutations_follow_the_family(runs):
    """``n_permutations="auto"`` draws 2000 sign vectors per comparison of the family (at least
    1000): 3 per metric -> 6000, the whole table of 18 -> 36000; the smallest adjusted
    randomisation p-value can then reach the strongest mark."""
    kw = {"n_bootstrap": 0, "seed": 3}
    per_metric = build_report(runs, "base", n_permutations="auto", **kw)
    assert per_metric.settings["n_permutations_used"] == 6000
    table = build_report(runs, "base", n_permutations="auto", family="table", **kw)
    assert table.settings["n_permutations_used"] == 36000
    for rep, m, R in ((per_metric, 3, 6000), (table, 18, 36000)):
        floor = min(1.0, m / (R + 1))
        assert (rep.comparisons["p_randomization_adj"] >= floor - 1e-15).all()
        assert floor < 0.001


def test_corrections_give_different_tables(runs):
    """On this data every correction gives other adjusted p-values (so a report that ignores the
    setting cannot pass the test above by accident)."""
    tables = {
        c: build_report(runs, "base", correction=c, **_kw()).comparisons["p_t_adj"]
        for c in ("holm", "bonferroni", "bh", "none")
    }
    for a in tables:
        for b in tables:
            if a < b:
                assert not np.allclose(tables[a], tables[b]), (a, b)


def _outlier_runs() -> list[RunData]:
    """Paired differences: 29 users at -0.1 and one at +10. The t-test sees a positive mean
    with a huge spread (p ~ 0.5), the Wilcoxon test a consistent decrease (p < 0.001), the
    sign-flip test the one large difference (p ~ 1)."""
    n = 30
    base = np.full(n, 0.5)
    d = np.full(n, -0.1)
    d[0] = 10.0
    return [_run("base", {"ndcg_at_5": base}), _run("other", {"ndcg_at_5": base + d})]


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomization"])
def test_marks_come_from_the_chosen_test(test):
    rep = build_report(_outlier_runs(), "base", test=test, **_kw())
    row = rep.comparisons.iloc[0]
    assert row["mean_diff"] == pytest.approx((10 - 29 * 0.1) / 30)
    want = significance_mark(row[f"p_{test}_adj"], row["mean_diff"], False, 0.05)
    assert row["mark"] == want
    assert row["mark"] == {"t": "", "wilcoxon": "▲***", "randomization": ""}[test]


def test_significance_mark_thresholds():
    assert significance_mark(0.05, 0.1) == ""  # p == alpha: not significant
    assert significance_mark(np.nextafter(0.05, 0), 0.1) == "▲*"
    assert significance_mark(0.01, 0.1) == "▲*"  # "**" needs p < 0.01
    assert significance_mark(np.nextafter(0.01, 0), 0.1) == "▲**"
    assert significance_mark(0.001, -0.1) == "▼**"
    assert significance_mark(np.nextafter(0.001, 0), -0.1) == "▼***"
    assert significance_mark(0.1, 0.1, alpha=0.1) == ""
    assert significance_mark(0.09, 0.1, alpha=0.1) == "▲*"
    # lower is better: a negative difference is an improvement
    assert significance_mark(0.0001, -0.1, lower_is_better=True) == "▲***"
    assert significance_mark(0.0001, 0.1, lower_is_better=True) == "▼***"
    assert significance_mark(0.0001, 0.0) == ""
    assert significance_mark(math.nan, 0.1) == ""


def test_report_marks_exactly_at_alpha(runs):
    base = build_report(runs, "base", **_kw())
    comp = base.comparisons
    p = comp["p_t_adj"].to_numpy(dtype=np.float64)
    pick = int(np.flatnonzero((p > 0.001) & (p < 0.5))[0])
    alpha = float(p[pick])
    at = build_report(runs, "base", alpha=alpha, **_kw()).comparisons
    above = build_report(runs, "base", alpha=float(np.nextafter(alpha, 1)), **_kw()).comparisons
    assert at["mark"].iloc[pick] == ""
    assert above["mark"].iloc[pick] != "" and above["mark"].iloc[pick].endswith("*")
    for table, a in ((at, alpha), (above, float(np.nextafter(alpha, 1)))):
        for _, row in table.iterrows():
            want = significance_mark(
                row["p_t_adj"], row["mean_diff"], row["metric"].startswith("mpr"), a
            )
            assert row["mark"] == want, row["metric"]


def test_lower_is_better_metric_gets_the_mark_the_other_way():
    n = 40
    rng = np.random.default_rng(1)
    mpr = rng.random(n) * 0.4
    ndcg = rng.random(n)

    def jitter() -> np.ndarray:
        return rng.normal(0, 0.01, n)

    runs = [
        _run("base", {"mpr": mpr, "ndcg_at_5": ndcg}),
        _run("better", {"mpr": mpr - 0.1 + jitter(), "ndcg_at_5": ndcg + 0.1 + jitter()}),
        _run("worse", {"mpr": mpr + 0.1 + jitter(), "ndcg_at_5": ndcg - 0.1 + jitter()}),
    ]
    rep = build_report(runs, "base", **_kw())
    marks = rep.comparisons.set_index(["run_id", "metric"])["mark"]
    assert marks[("better", "mpr")] == "▲***" and marks[("better", "ndcg_at_5")] == "▲***"
    assert marks[("worse", "mpr")] == "▼***" and marks[("worse", "ndcg_at_5")] == "▼***"
    assert build_report(runs, "best:mpr", **_kw()).baseline == "better"
    assert build_report(runs, "worst:mpr", **_kw()).baseline == "worse"
    assert build_report(runs, "best:ndcg_at_5", **_kw()).baseline == "better"
    # a metric named lower-is-better by the caller
    runs2 = [_run(r.run_id, {"rmse": r.per_user["mpr"].to_numpy()}) for r in runs]
    rep = build_report(runs2, "base", lower_is_better=["rmse"], **_kw())
    marks = rep.comparisons.set_index("run_id")["mark"]
    assert marks["better"] == "▲***" and marks["worse"] == "▼***"


def _t_interval(v: np.ndarray, confidence: float) -> tuple[float, float, float, int]:
    v = v[~np.isnan(v)]
    n = v.size
    mean = float(v.mean())
    half = sps.t.ppf(0.5 + confidence / 2, n - 1) * v.std(ddof=1) / math.sqrt(n)
    return mean, mean - half, mean + half, n


def _bootstrap(v: np.ndarray, n_resamples: int, seed: int, confidence: float):
    """The documented bootstrap: replicate b draws len(v) users with replacement from
    numpy.random.default_rng([seed, len(v), b]) and averages their defined values; the bounds
    are the (1 -+ c)/2 quantiles of the replicates."""
    n = v.size
    ok = ~np.isnan(v)
    reps = []
    for b in range(n_resamples):
        w = np.bincount(np.random.default_rng([seed, n, b]).integers(0, n, n), minlength=n)
        den = w[ok].sum()
        reps.append(np.nan if den == 0 else (w[ok] * v[ok]).sum() / den)
    lo, hi = np.nanquantile(reps, [(1 - confidence) / 2, (1 + confidence) / 2])
    return float(lo), float(hi)


@pytest.mark.parametrize("confidence", [0.95, 0.8])
def test_intervals_match_hand_computed_t_and_bootstrap(runs, confidence):
    # run1 misses users 0..5 (aligned as missing), run0 has NaN for users 0..4 in m1_at_5
    runs = list(runs)
    r = runs[2]
    runs[2] = RunData(
        run_id=r.run_id, name=r.name, per_user=r.per_user.iloc[6:].copy(), fingerprints=dict(FPS)
    )
    rep = build_report(
        runs, "base", confidence=confidence, n_bootstrap=300, n_permutations=50, seed=9
    )
    assert rep.settings["confidence"] == confidence
    n_all = 60
    values = {}
    for run in runs:
        df = run.per_user.set_index("user_id").reindex(range(n_all))
        values[run.run_id] = df
    summary = rep.summary.set_index(["run_id", "metric"])
    comp = rep.comparisons.set_index(["run_id", "metric"])
    for metric in rep.metrics:
        x0 = values["base"][metric].to_numpy(dtype=np.float64)
        for run in runs:
            x = values[run.run_id][metric].to_numpy(dtype=np.float64)
            mean, lo, hi, n = _t_interval(x, confidence)
            row = summary.loc[(run.run_id, metric)]
            assert row["n"] == n
            assert row[["mean", "t_low", "t_high"]].tolist() == pytest.approx(
                [mean, lo, hi], rel=1e-12
            )
            blo, bhi = _bootstrap(x, 300, 9, confidence)
            assert [row["boot_low"], row["boot_high"]] == pytest.approx([blo, bhi], abs=2e-6)
            if run.run_id == "base":
                continue
            d = x - x0  # paired differences over the users defined in both
            mean, lo, hi, n = _t_interval(d, confidence)
            row = comp.loc[(run.run_id, metric)]
            assert row["n_pairs"] == n
            assert row[["mean_diff", "t_low", "t_high"]].tolist() == pytest.approx(
                [mean, lo, hi], rel=1e-12, abs=1e-15
            )
            blo, bhi = _bootstrap(d, 300, 9, confidence)
            assert [row["boot_low"], row["boot_high"]] == pytest.approx([blo, bhi], abs=2e-6), (
                run.run_id,
                metric,
            )
            dd = d[~np.isnan(d)]
            assert row["p_t"] == pytest.approx(
                sps.ttest_rel(dd, np.zeros_like(dd)).pvalue, rel=1e-10
            )
            assert row["cohens_dz"] == pytest.approx(dd.mean() / dd.std(ddof=1), rel=1e-12)


# --------------------------------------------------------------------------------------------
# Leaderboard
# --------------------------------------------------------------------------------------------


def test_leaderboard_best_honours_lower_is_better(store_uri):
    from mlflow import MlflowClient

    from recoeval_tracking.tracking import (
        build_leaderboard,
        create_sweep_parent,
        finish_sweep_parent,
    )

    parent = create_sweep_parent(tracking_uri=store_uri, experiment="board")
    client = MlflowClient(store_uri)
    values = {
        "a": {"ndcg_at_4": 0.30, "mpr": 0.20, "rmse": 0.9},
        "b": {"ndcg_at_4": 0.50, "mpr": 0.35, "rmse": 0.7},
        "c": {"ndcg_at_4": 0.40, "mpr": 0.10, "rmse": 1.1},
    }
    for name, metrics in values.items():
        run = client.create_run(
            parent.experiment_id,
            run_name=name,
            tags={"mlflow.parentRunId": parent.run_id, "recoeval.metrics": "ndcg_at_4,mpr,rmse"},
        )
        for key, v in metrics.items():
            client.log_metric(run.info.run_id, key, v)
        client.set_terminated(run.info.run_id)
    board = build_leaderboard(parent.run_id, tracking_uri=store_uri)
    assert board.attrs["sort_by"] == "ndcg_at_4"
    assert board["run_name"].tolist() == ["b", "c", "a"]
    by_mpr = build_leaderboard(parent.run_id, tracking_uri=store_uri, sort_by="mpr")
    assert by_mpr["run_name"].tolist() == ["c", "a", "b"]  # lower is better
    by_rmse = build_leaderboard(
        parent.run_id, tracking_uri=store_uri, sort_by="rmse", lower_is_better=["rmse"]
    )
    assert by_rmse["run_name"].tolist() == ["b", "a", "c"]
    finish_sweep_parent(parent.run_id, tracking_uri=store_uri, lower_is_better=["rmse"])
    prun = client.get_run(parent.run_id)
    assert prun.data.metrics["best_ndcg_at_4"] == pytest.approx(0.50)
    assert prun.data.metrics["best_mpr"] == pytest.approx(0.10)
    assert prun.data.metrics["best_rmse"] == pytest.approx(0.7)
    assert prun.data.tags["recoeval.best_run.ndcg_at_4"] == "b"
    assert prun.data.tags["recoeval.best_run.mpr"] == "c"
    assert prun.data.tags["recoeval.best_run.rmse"] == "b"
