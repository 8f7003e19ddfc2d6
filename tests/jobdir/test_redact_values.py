"""Secrets recognised by their value as well as their key: a passphrase, a personal access
token (``pat``), an HTTP ``Bearer`` credential, tokens of well-known shapes, the value of a
secret environment variable, and whatever a config took from the environment
(``${oc.env:VAR}``) under an innocent key. One rule (``jobdir/redact.py``) for every writer:
the job folder's ``config.yaml``, ``overrides.yaml``, ``dataset.json``, and MLflow params."""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

import pytest
import yaml

from recoeval_tracking.jobdir import write_job_dir
from recoeval_tracking.jobdir.redact import (
    REDACTED,
    add_secret_values,
    env_interpolated_values,
    is_secret_key,
    scrub_mapping,
    scrub_overrides,
    scrub_text,
)
from recoeval_tracking.tracking.client import params_from_config

_spec = importlib.util.spec_from_file_location(
    "results_factory", Path(__file__).resolve().parents[1] / "tracking" / "results_factory.py"
)
_factory = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_factory)
make_results = _factory.make_results


pytestmark = pytest.mark.usefixtures("fresh_secrets")


@pytest.mark.parametrize(
    "key",
    [
        "db.passphrase",
        "gpg_passphrase",
        "github.pat",
        "PAT",
        "http.authorization",
        "auth.bearer",
        "keyPassphrase",
    ],
)
def test_more_credential_names_are_secret_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize("key", ["model.path", "pattern", "split.patience", "data.paths"])
def test_words_that_only_look_alike_are_not(key):
    assert not is_secret_key(key)


@pytest.mark.parametrize(
    "text, secret",
    [
        ("Authorization: Bearer eyJhbGciOi.abc123", "eyJhbGciOi.abc123"),
        ("header=bearer abcDEF123456", "abcDEF123456"),
        ("Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA=="),
        ("token ghp_0123456789abcdefghijABCDEFGHIJ0123 here", "ghp_0123456789abcdefghijABCDEFGHIJ"),
        ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "11ABCDEFG0123456789"),
        ("aws AKIAIOSFODNN7EXAMPLE key", "AKIAIOSFODNN7EXAMPLE"),
        ("xoxb-123456789012-abcdefghij", "123456789012-abcdefghij"),
        ("hf_abcdefghijklmnopqrstuvwxyz123456", "abcdefghijklmnopqrstuvwxyz"),
        ("sk-proj-abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwx"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.sig_nature-x", "eyJzdWIiOiIxMjM0In0"),
    ],
)
def test_credentials_are_recognised_by_their_value(text, secret):
    out = scrub_text(text)
    assert secret not in out and REDACTED in out


@pytest.mark.parametrize(
    "text",
    [
        "Basic comparison of two models",
        "a bearer of news",
        "task-specific settings",
        "skip-connections-and-more-words-here",
        "model=als,factors=64",
    ],
)
def test_ordinary_text_is_left_alone(text):
    assert scrub_text(text) == text


def test_the_value_of_a_secret_environment_variable_is_scrubbed_anywhere(monkeypatch):
    monkeypatch.setenv("MY_API_TOKEN", "tok-4f9a2c7e1b")
    monkeypatch.setenv("HOME_FOLDER_NAME", "tok-visible-1")  # not a secret name
    assert scrub_text("note=tok-4f9a2c7e1b;x") == f"note={REDACTED};x"
    assert scrub_text("tok-visible-1") == "tok-visible-1"


def test_values_taken_from_the_environment_are_found_and_registered():
    raw = {
        "model": {"note": "${oc.env:INNOCENT}", "k": 3, "path": "/data/${oc.env:DIR}/x"},
        "l": ["${env:ITEM}", "plain"],
        "other": "${model.k}",
    }
    resolved = {
        "model": {"note": "value-from-env", "k": 3, "path": "/data/sub/x"},
        "l": ["item-from-env", "plain"],
        "other": 3,
    }
    found = env_interpolated_values(raw, resolved)
    assert sorted(found) == ["/data/sub/x", "item-from-env", "value-from-env"]
    add_secret_values(found + ["ab"])  # too short to register: it would scrub ordinary words
    assert scrub_text("x value-from-env y ab") == f"x {REDACTED} y ab"


def test_every_writer_of_config_text_applies_the_rule(tmp_path, monkeypatch):
    """config.yaml, overrides.yaml, dataset.json and MLflow params of one job: no passphrase,
    pat, Bearer value, secret environment value or registered value survives."""
    monkeypatch.setenv("SERVICE_SECRET", "s3cr3t-from-env-42")
    add_secret_values(["registered-innocent-9"])
    config = {
        "db": {"passphrase": "pp-0001", "pat": "pat-0002", "header": "Bearer bear-0003xyz"},
        "model": {"note": "registered-innocent-9", "other": "pre s3cr3t-from-env-42 post"},
    }
    overrides = [
        "+db.passphrase=pp-0001",
        "+db.pat=pat-0002",
        "+db.header=Bearer bear-0003xyz",
        "+model.note=registered-innocent-9",
    ]
    job = write_job_dir(
        make_results(n_users=20, k=3),
        tmp_path / "job",
        config_yaml=config,
        overrides=overrides,
        dataset={"source": "Bearer bear-0003xyz"},
        plots=False,
    )
    secrets = ["pp-0001", "pat-0002", "bear-0003xyz", "s3cr3t-from-env-42", "registered-innocent-9"]
    for name in ("config.yaml", "overrides.yaml", "dataset.json"):
        text = (job / name).read_text()
        assert not [s for s in secrets if s in text], (name, text)
    params = params_from_config(yaml.safe_load((job / "config.yaml").read_text()))
    assert not [s for s in secrets if s in repr(params)]
    assert not [s for s in secrets if s in repr(scrub_mapping(config))]
    assert not [s for s in secrets if s in repr(scrub_overrides(overrides))]


def test_the_shells_working_directory_is_not_a_secret(monkeypatch):
    """PWD names the current folder (the shell's pwd), not a password: its value scrubbed every
    path under it, so the sweep printed `sqlite:///<redacted>/mlflow.db`."""
    from recoeval_tracking.jobdir.redact import scrub_text

    monkeypatch.setenv("PWD", "/home/someone/study")
    monkeypatch.setenv("OLDPWD", "/home/someone/previous")
    monkeypatch.setenv("DB_PWD", "hunter2hunter2")
    text = "sqlite:////home/someone/study/mlflow.db from /home/someone/previous pw hunter2hunter2"
    assert scrub_text(text) == (
        "sqlite:////home/someone/study/mlflow.db from /home/someone/previous pw <redacted>"
    )


def test_a_secret_set_in_the_environment_after_a_first_text_is_still_scrubbed(monkeypatch):
    # the values scrubbed are worked out once per environment: a change must be seen
    text = "connect with hunter2-passphrase-77 please"
    monkeypatch.delenv("MY_SERVICE_PASSWORD", raising=False)
    assert scrub_text(text) == text
    monkeypatch.setenv("MY_SERVICE_PASSWORD", "hunter2-passphrase-77")
    assert scrub_text(text) == f"connect with {REDACTED} please"
    monkeypatch.delenv("MY_SERVICE_PASSWORD")
    assert scrub_text(text) == text
    add_secret_values(["hunter2-passphrase-77"])
    assert scrub_text(text) == f"connect with {REDACTED} please"
