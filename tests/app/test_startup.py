"""The command's first line comes before anything heavy is imported, and lines follow every few
seconds until the job or the sweep logs its own."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time

from commands import clean_env

from recoeval_tracking import _heartbeat
from recoeval_tracking.app import startup

#: Runs ``recoeval-track ARGV`` in a fresh interpreter with the Hydra part replaced by a probe
#: that records what was printed and imported before it started.
_PROBE = r"""
import io, json, sys
from recoeval_tracking.app import cli
seen = {}
real_stdout = sys.stdout
sys.stdout = buffer = io.StringIO()
def probe(runs):
    from recoeval_tracking.app import startup
    warm = startup._state.get("warm")
    up = startup.uploader()
    seen.update(
        printed=buffer.getvalue(),
        loaded=sorted(m for m in ("hydra", "omegaconf", "numpy", "scipy", "pandas", "mlflow")
                      if m in sys.modules),
        warm_up=None if warm is None else warm.args[-2:],
        uploader=None if up is None else up.args[1:],
    )
cli._main = probe
sys.argv = ["recoeval-track", *json.loads(sys.argv[1])]
cli.main()
sys.stdout = real_stdout
print(json.dumps({**seen, "after": buffer.getvalue()[len(seen.get("printed", "")):]}))
"""


def _probe(argv: list[str], **env: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**clean_env(), **env},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_sweep_says_it_starts_before_hydra_numpy_or_scipy_is_imported():
    seen = _probe(["-m", "model=popularity,random"])
    assert seen["printed"] == "recoeval-track: starting the sweep...\n"
    assert seen["loaded"] == []
    seen = _probe(["model=popularity,random", "hydra.mode=MULTIRUN"])
    assert seen["printed"] == "recoeval-track: starting the sweep...\n"


def test_a_single_run_says_it_starts_and_a_command_that_runs_nothing_does_not():
    assert _probe(["model=popularity"])["printed"] == "recoeval-track: starting the job...\n"
    for argv in (["--help"], ["--cfg", "job"], ["--info"]):
        assert _probe(argv)["printed"] == "", argv


def test_the_startup_lines_end_with_the_first_logged_line(monkeypatch, capsys):
    monkeypatch.setattr(_heartbeat, "TICK_SECONDS", 0.05)
    log = logging.getLogger("recoeval_tracking.test_startup")
    monkeypatch.setattr(log, "level", logging.INFO)
    before = logging.getLogRecordFactory()
    startup.begin("recoeval-track", "starting the sweep")
    try:
        time.sleep(0.4)
        log.debug("not a line the terminal shows")
        assert startup.running()
        log.info("creating the sweep's MLflow parent run")
        assert not startup.running()
        said = capsys.readouterr().out.splitlines()
        time.sleep(0.2)
        assert capsys.readouterr().out == ""  # nothing after the first logged line
    finally:
        startup.end()
    assert said[0] == "recoeval-track: starting the sweep..."
    ticks = said[1:]
    assert len(ticks) >= 3
    assert all(t.startswith("... still starting the sweep (") for t in ticks), ticks
    assert logging.getLogRecordFactory() is before  # taken out again


def test_end_without_begin_and_twice_is_harmless(capsys):
    startup.end()
    startup.end()
    assert capsys.readouterr().out == ""


def test_a_single_run_on_a_cold_kernel_cache_starts_its_warm_up_child_first(tmp_path):
    # the child imports numpy, scipy, numba and the engine while this process imports Hydra and
    # composes the config: it exists before any of those is imported here
    cold = {"NUMBA_CACHE_DIR": str(tmp_path / "empty"), "RECOEVAL_WARM_UP": "1"}
    seen = _probe(["model=popularity"], **cold)
    assert seen["warm_up"] == ["-m", "recoeval_tracking.metrics.warm"]
    assert seen["loaded"] == []
    # not for a sweep, a command that runs nothing, a warm cache, nor with the warm-up off
    assert _probe(["-m", "model=popularity,random"], **cold)["warm_up"] is None
    assert _probe(["--cfg", "job"], **cold)["warm_up"] is None
    assert _probe(["model=popularity"], **{**cold, "RECOEVAL_WARM_UP": "0"})["warm_up"] is None
    (tmp_path / "warm" / "engine").mkdir(parents=True)
    (tmp_path / "warm" / "engine" / "kernels.block_topk-1.py311.nbi").write_bytes(b"")
    warm = {**cold, "NUMBA_CACHE_DIR": str(tmp_path / "warm")}
    assert _probe(["model=popularity"], **warm)["warm_up"] is None


def test_a_single_run_on_a_warm_kernel_cache_starts_its_upload_child_first(tmp_path):
    # the child imports MLflow while this process imports Hydra, composes, loads, fits and
    # evaluates: it exists before any of those is imported here, and is given the job's
    # command line (MLflow's runs name it as their source)
    (tmp_path / "warm" / "engine").mkdir(parents=True)
    (tmp_path / "warm" / "engine" / "kernels.block_topk-1.py311.nbi").write_bytes(b"")
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "warm"), "RECOEVAL_UPLOADER": "1"}
    seen = _probe(["model=popularity"], **env)
    assert seen["uploader"] == [
        "-m",
        "recoeval_tracking.tracking.uploader",
        "recoeval-track",
        "model=popularity",
    ]
    assert seen["loaded"] == []
    # not for a sweep (its process imports MLflow for the parent run), a command that runs
    # nothing, tracking turned off, the upload child off, nor a cold cache (both cores compile)
    assert _probe(["-m", "model=popularity,random"], **env)["uploader"] is None
    assert _probe(["--cfg", "job"], **env)["uploader"] is None
    assert _probe(["model=popularity", "tracking.enabled=false"], **env)["uploader"] is None
    assert _probe(["model=popularity", "tracking=none"], **env)["uploader"] is None
    assert _probe(["model=popularity"], **{**env, "RECOEVAL_UPLOADER": "0"})["uploader"] is None
    cold = {**env, "NUMBA_CACHE_DIR": str(tmp_path / "empty"), "RECOEVAL_WARM_UP": "1"}
    seen = _probe(["model=popularity"], **cold)
    assert seen["uploader"] is None and seen["warm_up"] is not None


def test_the_job_hands_the_started_child_its_options_or_stops_it(monkeypatch):
    from recoeval_tracking.app import pipeline
    from recoeval_tracking.metrics import warm
    from recoeval_tracking.options import EvalOptions

    def child() -> subprocess.Popen:
        code = "import sys; sys.stdin.buffer.read()"
        return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)

    sent = []
    monkeypatch.setattr(warm, "start", lambda options, dtype, proc=None: sent.append(proc))
    monkeypatch.delenv("RECOEVAL_WARM_UP", raising=False)
    options = EvalOptions.from_config({"names": ["p"], "k": 5})
    started = startup._state["warm"] = child()
    other = None
    try:
        pipeline._warm_up(options, {"name": "als"}, {"kind": "cpu"})
        assert sent == [started] and startup._state["warm"] is None
        # a job evaluating on Dask needs no warm-up: the child is ended
        other = startup._state["warm"] = child()
        pipeline._warm_up(options, {"name": "als"}, {"kind": "dask"})
        assert other.wait(timeout=10) != 0 and startup._state["warm"] is None
        assert len(sent) == 1
    finally:
        for proc in (p for p in (started, other) if p is not None):
            proc.kill()
            proc.wait()
            proc.stdin.close()
        startup._state["warm"] = None


def test_the_warm_up_child_with_nothing_to_compile_exits_cleanly():
    proc = subprocess.run(
        [sys.executable, "-m", "recoeval_tracking.metrics.warm"],
        input=b"",
        capture_output=True,
        timeout=120,
        env=clean_env(),
    )
    assert proc.returncode == 0, proc.stderr


def test_help_copies_no_config_store(tmp_path, monkeypatch):
    """``--help`` lists every config group's options, a repository of Hydra's each time (115 of
    them), and each used to deep-copy the ``ConfigStore`` with every node stored: a second of
    CPU. The store is read in place; the help still lists our groups and their options."""
    from commands import run_main
    from hydra.core.config_store import ConfigStore

    copies = []
    reduce_ex = ConfigStore.__reduce_ex__  # what copy.deepcopy calls to copy an object

    def counted(self, protocol):
        copies.append(protocol)
        return reduce_ex(self, protocol)

    monkeypatch.setattr(ConfigStore, "__reduce_ex__", counted)
    proc = run_main(["--help"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "model: als, factors_file, implicit, item_knn, popularity, random" in proc.stdout
    assert "split: kfold, leave_n_out" in proc.stdout
    assert copies == []


def test_a_single_run_composes_its_config_once(tmp_path, monkeypatch):
    """Hydra composed the whole config a first time only to read ``hydra.mode``, which none of
    the app's configs sets: a composition of every command (0.07-0.3 s)."""
    from commands import run_main
    from hydra._internal.config_loader_impl import ConfigLoaderImpl

    calls = []
    original = ConfigLoaderImpl.load_configuration

    def counted(self, config_name, overrides, *args, **kwargs):
        calls.append(list(overrides))
        return original(self, config_name, overrides, *args, **kwargs)

    monkeypatch.setattr(ConfigLoaderImpl, "load_configuration", counted)
    args = ["model=popularity", "dataset.n_users=40", "dataset.n_items=20", "plots=false"]
    proc = run_main([*args, "progress=false", "tracking=none", "hydra.run.dir=run"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "run" / "metrics.json").is_file()
    assert len(calls) == 1, calls
    assert "hydra.mode=RUN" in calls[0]  # Hydra's own choice when no config sets the mode


def test_the_mode_is_the_command_lines_unless_other_configs_or_an_override_may_set_it():
    from recoeval_tracking.app.cli import mode_is_the_command_lines

    assert mode_is_the_command_lines(["-m", "model=als,popularity", "seed=1"])
    assert mode_is_the_command_lines([])
    for other in (
        ["hydra.mode=MULTIRUN", "seed=0,1"],
        ["+hydra.mode=RUN"],
        ["--config-dir", "mine", "model=ease"],
        ["-cd=mine"],
        ["--config-path", "job/.hydra", "--config-name", "config"],
        ["-cn", "other"],
        ["hydra.searchpath=[file://mine]"],
        ["++hydra.searchpath=[pkg://theirs]"],
    ):
        assert not mode_is_the_command_lines(other), other


def test_no_config_of_the_app_sets_the_run_mode():
    # what lets the command take its mode from the command line (-m or not) without composing
    import yaml
    from commands import REPO_ROOT

    files = sorted((REPO_ROOT / "configs").rglob("*.yaml"))
    assert len(files) > 20
    for path in files:
        doc = yaml.safe_load(path.read_text()) or {}
        hydra = doc.get("hydra") if isinstance(doc, dict) else None
        assert not (isinstance(hydra, dict) and "mode" in hydra), path
        assert "hydra.mode" not in path.read_text(), path


def test_the_job_names_its_store_to_the_upload_child_or_ends_it():
    import pickle

    from recoeval_tracking.app import pipeline

    def child() -> subprocess.Popen:
        code = "import sys; sys.stdout.buffer.write(sys.stdin.buffer.read())"
        return subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    try:
        told = startup._state["uploader"] = child()
        pipeline._open_store_early("sqlite:////tmp/store/mlflow.db")
        told.stdin.close()
        assert pickle.loads(told.stdout.read()) == ("open", "sqlite:////tmp/store/mlflow.db")
        assert told.wait(timeout=10) == 0
        # a job whose config turns tracking off (no store) ends the child at once
        ended = startup._state["uploader"] = child()
        pipeline._open_store_early(None)
        assert ended.wait(timeout=10) != 0 and startup._state["uploader"] is None
    finally:
        startup.stop_uploader()
