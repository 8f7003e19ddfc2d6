"""Opening a new SQLite store prints none of MLflow's INFO lines about its schema ("Creating
initial MLflow database tables...", alembic's steps) on the user's terminal, while MLflow's
warnings and this package's own lines still show. Fast: MLflow's client is replaced by one that
logs as the schema's creation does, so no schema is made."""

from __future__ import annotations

import logging

import mlflow.tracking  # before the fixture sets the levels: importing MLflow sets its own
import pytest

from recoeval_tracking.tracking import client as client_mod


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.name} {record.levelname} {record.getMessage()}")


@pytest.fixture
def heard():
    """A handler on each logger that speaks while a store is created, and on this package's."""
    names = ["mlflow.store.db.utils", "alembic.runtime.migration", "recoeval_tracking.x"]
    collect = _Collect()
    loggers = [logging.getLogger(n) for n in names]
    saved = [(lg.level, lg.propagate) for lg in loggers]
    for lg in loggers:
        lg.addHandler(collect)
        lg.setLevel(logging.NOTSET)
    logging.getLogger("mlflow").setLevel(logging.INFO)  # as MLflow configures itself
    logging.getLogger("alembic").setLevel(logging.INFO)
    logging.getLogger("recoeval_tracking").setLevel(logging.INFO)
    yield collect.messages
    for lg, (level, propagate) in zip(loggers, saved, strict=True):
        lg.removeHandler(collect)
        lg.setLevel(level)
        lg.propagate = propagate
    for name in ("mlflow", "alembic", "recoeval_tracking"):
        logging.getLogger(name).setLevel(logging.NOTSET)


class _CreatingClient:
    """Speaks as MLflow 3 and alembic do when the store's schema is created."""

    def __init__(self, tracking_uri: str) -> None:
        self.uri = tracking_uri

    def search_experiments(self, max_results: int = 1) -> list:
        logging.getLogger("mlflow.store.db.utils").info("Creating initial MLflow database tables")
        logging.getLogger("alembic.runtime.migration").info("Context impl SQLiteImpl.")
        logging.getLogger("mlflow.store.db.utils").warning("a warning of MLflow's")
        logging.getLogger("recoeval_tracking.x").info("a line of ours")
        return []


def test_a_new_store_prints_no_schema_lines_but_keeps_warnings_and_ours(
    tmp_path, monkeypatch, heard
):
    monkeypatch.setattr(mlflow.tracking, "MlflowClient", _CreatingClient)
    uri = f"sqlite:///{tmp_path / 'new' / 'mlflow.db'}"
    client_mod._ready_stores.discard(uri)
    client_mod._client(uri)
    assert heard == [
        "mlflow.store.db.utils WARNING a warning of MLflow's",
        "recoeval_tracking.x INFO a line of ours",
    ]
    # the levels are back once the store is open: the loggers are MLflow's, not ours
    assert logging.getLogger("mlflow.store.db.utils").getEffectiveLevel() == logging.INFO
    assert logging.getLogger("alembic").level == logging.INFO
