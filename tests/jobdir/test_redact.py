"""The secret rule, config flattening and key sanitising (no mlflow needed)."""

from __future__ import annotations

import pytest

from recoeval_tracking import InputError
from recoeval_tracking.jobdir.redact import (
    REDACTED,
    flatten_config,
    is_secret_key,
    sanitize_key,
    scrub_mapping,
    scrub_overrides,
    scrub_text,
    scrub_url,
)


@pytest.mark.parametrize(
    "key",
    [
        "tracking.password",
        "password",
        "db.passwd",
        "db.pwd",
        "auth.token",
        "api_key",
        "db.apiKey",
        "aws.secretAccessKey",
        "service.accessToken",
        "client_secret",
        "dbPassword",
        "x.key",
        "credentials",
        "s3.ACCESS_KEY",
        "secrets.path",  # every key under a secret section is secret (secrets.github too)
    ],
)
def test_secret_keys(key):
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "metrics.k",
        "k",
        "metrics.max_tokens",
        "model.tokenizer",
        "split.keys_per_user",
        "sort.monkey",
        "keyword",
        "model.factors",
        "tracking.uri",
        # the report's settings: a param naming the replicate or the dataset, not a credential
        "replicate_key",
        "dataset_key",
    ],
)
def test_not_secret_keys(key):
    assert not is_secret_key(key)


def test_scrub_url_removes_password_only():
    assert scrub_url("http://alice:s3cr3t@host:5000/x") == f"http://alice:{REDACTED}@host:5000/x"
    assert scrub_url("http://host:5000/x") == "http://host:5000/x"
    assert scrub_url("postgresql://u:p@db/mlflow") == f"postgresql://u:{REDACTED}@db/mlflow"


def test_scrub_mapping_nested():
    cfg = {
        "tracking": {"uri": "http://u:pw@h", "token": "abc"},
        "metrics": {"k": 10},
        "jobs": [{"api_key": "zz", "n": 1}],
    }
    out = scrub_mapping(cfg)
    assert out == {
        "tracking": {"uri": f"http://u:{REDACTED}@h", "token": REDACTED},
        "metrics": {"k": 10},
        "jobs": [{"api_key": REDACTED, "n": 1}],
    }
    assert cfg["tracking"]["token"] == "abc"  # input untouched


def test_scrub_overrides():
    got = scrub_overrides(
        ["model.factors=64", "+tracking.password=abc", "~db.token", "tracking.uri=http://u:pw@h"]
    )
    assert got == [
        "model.factors=64",
        f"+tracking.password={REDACTED}",
        "~db.token",
        f"tracking.uri=http://u:{REDACTED}@h",
    ]


def test_flatten_config():
    cfg = {
        "model": {"name": "als", "factors": 64, "opt": {"lr": 0.1}},
        "metrics": {"k": 10},
        "names": ["ndcg", "p"],
        "empty": {},
        "none": None,
        "flag": True,
    }
    assert flatten_config(cfg) == {
        "model.name": "als",
        "model.factors": "64",
        "model.opt.lr": "0.1",
        "metrics.k": "10",
        "names": '["ndcg", "p"]',
        "empty": "{}",
        "none": "None",
        "flag": "True",
    }
    assert flatten_config({"a": 1}, prefix="cfg") == {"cfg.a": "1"}
    with pytest.raises(InputError, match="'config' parameter of flatten_config"):
        flatten_config(["not", "a", "dict"])


def test_sanitize_key():
    assert sanitize_key("ndcg@10") == "ndcg_at_10"
    assert sanitize_key("recall@k (macro)") == "recall_at_k _macro_"
    assert len(sanitize_key("x" * 300)) == 250


@pytest.mark.parametrize(
    "text,expected",
    [
        # Hydra escapes ':' in overrides: the escaped form is matched too
        (
            r"tracking.uri=http\://bob\:PW@host\:5000",
            r"tracking.uri=http\://bob\:<redacted>@host\:5000",
        ),
        ("http://bob:PW@host:5000/x", "http://bob:<redacted>@host:5000/x"),
        ("https://:tok@h/x", "https://:<redacted>@h/x"),
        ("+db.password=abc model=als", "+db.password=<redacted> model=als"),
        ("+db.password=a,b model=als", "+db.password=<redacted> model=als"),
        ("model=als,auth.token=abc,k=3", "model=als,auth.token=<redacted>,k=3"),
        ("https://h/x?api_key=abc&n=1", "https://h/x?api_key=<redacted>&n=1"),
        (
            "metrics.k=10 sort.monkey=3 model.tokenizer=x",
            "metrics.k=10 sort.monkey=3 model.tokenizer=x",
        ),
        ("http://host:5000/x", "http://host:5000/x"),
    ],
)
def test_scrub_text(text, expected):
    from recoeval_tracking.jobdir.redact import scrub_text

    assert scrub_text(text) == expected


