"""The protocol line of a comparison states how each compared run was evaluated, whatever
surface read the runs: ``rt.compare`` given MLflow run ids reads the sweep's own line from its
parent run (as the report command does), a notebook's ``Results`` is said to be what its split
fingerprint shows, and a run that records nothing is named as such, never counted as tested
on test without a validation part.

The app's jobs run on a small synthetic split with a validation part (tested once after it);
they are logged into a SQLite store under the test's folder as children of a sweep parent
whose tags are what a sweeper writes. The expected lines are the parent's tag, written here,
and the part each run was evaluated on, known from how it was made.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

import recoeval_tracking as rt
from recoeval_tracking.app.pipeline import run_job
from recoeval_tracking.reporting.report import study_protocol
from recoeval_tracking.reporting.runs import RunData

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ for the shared helpers
from app.test_pipeline import tiny_config  # noqa: E402
from report_runs import synthetic_run  # noqa: E402

pytestmark = pytest.mark.slow  # two jobs logged to MLflow, once for the module

N_USERS, N_ITEMS, VALIDATION = 120, 60, 0.2
#: The sweep parent's protocol line, as the sweeper writes it (the input read back).
SWEEP_LINE = (
    "chosen on validation by val NDCG@10 among 2 configurations per system, tested once "
    "(refit on train + validation)"
)
NO_VALIDATION = "no validation part"


def _job_config(model: str) -> dict:
    cfg = tiny_config(
        model={"name": model},
        metrics={"names": ["ndcg"], "profile": None, "k": 10, "cumulative": False},
    )
    cfg["dataset"] = {**cfg["dataset"], "n_users": N_USERS, "n_items": N_ITEMS}
    cfg["split"] = {**cfg["split"], "validation_fraction": VALIDATION}
    cfg["plots"] = False
    return cfg


def _notebook_results(validation: float | None = VALIDATION):
    """The popularity model evaluated in Python on the app's split (``split.test_split()``)."""
    X = rt.make_synthetic(n_users=N_USERS, n_items=N_ITEMS, seed=0)
    more = {"validation_fraction": validation} if validation else {}
    split = rt.make_split("random", X, seed=0, min_train=1, **more)
    model = rt.make_model("popularity").fit(split.test_split().train.matrix)
    return rt.evaluate(split, scores=model.score_source(), metrics=["ndcg"], k=10)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, migrated_db):
    """Two jobs tested once after a validation part, logged as the children of a sweep."""
    from recoeval_tracking.tracking.runs import log_job_dir
    from recoeval_tracking.tracking.sweeps import create_sweep_parent

    root = tmp_path_factory.mktemp("protocol")
    shutil.copyfile(migrated_db, root / "mlflow.db")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    parent = create_sweep_parent(
        tracking_uri=uri,
        tags={
            "recoeval.protocol": SWEEP_LINE,
            "recoeval.equal_budgets": "true",
            "recoeval.budget.popularity": "2 configurations, 0.4 s of fits",
            "recoeval.budget.item_knn": "2 configurations, 0.9 s of fits",
        },
    )
    runs = {}
    for model in ("popularity", "item_knn"):
        run_job(_job_config(model), root / model, echo=False)
        runs[f"app {model}"] = log_job_dir(
            root / model,
            tracking_uri=uri,
            parent_run_id=parent.run_id,
            sweep_id=parent.sweep_id,
        )
    return uri, parent, runs, root


def test_job_folders_beside_a_result_that_records_nothing_name_it(sweep):
    """Job folders tested after a validation part, beside a run without any record: the line
    says what each is, and never that they had no validation part."""
    _, _, _, root = sweep
    folders = [RunData.from_job_dir(root / m, name=f"app {m}") for m in ("popularity",)]
    assert folders[0].study["protocol"]["validation"] is True
    bare = synthetic_run("mine", {"ndcg_at_10": 0.3}, n_users=10)
    line = study_protocol([*folders, bare])["protocol"]
    assert NO_VALIDATION not in line
    assert "app popularity: evaluated once on test after a validation part" in line
    assert "mine: its protocol is not recorded" in line
    # the folders alone keep their one sentence; a run alone that records nothing: no line
    alone = study_protocol(folders)["protocol"]
    assert alone.startswith("each run evaluated once on test after a validation part")
    assert "protocol" not in study_protocol([bare])


def test_compare_of_mlflow_runs_and_a_notebook_states_the_sweeps_protocol(sweep):
    uri, _, runs, _ = sweep
    cmp = rt.compare({**runs, "notebook": _notebook_results()}, tracking_uri=uri)
    line = cmp.settings["protocol"]
    assert line.startswith(SWEEP_LINE)
    assert NO_VALIDATION not in line
    # the notebook's result shares the app's tested part: it was tested after validation too
    assert "outside the sweep: notebook: evaluated on test after a validation part" in line
    assert "how it was chosen is not recorded" in line
    assert cmp.settings["budgets"]["item_knn"] == "2 configurations, 0.9 s of fits"
    assert f"protocol: {SWEEP_LINE}" in str(cmp)  # the printed comparison states it too
    page = cmp.to_markdown().replace("**", "").replace("\\", "")  # bold and escapes aside
    assert f"Protocol: {SWEEP_LINE}" in page and NO_VALIDATION not in page


def test_a_notebook_result_of_another_part_is_not_recorded(sweep):
    """Without a validation part its test part is another split: nothing says how it was
    made (compared anyway, as the mismatch allows)."""
    uri, _, runs, _ = sweep
    cmp = rt.compare(
        {**runs, "notebook": _notebook_results(None)}, tracking_uri=uri, allow_mismatch=True
    )
    line = cmp.settings["protocol"]
    assert line.startswith(SWEEP_LINE) and NO_VALIDATION not in line
    assert line.endswith("outside the sweep: notebook: its protocol is not recorded")


def test_the_report_command_reads_the_same_record(sweep, tmp_path):
    from recoeval_tracking.app.report import load_runs

    uri, parent, _, _ = sweep
    cfg = {"select": {"sweep_id": parent.sweep_id}, "tracking": {"uri": uri}}
    read, _ = load_runs(cfg, tmp_path)
    assert len(read) == 2
    for run in read:
        assert run.study["sweep"]["protocol"] == SWEEP_LINE
        assert run.study["sweep"]["budgets"]["popularity"] == "2 configurations, 0.4 s of fits"
