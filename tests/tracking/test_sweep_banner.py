"""The experiment's description, which the MLflow UI folds to its first line: that line is a
sentence that reads alone (what the experiment holds; once a sweep closed, the newest sweep and
its best job), the rest below it. It lists recent sweeps, each line naming its sweep: the banner
of an earlier version (one "Latest sweep" line) is replaced, a sweep closed again keeps one
line, and the list stops at five sweeps; the rest of the description is kept."""

from __future__ import annotations

from types import SimpleNamespace

from recoeval_tracking.tracking.client import EXPERIMENT_DESCRIPTION
from recoeval_tracking.tracking.views import RECENT_SWEEPS, show_sweep_best


class FakeClient:
    """The three calls :func:`show_sweep_best` makes, on one experiment held in memory."""

    def __init__(self, note: str) -> None:
        self.tags = {"mlflow.note.content": note}
        self.names: dict[str, str] = {}

    def update_run(self, run_id: str, name: str) -> None:
        self.names[run_id] = name

    def get_experiment(self, experiment_id: str):
        return SimpleNamespace(experiment_id=experiment_id, tags=dict(self.tags))

    def set_experiment_tag(self, experiment_id: str, key: str, value: str) -> None:
        self.tags[key] = value


def _parent(sweep_id: str):
    return SimpleNamespace(
        info=SimpleNamespace(run_id=f"run-{sweep_id}", run_name="sweep model", experiment_id="1"),
        data=SimpleNamespace(tags={"recoeval.sweep_id": sweep_id}),
    )


def _close(client: FakeClient, sweep_id: str, value: float) -> None:
    best = f"als: ndcg_at_10 = {value:.4f}"
    show_sweep_best(
        client,
        _parent(sweep_id),
        best,
        "als",
        "ndcg_at_10",
        value,
        f"#/view-{sweep_id}",
        closed=f"time-{sweep_id}",
    )


def test_recent_sweeps_each_named_old_banner_replaced_at_most_five():
    about = "Offline evaluations by recoeval-track."
    client = FakeClient(f"Latest sweep: best x: ndcg_at_10 = 0.1. [Its jobs](#/old).\n\n{about}")
    for i in range(7):
        _close(client, f"s{i}", 0.1 * (i + 1))
    _close(client, "s6", 0.7)  # closed again (a sync after the sweep): still one line
    note = client.tags["mlflow.note.content"]
    head, block, rest = note.split("\n\n")
    assert head == "Newest sweep s6: best als, ndcg_at_10 = 0.7000."
    assert rest == about and "Latest sweep" not in note
    lines = block.splitlines()
    assert lines[0] == RECENT_SWEEPS
    assert lines[1:] == [
        f"- Sweep s{i} (closed time-s{i}): best als: ndcg_at_10 = {0.1 * (i + 1):.4f}. "
        f"[Its jobs side by side, best first](#/view-s{i})."
        for i in (6, 5, 4, 3, 2)
    ]
    assert client.names["run-s0"] == "best als 0.1000 · sweep model"


def _reads_alone(line: str) -> bool:
    """A folded header that says something by itself: one sentence, short enough for one line
    of the UI, no Markdown list, heading or emphasis left open."""
    return (
        line.endswith(".")
        and len(line) <= 120
        and not line.startswith(("- ", "#", "**"))
        and not line.rstrip(".").endswith(":")
    )


def test_the_first_line_reads_alone_before_and_after_a_sweep():
    head, _, rest = EXPERIMENT_DESCRIPTION.partition("\n\n")
    assert _reads_alone(head) and "recoeval-track" in head
    assert rest, "the details go below the first line"
    client = FakeClient(EXPERIMENT_DESCRIPTION)
    _close(client, "3f2a9c1b0d4e", 0.3521)
    first, *others = client.tags["mlflow.note.content"].split("\n\n")
    assert _reads_alone(first) and "3f2a9c1b0d4e" in first and "0.3521" in first
    assert others[-2:] == [head, rest]  # what the experiment holds stays, below the sweeps


def test_the_first_line_is_short_enough_for_the_ui_to_show_whole():
    """The UI (3.17, a 1400-pixel window beside its Assistant panel) shows about 100 characters
    of the folded description and cuts the rest: a study's winner, a baseline with a long name,
    had its interval cut off mid-line. The head names the sweep, the best run and its value;
    the list below keeps the interval and the time."""
    client = FakeClient(EXPERIMENT_DESCRIPTION)
    best = "als f=8 reg=0.01 (baseline): ndcg_at_10 = 0.3373 (95% interval 0.3215 to 0.3532)"
    name = "als f=8 reg=0.01 (baseline)"
    show_sweep_best(
        client, _parent("112d9fdb4cd7"), best, name, "ndcg_at_10", 0.3373, "#/v", "2026-11-28"
    )
    first, recent = client.tags["mlflow.note.content"].split("\n\n")[:2]
    assert (
        first == "Newest sweep 112d9fdb4cd7: best als f=8 reg=0.01 (baseline), ndcg_at_10 = 0.3373."
    )
    assert len(first) <= 100 and "(95% interval 0.3215 to 0.3532)" in recent
    long = "cosine " + " ".join(f"param{i}={i}" for i in range(20))
    show_sweep_best(client, _parent("s2"), "x", long, "ndcg_at_10", 0.25, "#/v", "2026-11-28")
    first = client.tags["mlflow.note.content"].split("\n\n")[0]
    assert len(first) <= 100 and _reads_alone(first)
    assert first.startswith("Newest sweep s2: best cosine param0=0") and first.endswith(
        "\u2026, ndcg_at_10 = 0.2500."
    )
