"""The experiment's description lists recent sweeps, each line naming its sweep: the banner of an
earlier version (one "Latest sweep" line) is replaced, a sweep closed again keeps one line, and
the list stops at five sweeps; the rest of the description is kept."""

from __future__ import annotations

from types import SimpleNamespace

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
    block, rest = note.split("\n\n")
    assert rest == about and "Latest sweep" not in note
    lines = block.splitlines()
    assert lines[0] == RECENT_SWEEPS
    assert lines[1:] == [
        f"- Sweep s{i} (closed time-s{i}): best als: ndcg_at_10 = {0.1 * (i + 1):.4f}. "
        f"[Its jobs side by side, best first](#/view-s{i})."
        for i in (6, 5, 4, 3, 2)
    ]
    assert client.names["run-s0"] == "best als 0.1000 · sweep model"
