"""Secrets in the spellings a hostile-input check used (``passwords``, ``secrets``, ``pass``,
``pw``, a list of ``tokens``, a PEM private key under an innocent key), the order in which known
secret values are replaced (longest first), which environment values count as secrets (a
secret-named variable holding a folder does not redact every path under it), and the quoted
overrides a sweep's launcher prints. One rule (``jobdir/redact.py``) for config.yaml,
overrides.yaml, the overrides tag, params and the terminal."""

from __future__ import annotations

import logging

import pytest

from recoeval_tracking.jobdir.redact import (
    REDACTED,
    add_secret_values,
    is_secret_key,
    looks_like_secret_value,
    scrub_mapping,
    scrub_overrides,
    scrub_text,
)
from recoeval_tracking.tracking.client import params_from_config, run_name_from_overrides

PEM = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAw7Zq0pemkeyBODYline1\n"
    "pemkeyBODYline2xyz==\n"
    "-----END RSA PRIVATE KEY-----"
)
PEM_BODY = ("pemkeyBODYline1", "pemkeyBODYline2")


pytestmark = pytest.mark.usefixtures("fresh_secrets")


@pytest.mark.parametrize(
    "key",
    [
        "db.passwords",
        "secrets",
        "smtp.pass",
        "db.pw",
        "db_pw",
        "api.tokens",
        "tokens",
        "accessTokens",
        "vault.clientSecrets",
        "secrets.github",  # nested under a secret section
        "db.passwords.primary",
    ],
)
def test_common_spellings_are_secret_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "metrics.max_tokens",
        "llm.maxTokens",
        "llm.num_tokens",
        "llm.tokens_per_batch",
        "model.n_passes",
        "model.bypass",
        "model.compass",
        "model.tokenizer",
        "split.keys_per_user",
        "data.paths",
    ],
)
def test_counts_and_lookalikes_stay_plain(key):
    assert not is_secret_key(key)


HOSTILE = {
    "db": {"passwords": ["pw-one-0001", "pw-two-0002"], "pass": "pass-0003", "pw": "pw-0004"},
    "secrets": "secrets-0005",
    "vault": {"secrets": {"github": "gh-0006"}},
    "api": {"tokens": ["tok-0007", "tok-0008"]},
    "model": {"note": PEM, "lam": 500},
    "metrics": {"max_tokens": 32},
}
HOSTILE_VALUES = [
    "pw-one-0001",
    "pw-two-0002",
    "pass-0003",
    "pw-0004",
    "secrets-0005",
    "gh-0006",
    "tok-0007",
    "tok-0008",
    *PEM_BODY,
]
HOSTILE_OVERRIDES = [
    "+db.passwords=[pw-one-0001, pw-two-0002]",
    "+db.pass=pass-0003",
    "+db.pw=pw-0004",
    "+secrets=secrets-0005",
    "+vault.secrets.github=gh-0006",
    "+api.tokens=[tok-0007,tok-0008]",
    f"+model.note='{PEM}'",
    "model.lam=500",
]


def _leaks(text: str) -> list[str]:
    return [v for v in HOSTILE_VALUES if v in text]


def test_no_spelling_leaks_from_config_params_overrides_or_the_tag():
    import yaml

    config_yaml = yaml.safe_dump(scrub_mapping(HOSTILE))
    assert not _leaks(config_yaml), config_yaml
    assert scrub_mapping(HOSTILE)["api"]["tokens"] == REDACTED  # the list, every element
    assert scrub_mapping(HOSTILE)["metrics"] == {"max_tokens": 32}
    assert scrub_mapping(HOSTILE)["model"]["lam"] == 500
    params = params_from_config(HOSTILE)
    assert not _leaks(repr(params)), params
    assert params["metrics.max_tokens"] == "32" and params["model.lam"] == "500"
    overrides = scrub_overrides(HOSTILE_OVERRIDES)
    assert not _leaks(yaml.safe_dump(overrides)), overrides
    assert not _leaks(" ".join(overrides))  # the overrides tag
    assert overrides[-1] == "model.lam=500"
    assert not _leaks(str(run_name_from_overrides(HOSTILE_OVERRIDES)))


@pytest.mark.parametrize(
    "text",
    [
        PEM,
        f"note: {PEM}\nnext: 1",
        PEM.replace("\n", "\\n"),  # escaped, as in JSON text or an override
        PEM.rsplit("\n", 1)[0],  # cut before its end line
        PEM.replace("RSA PRIVATE", "ENCRYPTED PRIVATE"),
        PEM.replace("RSA PRIVATE", "PRIVATE"),
    ],
)
def test_a_pem_private_key_is_redacted_whatever_holds_it(text):
    out = scrub_text(text)
    assert not [b for b in PEM_BODY if b in out] and REDACTED in out
    assert not [b for b in PEM_BODY if b in repr(scrub_mapping({"model": {"note": text}}))]


def test_a_pem_block_leaves_the_text_around_it():
    assert scrub_text(f"before {PEM} after") == f"before {REDACTED} after"
    public = "-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----"
    assert scrub_text(public) == public