def test_scrub_overrides_as_hydra_writes_them():
    got = scrub_overrides(
        [r"tracking.uri=http\://bob\:PW@h\:5000", "+db.password=PW", "hydra.sweeper.params.x=1,2"]
    )
    assert got == [
        rf"tracking.uri=http\://bob\:{REDACTED}@h\:5000",
        f"+db.password={REDACTED}",
        "hydra.sweeper.params.x=1,2",
    ]
    assert not any("PW" in g for g in got)


def test_redact_is_the_one_entry_point():
    from recoeval_tracking.jobdir.redact import redact

    assert redact(r"x=http\://u\:pw@h") == rf"x=http\://u\:{REDACTED}@h"
    assert redact({"db": {"password": "pw", "url": "http://u:pw@h"}, "n": [1, "token=pw"]}) == {
        "db": {"password": REDACTED, "url": f"http://u:{REDACTED}@h"},
        "n": [1, f"token={REDACTED}"],
    }
    assert redact(3) == 3


def test_mlflow_sort_address_is_not_a_secret():
    """The MLflow UI's sort column (``orderByKey``) in a printed address names a metric, not a
    credential: the address must reach the user whole, or the UI rejects ``<redacted> DESC``."""
    link = (
        "#/experiments/1/runs?searchFilter=x&orderByKey=metrics.%60ndcg_at_10%60"
        "&orderByAsc=false&compareRunsMode=CHART"
    )
    assert scrub_text(link) == link
    view = (
        "#/experiments/1/runs?viewStateShareKey=recoeval-sweep-5d7562a9154f&compareRunsMode=TABLE"
    )
    assert scrub_text(view) == view
    assert not is_secret_key("orderByKey") and not is_secret_key("order_by_key")
    assert not is_secret_key("sortKey")


@pytest.mark.parametrize(
    "text, secret",
    [
        ("https://h/x?orderByKey=metrics.a&api_key=abc", "abc"),
        ("https://h/x?apiKey=abc&orderByKey=metrics.a", "abc"),
        ("+db.key=abc orderByKey=metrics.a", "abc"),
        ("http://bob:pw@h/#/experiments/1/runs?orderByKey=metrics.a", "pw"),
        ("x.orderByKeyToken=abc", "abc"),
    ],
)
def test_real_secrets_next_to_a_sort_key_stay_redacted(text, secret):
    out = scrub_text(text)
    assert secret not in out.replace("orderByKey", "")
    assert REDACTED in out
    if "orderByKey=metrics.a" in text:
        assert "orderByKey=metrics.a" in out


#: A config whose secrets are numbers (YAML reads ``password: 1234`` as an int), beside ordinary
#: numbers that must stay.
NUMERIC_SECRETS_YAML = """\
db:
  password: 1234
  port: 5432
auth:
  token: 0.5
  apiKey: 987654321
metrics:
  k: 10
"""


def test_numeric_secret_values_are_redacted():
    """A secret key's value is redacted whatever its type: 1234 is as secret as "1234"."""
    import yaml

    cfg = yaml.safe_load(NUMERIC_SECRETS_YAML)
    assert cfg["db"]["password"] == 1234 and isinstance(cfg["auth"]["apiKey"], int)
    want = {
        "db": {"password": REDACTED, "port": 5432},
        "auth": {"token": REDACTED, "apiKey": REDACTED},
        "metrics": {"k": 10},
    }
    assert scrub_mapping(cfg) == want
    from recoeval_tracking.jobdir.redact import redact

    assert redact(cfg) == want


def test_numeric_secrets_leave_neither_artifacts_nor_params():
    """The job directory's config.yaml (from YAML text or a mapping) and the run's params."""
    import yaml

    from recoeval_tracking.jobdir.io import _scrubbed_yaml
    from recoeval_tracking.tracking.client import params_from_config

    for given in (NUMERIC_SECRETS_YAML, yaml.safe_load(NUMERIC_SECRETS_YAML)):
        text = _scrubbed_yaml(given)
        for secret in ("1234", "0.5", "987654321"):
            assert secret not in text, (secret, text)
        assert "5432" in text
    params = params_from_config(yaml.safe_load(NUMERIC_SECRETS_YAML))
    assert params == {"db.port": "5432", "metrics.k": "10"}
