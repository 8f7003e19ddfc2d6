"""How a sweep's parent run closes. A sweep some of whose jobs failed: its sweeper ran every
job, chose among those that ran and raised once they had (the command exits with an error
status), so the parent run closes as FINISHED, saying how many jobs failed and which; a sweep
that was interrupted, crashed, or whose every job failed keeps its status. The parent shows who
ran it and the command, as a job's run does, and every address of it opens the MLflow UI on
its training runs."""

from __future__ import annotations

import pytest

from recoeval_tracking.tracking.sweeps import note_sweep_outcome, write_sweep_record

_FAILED = ["#0 (model.shrink=0 model.blend=0)", "#1 (model.shrink=0 model.blend=0.3)"]


def _sweep(store_uri, tmp_path, experiment):
    """A tracked sweep's parent with its record in ``tmp_path``, and two finished children."""
    from mlflow import MlflowClient

    from recoeval_tracking.tracking import create_sweep_parent

    parent = create_sweep_parent(
        tracking_uri=store_uri,
        experiment=experiment,
        tags={"recoeval.sweep_dir": str(tmp_path)},
    )
    write_sweep_record(tmp_path, {"sweep_id": parent.sweep_id, "parent_run_id": parent.run_id})
    client = MlflowClient(store_uri)
    # MLflow 3.x UIs before the workflow switch open such an experiment on its training runs
    kind = client.get_experiment(parent.experiment_id).tags["mlflow.experimentKind"]
    assert kind == "custom_model_development"
    for name, value in (("a", 0.3), ("b", 0.5)):
        run = client.create_run(
            parent.experiment_id,
            run_name=name,
            tags={
                "mlflow.parentRunId": parent.run_id,
                "recoeval.sweep_id": parent.sweep_id,
                "recoeval.job_uid": name,
                "recoeval.metrics": "ndcg_at_4",
            },
        )
        client.log_metric(run.info.run_id, "ndcg_at_4", value)
        client.set_terminated(run.info.run_id)
    return parent, client


def test_a_sweep_that_ran_every_job_closes_finished_naming_its_failed_jobs(
    store_uri, tmp_path, monkeypatch
):
    from recoeval_tracking.tracking import finish_sweep_parent

    monkeypatch.chdir(tmp_path)
    parent, client = _sweep(store_uri, tmp_path, "some-failed")
    note_sweep_outcome(tmp_path, 4, _FAILED)
    # the sweeper raised once every job had run: the app's exit handler closes it as FAILED
    finish_sweep_parent(parent.run_id, "FAILED", tracking_uri=store_uri)
    run = client.get_run(parent.run_id)
    assert run.info.status == "FINISHED"
    outcome = f"finished, 2 of 4 jobs failed: {', '.join(_FAILED)}"
    assert run.data.tags["recoeval.sweep_outcome"] == outcome
    note = run.data.tags["mlflow.note.content"]
    assert note.split("\n\n")[0].endswith(": **finished, 2 of 4 jobs failed (#0, #1)**.")
    assert f"**Failed jobs:** {', '.join(_FAILED)}. Each said why" in note
    assert run.data.metrics["sweep_jobs_failed"] == 2.0  # failed jobs log no run: recorded


@pytest.mark.parametrize(
    ("jobs", "status", "closed"),
    [
        (2, "FAILED", "FAILED"),  # every job failed: nothing was chosen
        (4, "KILLED", "KILLED"),  # interrupted
    ],
)
def test_a_sweep_that_chose_nothing_or_was_stopped_keeps_its_status(
    store_uri, tmp_path, monkeypatch, jobs, status, closed
):
    from recoeval_tracking.tracking import finish_sweep_parent

    monkeypatch.chdir(tmp_path)
    parent, client = _sweep(store_uri, tmp_path, f"kept-{status}")
    note_sweep_outcome(tmp_path, jobs, _FAILED)
    finish_sweep_parent(parent.run_id, status, tracking_uri=store_uri)
    run = client.get_run(parent.run_id)
    assert run.info.status == closed
    assert run.data.tags["recoeval.sweep_outcome"].startswith(f"{closed.lower()}, 2 of {jobs}")


def test_a_sweep_that_crashed_before_its_jobs_had_run_stays_failed(
    store_uri, tmp_path, monkeypatch
):
    from recoeval_tracking.tracking import finish_sweep_parent

    monkeypatch.chdir(tmp_path)
    parent, client = _sweep(store_uri, tmp_path, "crashed")  # no outcome recorded
    finish_sweep_parent(parent.run_id, "FAILED", tracking_uri=store_uri)
    run = client.get_run(parent.run_id)
    assert run.info.status == "FAILED"
    assert "recoeval.sweep_outcome" not in run.data.tags


def test_a_sweep_parent_names_who_ran_it_and_the_command(store_uri, tmp_path, monkeypatch):
    """The MLflow UI's "Created by" and "Source" of the parent, as on each job's run (MLflow's
    context tags, which ``MlflowClient.create_run`` does not set by itself)."""
    monkeypatch.chdir(tmp_path)
    parent, client = _sweep(store_uri, tmp_path, "context")
    tags = client.get_run(parent.run_id).data.tags
    assert tags.get("mlflow.user") and tags.get("mlflow.source.name")


def test_every_address_of_a_closed_sweep_opens_the_uis_training_runs(
    store_uri, tmp_path, monkeypatch
):
    """MLflow 3.17's UI opens an experiment on its GenAI pages unless the address says
    ``workflowType=machine_learning`` (it no longer reads the experiment's
    ``mlflow.experimentKind`` tag, still set for earlier UIs): every address the sweep prints
    and writes into its parent's description carries it."""
    import re

    from recoeval_tracking.tracking import finish_sweep_parent
    from recoeval_tracking.tracking.sweeps import sweep_end_text

    monkeypatch.chdir(tmp_path)
    parent, client = _sweep(store_uri, tmp_path, "ui-addresses")
    finish_sweep_parent(parent.run_id, tracking_uri=store_uri)
    printed = re.findall(r"http://\S+", sweep_end_text(parent.run_id, store_uri))
    note = client.get_run(parent.run_id).data.tags["mlflow.note.content"]
    written = re.findall(r"\]\((#/experiments/[^)]+)\)", note)
    # the jobs side by side (and as charts), then each run of the leaderboard
    runs = [a for a in written if re.fullmatch(r"#/experiments/\d+/runs/[0-9a-f]{32}\?.*", a)]
    assert len(printed) == 2 and len(written) - len(runs) == 2 and runs
    for address in printed + written:
        assert "workflowType=machine_learning" in address, address