def test_quoted_json_keys_are_secret_keys_too():
    text = '{"tokens": ["tok-0007", "tok-0008"], "password": "pw-0004", "k": 10}'
    assert scrub_text(text) == f'{{"tokens": {REDACTED}, "password": "{REDACTED}", "k": 10}}'
    assert scrub_text("{'pw': 'pw-0004'}") == f"{{'pw': '{REDACTED}'}}"


def test_known_values_are_replaced_longest_first():
    """A secret that contains a shorter one is replaced whole: shortest first would leave the
    longer one's tail in clear (``<redacted>-tail-secret-77``)."""
    add_secret_values(["abcd1234", "abcd1234-tail-secret-77", "zz-abcd1234"])
    assert scrub_text("x abcd1234-tail-secret-77 y zz-abcd1234 z abcd1234") == (
        f"x {REDACTED} y {REDACTED} z {REDACTED}"
    )


def test_known_values_longest_first_from_the_environment(monkeypatch):
    monkeypatch.setenv("SHORT_TOKEN", "k3y-4f9a2c7e")
    monkeypatch.setenv("LONG_TOKEN", "k3y-4f9a2c7e-and-its-tail")
    assert scrub_text("v=k3y-4f9a2c7e-and-its-tail") == f"v={REDACTED}"


def test_a_secret_named_variable_holding_a_folder_redacts_no_path(tmp_path, monkeypatch):
    """``AWS_SHARED_CREDENTIALS_FILE=<dir>`` names where credentials are, not one: its value
    replaced everywhere turned every data path under the folder into ``<redacted>/...``."""
    folder = tmp_path / "home"
    (folder / "data").mkdir(parents=True)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(folder))
    monkeypatch.setenv("SECRET_DIR", "/srv/not-there/creds")  # path-shaped, not existing
    monkeypatch.setenv("VAULT_TOKEN_FILE", "secrets/token.txt")  # relative: exists nowhere
    monkeypatch.setenv("DB_PASSWORD", "hunter2-real-secret")
    text = f"dataset.path={folder}/data/ratings.csv store=/srv/not-there/creds/x pw hunter2-real-secret"
    assert scrub_text(text) == (
        f"dataset.path={folder}/data/ratings.csv store=/srv/not-there/creds/x pw {REDACTED}"
    )
    # a relative value that is not an existing path and not path-shaped still counts
    assert scrub_text("secrets/token.txt") == REDACTED


def test_registered_values_that_are_paths_are_not_secrets(tmp_path):
    add_secret_values([str(tmp_path), "/data/sub", "registered-9f8e7d"])
    assert scrub_text(f"{tmp_path}/x /data/sub/y registered-9f8e7d") == (
        f"{tmp_path}/x /data/sub/y {REDACTED}"
    )


@pytest.mark.parametrize(
    "value, secret",
    [
        ("s3cr3t-v4lue", True),
        ("/abc$%^&*def", True),
        ("short", False),
        ("/home/me/.aws", False),
        ("~/.aws/credentials", False),
        ("./secrets", False),
        ("C:\\Users\\me\\.aws", False),
        (REDACTED, False),
    ],
)
def test_which_values_look_like_secrets(value, secret):
    assert looks_like_secret_value(value) is secret


LAUNCH_SECRETS = ["pw-launch-1", "tail-2", "tok-launch-3", "pw-launch-4", "pw-launch-5", "tl-6"]


@pytest.mark.parametrize(
    "line",
    [
        "\t#0 : model=als 'tracking.password=pw-launch-1 tail-2'",
        '\t#0 : model=als "+db.password=pw-launch-1 tail-2"',
        "\t#1 : model=als +x.url='http://h/x?token=tok-launch-3&n=1'",
        "\t#1 : model=als 'x.url=http://h/x?token=tok-launch-3'",
        "\t#2 : model=als +x.opts='user=bob password=pw-launch-4'",
        "\t#3 : model=als +db.tokens=[pw-launch-5, tl-6]",
        "\t#4 : model=als '+db.pass=pw-launch-1 tail-2' model.lam=5",
    ],
)
def test_the_launchers_job_lines_leak_no_quoted_value(line):
    out = scrub_text(line)
    assert not [s for s in LAUNCH_SECRETS if s in out], out
    assert out.startswith(line.split(" : ")[0] + " : model=als") and REDACTED in out


def test_ordinary_quoted_overrides_are_left_alone():
    line = "\t#0 : model=als 'model.note=a b' +x.opts='user=bob k=3' it's fine"
    assert scrub_text(line) == line


def test_the_log_filter_redacts_a_launch_line(caplog):
    """The record factory ``recoeval-track`` installs (``app/task.py``: ``redact_logs``, called
    by ``app/cli.py``'s ``main`` before Hydra starts and by each job) cleans Hydra's launcher
    lines with the same rule."""
    from recoeval_tracking.app.task import redact_logs

    previous = logging.getLogRecordFactory()
    try:
        redact_logs()
        with caplog.at_level(logging.INFO, logger="hydra.launcher.test"):
            logging.getLogger("hydra.launcher.test").info(
                "\t#%d : %s", 0, "model=als 'tracking.password=pw-launch-1 tail-2'"
            )
    finally:
        logging.setLogRecordFactory(previous)
    assert "pw-launch-1" not in caplog.text and "tail-2" not in caplog.text
    assert REDACTED in caplog.text
