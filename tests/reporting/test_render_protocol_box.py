"""The report's protocol box says how many configurations of a system failed once: the
protocol line names the failed jobs, so the budgets beside it leave their count out. So does
the sweep parent's description, which shows the same protocol line and budgets."""

from __future__ import annotations

from recoeval_tracking.reporting.render.sections import _protocol_items
from recoeval_tracking.reporting.view import protocol_text
from recoeval_tracking.tracking.sweeps import _add_study, study_tags

_PROTOCOL = (
    "chosen on validation by val NDCG@10 among 6 configurations per system, tested once "
    "(refit on train + validation); failed jobs: cosine 2 of 6 configurations on validation "
    "(not chosen from), als's tested one (no test number)"
)


def _settings() -> dict:
    """A study's settings as the report reads them from the sweep's parent run: the budgets are
    the ``recoeval.budget.<system>`` tags the sweep wrote."""
    systems = {
        "cosine": {"configurations": 6, "fit_seconds": 0.6, "jobs": 6, "failed": 2},
        "als": {"configurations": 6, "fit_seconds": 1.7, "jobs": 6, "test_failed": 1},
        "popularity": {"configurations": 2, "fit_seconds": 0.0, "jobs": 2},
    }
    tags = study_tags({"protocol": _PROTOCOL, "equal_budgets": False, "systems": systems})
    prefix = "recoeval.budget."
    budgets = {k[len(prefix) :]: v for k, v in tags.items() if k.startswith(prefix)}
    return {"protocol": _PROTOCOL, "budgets": budgets, "equal_budgets": False}


def test_the_protocol_box_counts_the_failed_configurations_once():
    text = protocol_text(_settings())
    assert text.count("2 of 6") == 1  # "failed jobs: cosine 2 of 6 configurations ..."
    assert text.count("failed") == 1
    assert "cosine 6 configurations, 0.6 s of fits" in text
    assert "als 6 configurations, 1.7 s of fits" in text
    assert "als's tested one (no test number)" in text
    ((kind, _, shown),) = _protocol_items(_settings())
    assert kind == "warning"  # unequal budgets: the box is a warning, led by saying so
    assert shown.startswith("Unequal budgets: ") and shown.count("2 of 6") == 1
    assert shown.endswith(text.replace("Unequal budgets:", "Budgets:"))


def test_a_protocol_line_without_the_failed_jobs_leaves_the_budgets_whole():
    """A sweep recorded before its protocol line named the failed jobs: the budget's count is
    then the only one, and stays."""
    budget = "3 configurations, 1 of 3 failed on validation, 0.2 s of fits"
    settings = {"protocol": "chosen on validation", "budgets": {"knn": budget}}
    assert protocol_text(settings) == f"Protocol: chosen on validation. Budgets: knn {budget}."


def test_the_parent_description_counts_a_studys_failed_jobs_once():
    systems = {"cosine": {"configurations": 6, "fit_seconds": 0.6, "jobs": 6, "failed": 2}}
    protocol = "chosen on validation; failed jobs: cosine 2 of 6 configurations on validation"
    study = {"protocol": protocol, "equal_budgets": False, "systems": systems}
    tags = {"mlflow.note.content": "Best.\n\n[The jobs of this sweep](#)"}
    _add_study(tags, study)
    note = tags["mlflow.note.content"]
    assert note.count("2 of 6") == 1
    assert " 6 configurations, 0.6 s of fits\n" in note
    # the tag keeps the whole budget, counts included (read by the report and by scripts)
    assert tags["recoeval.budget.cosine"] == study_tags(study)["recoeval.budget.cosine"]
    assert "2 of 6 failed on validation" in tags["recoeval.budget.cosine"]
