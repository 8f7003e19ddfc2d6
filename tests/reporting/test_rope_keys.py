"""A per-metric rope names metrics the comparison has (a key naming none left the rope it meant
at 0, silently), and a relative rope over replicates is taken of the baseline's mean over the
replicates (computed by hand here), not of the system's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from _rundata import fold_runs
from report_runs import synthetic_run

import recoeval_tracking as rt
from recoeval_tracking import InputError
from recoeval_tracking.reporting.equivalence import check_rope_metrics, unknown_rope_metrics
from recoeval_tracking.reporting.runs import RunData


@pytest.fixture(scope="module")
def cmp():
    runs = [
        synthetic_run("base", {"ndcg_at_5": 0.30, "p_at_5": 0.2}, n_users=60, seed=0),
        synthetic_run("big", {"ndcg_at_5": 0.40, "p_at_5": 0.3}, n_users=60, seed=1),
    ]
    return rt.compare(runs, baseline="base", n_bootstrap=0, n_permutations=50)


def test_an_unknown_metric_of_a_rope_is_refused_naming_the_metrics_close_first(cmp):
    with pytest.raises(
        InputError,
        match=r"The 'rope' parameter of Comparison.verdicts must be .*dict whose keys are "
        r"metrics compared\. Got 'ndgc_at_5', which names no metric compared instead\. The "
        r"metrics compared: ndcg_at_5, p_at_5\. Did you mean 'ndcg_at_5'\?",
    ):
        cmp.verdicts({"ndgc_at_5": 0.05})
    ok = cmp.verdicts({"ndcg_at_5": 0.05})  # known keys: the others get 0
    assert sorted(zip(ok.metric, ok.rope)) == [("ndcg_at_5", 0.05), ("p_at_5", 0.0)]


def test_unknown_rope_metrics_puts_the_close_matches_first():
    unknown, close, known = unknown_rope_metrics(
        {"p_at_5": 0.1, "ndgc_at_5": 0.05}, ["p_at_5", "ap_at_5", "ndcg_at_5", "ndcg_at_10"]
    )
    assert unknown == ["ndgc_at_5"]
    assert close[0] == "ndcg_at_5" and known[: len(close)] == close
    assert sorted(known) == sorted(["p_at_5", "ap_at_5", "ndcg_at_5", "ndcg_at_10"])
    assert unknown_rope_metrics(0.01, ["p_at_5"])[0] == []
    assert unknown_rope_metrics("5%", ["p_at_5"])[0] == []
    with pytest.raises(InputError, match=r"Got 'zzz'.*metrics compared: p_at_5\. \(A metric"):
        check_rope_metrics({"zzz": 0.1}, ["p_at_5"], "compare")


def test_the_report_command_refuses_an_unknown_rope_key_naming_the_setting():
    from recoeval_tracking.app.report import _check_rope_keys

    with pytest.raises(
        InputError, match=r"^rope: expected .*got 'nope_at_10'\. The metrics compared: "
    ):
        _check_rope_keys({"nope_at_10": 0.01}, ["ndcg_at_10", "p_at_10"])
    _check_rope_keys({"ndcg_at_10": 0.01}, ["ndcg_at_10", "p_at_10"])
    _check_rope_keys("5%", ["ndcg_at_10"])


def _fold_runs(n_folds=4, n_users=20):
    """Two systems over folds; "als" is far above "pop" (0.25), so a rope of the system's mean
    differs from one of the baseline's. Returns the runs and each system's per-fold means."""
    runs = fold_runs([0.25 + 0.01 * s for s in range(n_folds)], n_users=n_users, seed=5)
    means: dict[str, list[float]] = {"pop": [], "als": []}
    for r in runs:
        means[r.params["model.name"]].append(float(np.mean(r.per_user["ndcg_at_10"])))
    return runs, means


def test_a_relative_rope_over_replicates_is_of_the_baselines_mean_over_replicates():
    runs, means = _fold_runs()
    c = rt.compare(runs, baseline="pop", replicate_key="fold", n_bootstrap=0, rope="10%")
    # by hand: each fold's mean over its users, then the mean of those over the folds
    width = 0.10 * abs(sum(means["pop"]) / len(means["pop"]))
    wrong = 0.10 * abs(sum(means["als"]) / len(means["als"]))
    assert abs(width - wrong) > 0.02
    ver = c.verdicts()
    assert ver["rope"].iloc[0] == pytest.approx(width, rel=1e-12)
    rep = c.replicate_tests("ndcg_at_10", n_folds=4, rope="10%")
    assert rep["rope"].iloc[0] == pytest.approx(width, rel=1e-12)
    # a dict per metric is read the same way
    assert c.verdicts({"ndcg_at_10": "10%"})["rope"].iloc[0] == pytest.approx(width, rel=1e-12)
    with pytest.raises(InputError, match=r"'rope' parameter of Comparison.replicate_tests"):
        c.replicate_tests("ndcg_at_10", n_folds=4, rope={"nope_at_10": 0.01})


def _two_runs(seed: int, n: int) -> list:
    """A baseline and another system, random NDCG@5 and P@5 for ``n`` users."""
    import numpy as np

    rng = np.random.default_rng(seed)
    users = np.arange(n)
    return [
        RunData(
            run_id=name,
            name=name,
            per_user=pd.DataFrame(
                {"user_id": users, "ndcg_at_5": rng.random(n), "p_at_5": rng.random(n)}
            ),
        )
        for name in ("base", "other")
    ]


def test_compare_itself_refuses_a_rope_naming_no_metric_compared():
    import recoeval_tracking as rt

    with pytest.raises(rt.InputError, match="ndcg_at_5") as info:
        rt.compare(_two_runs(0, 30), rope={"ndgc_at_5": 0.05}, n_bootstrap=20, n_permutations=20)
    assert "ndgc_at_5" in str(info.value)


def test_the_printed_summary_gives_verdicts_only_for_the_metrics_a_rope_names():
    import recoeval_tracking as rt

    cmp = rt.compare(_two_runs(1, 40), rope={"ndcg_at_5": 0.05}, n_bootstrap=20, n_permutations=20)
    text = str(cmp)
    block = text[text.index("verdicts for the rope") :]
    assert block.startswith("verdicts for the rope ndcg_at_5: 0.05 (")  # not a Python dict
    assert "ndcg_at_5" in block and "p_at_5" not in block
