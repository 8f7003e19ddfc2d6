"""One comparability rule for rt.compare and the report command.

Runs are compared when their data and split agree (Results objects, which record neither, by
their evaluated users), or when the caller allows it; a metric is compared over the runs that
define it alike whatever the score source (top-K metrics from ranked lists and from scores are
the same metric); every left-out metric or system is named with its reason; unknown names in
options are refused with the known ones; labels= names the systems on every surface.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
from _rundata import evaluate_model
from report_runs import synthetic_run

import recoeval_tracking as rt
from recoeval_tracking import InputError
from recoeval_tracking.app.report import run_report
from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.metrics.evaluate import metric_fingerprints
from recoeval_tracking.reporting.render import render_markdown
from recoeval_tracking.reporting.render.figures import comparison_plot
from recoeval_tracking.reporting.report import build_report

FAST = {"n_bootstrap": 20, "n_permutations": 20}


def _split(n_users: int, seed: int = 0):
    data = rt.make_synthetic(n_users=n_users, n_items=50, seed=seed)
    return rt.make_split("random", data, test_fraction=0.3, seed=0)


def _evaluate(split, model: str, k: int = 5, metrics=("ndcg", "p")):
    return evaluate_model(split, model, metrics=list(metrics), k=k)


@pytest.fixture(scope="module")
def scored_and_listed():
    """Popularity scored, and the same recommendations as ranked top-10 lists, both under the
    standard set (which holds whole-ranking metrics that lists cannot give)."""
    split = _split(120)
    scores = rt.make_model("popularity").fit(split.train.matrix).score_source()
    scored = rt.evaluate(
        split.train, split.test, scores=scores, metrics="standard", k=10, return_topk=True
    )
    listed = rt.evaluate(split.train, split.test, ranked=scored.topk, metrics="standard", k=10)
    return split, scored, listed


def test_a_top_k_metric_from_lists_and_from_scores_has_one_fingerprint(scored_and_listed):
    _, scored, listed = scored_and_listed
    whole = set(listed.definitions["left_out"])  # what the lists could not give
    assert {"roc_auc", "pr_auc", "mpr"} <= whole
    cols = listed.metric_columns
    fa = metric_fingerprints(scored.definitions, cols)
    fb = metric_fingerprints(listed.definitions, cols)
    assert set(fb) == set(cols) and fa == fb
    # the values themselves: the same lists give the same per-user numbers
    pd.testing.assert_frame_equal(scored.per_user[cols], listed.per_user[cols])


def test_compare_puts_lists_beside_scores_and_names_what_lists_lack(scored_and_listed):
    _, scored, listed = scored_and_listed
    cmp = rt.compare({"scores": scored, "lists": listed}, baseline="scores", **FAST)
    s = cmp.summary().set_index(["system", "metric"])
    for col in listed.metric_columns:
        assert s.loc[("lists", col), "mean"] == pytest.approx(scored.means[col], rel=1e-12)
        assert s.loc[("lists", col), "delta"] == 0.0
    left = cmp.left_out
    only_scores = [c for c in scored.metric_columns if c not in listed.metric_columns]
    assert sorted(left["metric"]) == sorted(only_scores) and set(left["system"]) == {"lists"}
    assert set(left["reason"]) == {f"no {c} column" for c in only_scores}
    assert "defined differently" not in str(cmp)


def test_the_report_compares_a_ranked_file_run_with_scored_runs(scored_and_listed, tmp_path):
    """Job folders as the app writes them (definitions.json, dataset.json with the data and
    split fingerprints): the lists' NDCG@10 is in the summary, not n/a."""
    split, scored, listed = scored_and_listed
    ds = {"data_fingerprint": "d" * 16, "split_fingerprint": split.fingerprint}
    dirs = [
        write_job_dir(res, tmp_path / name, dataset=ds, plots=False)
        for name, res in (("popularity", scored), ("ranked_file", listed))
    ]
    cfg = {
        "select": {"job_dirs": [str(d) for d in dirs]},
        "baseline": "popularity",
        "metrics": ["ndcg_at_10", "p_at_10", "roc_auc"],
        "slices": [],
        "output": {"dir": str(tmp_path / "out"), "markdown": "report.md", "log_to_mlflow": False},
        **FAST,
    }
    out = run_report(cfg, tmp_path)
    rep = out["report"]
    assert "n/a" not in list(rep.summary["run"])
    ndcg = rep.summary[rep.summary["metric"] == "ndcg_at_10"].set_index("run")["mean"]
    assert ndcg["ranked_file"] == pytest.approx(scored.means["ndcg_at_10"], rel=1e-12)
    page = (tmp_path / "out" / "report.md").read_text()
    summary = page.split("Summary")[1].split("\n\n")[1]
    row = next(line for line in summary.splitlines() if line.startswith("| ranked")).split("|")
    assert "n/a" not in row[2] and "n/a" not in row[3]  # ndcg_at_10 and p_at_10
    assert "n/a" in row[4]  # roc_auc: a whole-ranking metric, not in the lists
    assert list(rep.left_out["reason"]) == ["no roc_auc column"]
    assert "no roc\\_auc column" in page


