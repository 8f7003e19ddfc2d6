"""Params and run names for MLflow: secrets dropped, tracking keys left out (no store needed)."""

from __future__ import annotations

from recoeval_tracking.jobdir.redact import REDACTED
from recoeval_tracking.tracking.client import params_from_config, run_name_from_overrides


def test_params_from_config_drops_secrets():
    got = params_from_config(
        {"tracking": {"uri": "http://u:pw@h", "password": "x"}, "metrics": {"k": 10}},
        {"db": {"api_key": "y"}, "seed": 3},
    )
    assert got == {"tracking.uri": f"http://u:{REDACTED}@h", "metrics.k": "10", "seed": "3"}


def test_run_name_leaves_tracking_keys_and_secrets_out():
    name = run_name_from_overrides(
        [
            "model=als",
            "model.factors=64",
            "tracking.uri=http://x",
            "hydra.launcher=joblib",
            "db.password=abc",
        ]
    )
    assert name == "model=als,model.factors=64"
    assert run_name_from_overrides([]) is None
    assert run_name_from_overrides(["tracking.experiment=x"]) is None


def test_secrets_as_hydra_escapes_them_never_reach_names_params_or_tags():
    from recoeval_tracking.tracking.client import _clean_tags

    name = run_name_from_overrides([r"db.url=postgresql\://bob\:PW@db\:5432/x", "seed=1"])
    assert name == rf"db.url=postgresql\://bob\:{REDACTED}@db\:5432/x,seed=1"
    got = params_from_config({"data": {"url": "https://h/x?token=PW&n=1"}})
    assert got == {"data.url": f"https://h/x?token={REDACTED}&n=1"}
    tags = _clean_tags({"recoeval.overrides": r"+db.password=PW x=http\://u\:PW@h"})
    assert "PW" not in tags["recoeval.overrides"]


def test_preload_opens_a_new_sqlite_store_and_contacts_no_server(tmp_path, monkeypatch):
    import sqlite3

    from recoeval_tracking.tracking import client, pending

    db = tmp_path / "sub" / "mlflow.db"
    pending.preload(f"sqlite:///{db}")
    with sqlite3.connect(db) as con:  # the schema MLflow creates on a store's first use
        tables = {r[0] for r in con.execute("select name from sqlite_master where type='table'")}
    assert {"experiments", "runs", "metrics"} <= tables
    assert f"sqlite:///{db}" in client._ready_stores  # the upload does not open it again

    opened = []
    monkeypatch.setattr(pending, "_client", opened.append)
    pending.preload("http://127.0.0.1:9")  # a server: imported only, never contacted
    assert opened == []
