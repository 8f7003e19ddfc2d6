"""Config values are checked before any data is loaded, and errors name the config key. The
command's entry point runs in this process (:func:`commands.run_main`: its exit status and output
as the command's)."""

from __future__ import annotations

import pytest

from recoeval_tracking import InputError
from recoeval_tracking.app import precheck
from recoeval_tracking.app.precheck import check_before_load, check_tracking_uri

from .conftest import QUIET, TINY_DATA, run_main


@pytest.mark.parametrize(
    "uri",
    [
        "sqlite:///x.db",
        "http://127.0.0.1:5000",
        "postgresql+psycopg2://u@h/db",
        "databricks",
        None,
        "",
    ],
)
def test_good_tracking_uris_pass(uri):
    check_tracking_uri(uri)


@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("sqlit:///x.db", "scheme is one of sqlite"),
        ("mlflow.db", "tracking.uri=sqlite:///"),
        ("runs/mlflow.db", "A bare path is not a tracking store"),
    ],
)
def test_malformed_tracking_uris_name_the_key(uri, says):
    with pytest.raises(InputError, match="^tracking.uri must be") as err:
        check_tracking_uri(uri)
    assert says in str(err.value)


@pytest.mark.parametrize(
    ("metrics", "says"),
    [
        ({"k": 0}, "metrics.k must be an int >= 1"),
        ({"k": True}, "metrics.k must be an int >= 1"),
        ({"k": 10, "names": ["ndcgg"]}, "metrics.names must be names of registered metrics"),
    ],
)
def test_metric_settings_name_the_key(metrics, says):
    with pytest.raises(InputError, match=says):
        check_before_load({"metrics": metrics})


@pytest.mark.parametrize(
    ("arg", "says"),
    [
        ("metrics.k=0", "metrics.k must be an int >= 1"),
        ("metrics.names=[ndcgg]", "metrics.names must be"),
        ("tracking.uri=sqlit:///x.db", "tracking.uri must be"),
        ("tracking.uri=mlflow.db", "tracking.uri must be"),
        ("metrics.negatives.n=0", "negatives"),
        ("metrics.negatives.by=zipf", "negatives"),
    ],
)
def test_bad_values_fail_before_the_data_is_read(tmp_path, arg, says):
    # the data file does not exist: the config error must come first
    proc = run_main(
        ["dataset=csv", f"dataset.path={tmp_path / 'absent.csv'}", arg, *QUIET], tmp_path
    )
    assert proc.returncode == 2, proc.stderr
    assert says in proc.stderr and "absent.csv" not in proc.stderr
    assert not (tmp_path / "outputs").exists() or not list(
        (tmp_path / "outputs").rglob("per_user.parquet")
    )


def test_k_above_the_number_of_items_names_metrics_k(tmp_path):
    proc = run_main([*TINY_DATA, "model=popularity", "metrics.k=500", *QUIET], tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "metrics.k must be at most the number of items of the data (60" in proc.stderr


def test_saved_config_reruns_from_another_directory(tmp_path):
    start, other = tmp_path / "start", tmp_path / "other"
    start.mkdir()
    other.mkdir()
    lines = ["user,item,rating"] + [
        f"{u},{(u * 7 + j) % 30},1" for u in range(40) for j in range(6)
    ]
    (start / "d.csv").write_text("\n".join(lines) + "\n")
    args = [
        "dataset=csv",
        "dataset.path=d.csv",
        "model=popularity",
        "metrics.k=5",
        "tracking=none",
        *QUIET,
    ]
    proc = run_main(args, start)
    assert proc.returncode == 0, proc.stderr
    (job,) = [p.parent for p in (start / "outputs").rglob("per_user.parquet")]
    assert f"path: {start / 'd.csv'}" in (job / ".hydra" / "config.yaml").read_text()
    proc = run_main(["--config-path", str(job / ".hydra"), "--config-name", "config"], other)
    assert proc.returncode == 0, proc.stderr
    assert list((other / "outputs").rglob("per_user.parquet"))


def test_cold_kernel_cache_is_detected_from_the_index_files(tmp_path, monkeypatch):
    from recoeval_tracking import engine

    monkeypatch.setattr(engine, "__file__", str(tmp_path / "engine" / "__init__.py"))
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    assert precheck.kernel_cache_is_cold()
    cache = tmp_path / "cache" / "deep"
    cache.mkdir(parents=True)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    assert precheck.kernel_cache_is_cold()
    (cache / "kernels.fill_average-10.py311.nbi").write_bytes(b"")
    assert not precheck.kernel_cache_is_cold()
    # numba writes only to NUMBA_CACHE_DIR when it is set: an index beside the sources is not
    # looked at
    beside = tmp_path / "engine" / "__pycache__"
    beside.mkdir(parents=True)
    (beside / "kernels.block_ranked-10.py311.nbi").write_bytes(b"")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "empty"))
    assert precheck.kernel_cache_is_cold()
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    assert not precheck.kernel_cache_is_cold()


def test_k_equal_to_the_number_of_items_is_accepted():
    """The boundary: K may be the whole catalogue (every item ranked); one more is refused with
    the key, the number of items and the value."""
    precheck.check_k_against_items(60, 60)
    precheck.check_k_against_items(1, 1)
    with pytest.raises(
        InputError,
        match=r"metrics.k must be at most the number of items of "
        r"the data \(60 after dataset preparation\); got 61",
    ):
        precheck.check_k_against_items(61, 60)