def test_results_of_two_datasets_are_refused_naming_both(tmp_path):
    a = _evaluate(_split(60, seed=0), "popularity")
    b = _evaluate(_split(50, seed=1), "random")
    with pytest.raises(InputError) as err:
        rt.compare({"a": a, "b": b}, **FAST)
    text = str(err.value)
    fps = re.findall(
        r"users fingerprint ([0-9a-f]{16}) \(60 users: a\) vs ([0-9a-f]{16}) "
        r"\(50 users: b\)",
        text,
    )
    assert len(fps) == 1 and fps[0][0] != fps[0][1]
    assert "allow_mismatch=True" in text and "The runs given to compare" in text
    cmp = rt.compare({"a": a, "b": b}, allow_mismatch=True, **FAST)
    assert cmp.report.mismatches and "NOT COMPARABLE" in str(cmp)
    # two models on one split are one dataset's users
    same = _split(60)
    rt.compare({"a": _evaluate(same, "popularity"), "b": _evaluate(same, "random")}, **FAST)


def test_runs_at_different_k_name_the_reason_instead_of_nan_deltas():
    split = _split(80)
    runs = {"k5": _evaluate(split, "popularity", k=5), "k10": _evaluate(split, "random", k=10)}
    cmp = rt.compare(runs, baseline="k5", **FAST)
    assert cmp.report.comparisons.empty  # no row of NaN deltas
    left = cmp.left_out.set_index(["metric", "system"])
    assert left.loc[("ndcg_at_10", "k5"), "reason"] == "evaluated at k=5, not at k=10"
    assert left.loc[("ndcg_at_5", "k10"), "reason"] == "evaluated at k=10, not at k=5"
    assert left.loc[("ndcg_at_10", "k10"), "left_out"] == "test"
    assert "the baseline k5 is left out of ndcg_at_10" in left.loc[("ndcg_at_10", "k10"), "reason"]
    text = str(cmp)
    assert "p_at_10, ndcg_at_10 (only k10 has them; evaluated at k=5, not at k=10)" in text
    assert "p_at_5, ndcg_at_5 (only k5 has them; evaluated at k=10, not at k=5)" in text
    assert "ndcg_at_5 is in k5 only, so not compared (k10: evaluated at k=10)" in (cmp.report.notes)


def test_a_metric_missing_in_one_run_is_named_in_the_object_the_text_and_the_page():
    split = _split(80)
    runs = {
        "pop": _evaluate(split, "popularity"),
        "rnd": _evaluate(split, "random", metrics=("ndcg",)),
    }
    cmp = rt.compare(runs, **FAST)
    assert cmp.left_out.to_dict("records") == [
        {
            "metric": "p_at_5",
            "system": "rnd",
            "run_id": "rnd",
            "left_out": "values",
            "reason": "no p_at_5 column",
        }
    ]
    assert "not compared: p_at_5 (only pop has it; no p_at_5 column)" in str(cmp)
    page = render_markdown(cmp)
    assert "Left out of the comparison" in page and "no p\\_at\\_5 column" in page


def test_a_metric_defined_differently_names_both_definitions():
    runs = [synthetic_run(n, {"p_at_10": 0.2}, seed=i) for i, n in enumerate("ab")]
    runs[0].metric_fingerprints = {"p_at_10": "p1"}
    runs[1].metric_fingerprints = {"p_at_10": "p2"}
    rep = build_report(runs, "a", **FAST)
    assert rep.left_out["reason"].tolist() == [
        "defined differently from a: definition fingerprint p2 vs p1"
    ]


@pytest.mark.parametrize(
    "option, value, known",
    [
        ("lower_is_better", ["zzz"], "ndcg_at_10"),
        ("group_by", ["model.nme"], "model.name"),
        ("metrics", ["ndcg_at_7"], "ndcg_at_10"),
        ("baseline", "nobody", "pop"),
        ("labels", {"nobody": "X"}, "pop"),
    ],
)
def test_unknown_names_in_options_are_refused_with_the_known_ones(option, value, known):
    params = [{"model.name": "pop"}, {"model.name": "als"}]
    runs = [
        synthetic_run(n, {"ndcg_at_10": 0.3}, seed=i, params=p)
        for i, (n, p) in enumerate(zip(("pop", "als"), params))
    ]
    with pytest.raises(InputError, match=f"'{option}' parameter of compare") as err:
        rt.compare(runs, **{option: value}, **FAST)
    assert known in str(err.value)
    with pytest.raises(InputError, match=f"'{option}' parameter of build_report"):
        build_report(runs, **{option: value}, **FAST)


def _two_job_dirs(tmp_path) -> list[str]:
    """Job folders of popularity and random on one split of 60 users."""
    split = _split(60)
    return [
        str(write_job_dir(_evaluate(split, m), tmp_path / m, plots=False))
        for m in ("popularity", "random")
    ]


def test_the_report_command_refuses_an_unknown_lower_is_better(tmp_path):
    cfg = {
        "select": {"job_dirs": _two_job_dirs(tmp_path)},
        "lower_is_better": ["ndgc"],
        "slices": [],
        "output": {"dir": str(tmp_path / "out"), "log_to_mlflow": False},
        **FAST,
    }
    with pytest.raises(InputError, match="'lower_is_better'.*'ndgc'.*ndcg_at_5"):
        run_report(cfg, tmp_path)


def test_group_by_without_replicates_is_named_not_silently_ignored():
    params = [{"model.name": "pop"}, {"model.name": "als"}]
    runs = [
        synthetic_run(n, {"ndcg_at_10": 0.3}, seed=i, params=p)
        for i, (n, p) in enumerate(zip(("pop", "als"), params))
    ]
    cmp = rt.compare(runs, group_by=["model.name"], replicate_key=None, **FAST)
    assert "note: group_by (model.name) not used" in str(cmp)
    assert any(n.startswith("group_by (model.name) not used") for n in cmp.report.notes)


# ---------------------------------------------------------------------------------------------
# labels=
# ---------------------------------------------------------------------------------------------


def test_labels_reach_the_summary_the_page_the_latex_table_and_the_plot():
    split = _split(80)
    runs = {"popularity": _evaluate(split, "popularity"), "random": _evaluate(split, "random")}
    labels = {"popularity": "Pop. (ours)", "random": "Random"}
    cmp = rt.compare(runs, baseline="random", labels=labels, **FAST)
    assert cmp.systems == ["Random", "Pop. (ours)"] and cmp.baseline == "Random"
    assert set(cmp.summary()["system"]) == {"Random", "Pop. (ours)"}
    assert "Pop. (ours)" in cmp.to_latex() and "Random (baseline)" in cmp.to_latex()
    page = render_markdown(cmp)
    summary = page.split("Summary")[1].split("\n\n")[1]
    assert [line.split(" | ")[0] for line in summary.splitlines()[2:]] == [
        "| Random \\(baseline\\)",
        "| Pop. \\(ours\\)",
    ]
    assert "| popularity | Pop. \\(ours\\) |" in page  # the inputs keep the run's own id
    fig = comparison_plot(cmp.report, "ndcg_at_5")
    ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert ticks == ["Random", "Pop. (ours)"]


def test_labels_that_collide_are_refused():
    split = _split(60)
    runs = {"a": _evaluate(split, "popularity"), "b": _evaluate(split, "random")}
    with pytest.raises(InputError, match="'labels'.*two runs the display name 'b'"):
        rt.compare(runs, labels={"a": "b"}, **FAST)


def test_the_report_config_takes_labels(tmp_path):
    cfg = {
        "select": {"job_dirs": _two_job_dirs(tmp_path)},
        "labels": {"popularity": "Most popular"},
        "slices": [],
        "output": {
            "dir": str(tmp_path / "out"),
            "markdown": "report.md",
            "latex": "report.tex",
            "log_to_mlflow": False,
        },
        **FAST,
    }
    out = run_report(cfg, tmp_path)
    assert [r.name for r in out["report"].runs] == ["Most popular", "random"]
    assert "Most popular" in (tmp_path / "out" / "report.md").read_text()
    assert "Most popular (baseline)" in (tmp_path / "out" / "report.tex").read_text()
    figures = list((tmp_path / "out").glob("report_figures/per_user_*.png"))
    assert figures  # drawn from the same runs, so with the same names
    cfg["labels"] = {"knn": "kNN"}
    with pytest.raises(InputError, match="'labels'.*'knn'.*popularity"):
        run_report(cfg, tmp_path)


def test_the_report_command_takes_labels_on_its_command_line(tmp_path):
    """A whole mapping on the command line, keys with spaces (a run's name) included, and
    confidence=0.9 in the page's headers."""
    from _report_process import run_report_command

    dirs = _two_job_dirs(tmp_path)
    proc = run_report_command(
        [
            f"select.job_dirs=[{','.join(dirs)}]",
            f"output.dir={tmp_path / 'out'}",
            "output.log_to_mlflow=false",
            "n_bootstrap=20",
            "n_permutations=20",
            "slices=[]",
            "confidence=0.9",
            "labels={popularity: Most popular, random: 2024}",
        ],
        tmp_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "out" / "report.md").read_text()
    assert "| Most popular \\(baseline\\) |" in page and "| 2024 |" in page
    assert "Summary: mean [90% t CI]" in page and "95%" not in page


def test_folders_recorded_under_the_old_rule_compare_alike(scored_and_listed, tmp_path):
    """A ranked-list folder whose recorded per-metric prints still held what the lists left out
    (written before the rule changed): its prints are derived again from its definitions."""
    import json

    from recoeval_tracking.reporting.runs import RunData

    _, scored, listed = scored_and_listed
    job = write_job_dir(listed, tmp_path / "lists", plots=False)
    defs = json.loads((job / "definitions.json").read_text())
    defs["metric_fingerprints"] = {c: "0" * 16 for c in defs["metric_fingerprints"]}
    (job / "definitions.json").write_text(json.dumps(defs))
    got = RunData.from_job_dir(job).metric_fingerprints
    want = metric_fingerprints(scored.definitions, listed.metric_columns)
    assert {c: got[c] for c in want} == want
