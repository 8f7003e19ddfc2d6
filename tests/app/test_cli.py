"""The ``recoeval-track`` command end to end: single runs, re-runs from a job's saved config,
2 x 2 sweeps with the basic and joblib launchers read back from MLflow, a failing sweep, bad
overrides, and ALS against popularity on MovieLens 100K. Processes where the process is what is
checked (the console script, a launcher's workers, exit statuses); the command's entry point in
this process (:func:`commands.run_main`) where only what it says and leaves is (the re-run, the
basic launcher's sweep, the bad overrides and invocations).

Each command runs in a temporary directory that holds a fresh MLflow SQLite store, so the
default ``tracking=local`` (``mlflow.db`` in the directory the command was started from) is what
gets exercised.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from commands import clean_env

from .conftest import (
    QUIET,
    RESULT_FILES,
    TINY_ALS,
    TINY_DATA,
    assert_ok,
    run_command,
    run_main,
    run_process,
)

#: The files of a job the command ran: its results, Hydra's record and the log.
JOB_FILES = (
    *RESULT_FILES,
    ".hydra/config.yaml",
    ".hydra/overrides.yaml",
    "recoeval.log",
)


def _single_job_dir(root: Path) -> Path:
    dirs = [p.parent for p in (root / "outputs").rglob("metrics.json")]
    assert len(dirs) == 1, dirs
    return dirs[0]


def _sweep_dir(root: Path) -> Path:
    dirs = [p.parent for p in (root / "multirun").rglob("multirun.yaml")]
    assert len(dirs) == 1, dirs
    return dirs[0]


def _runs(uri: str):
    from mlflow import MlflowClient

    client = MlflowClient(uri)
    exp = client.get_experiment_by_name("recoeval")
    assert exp is not None
    return client, client.search_runs([exp.experiment_id], max_results=100)


def _check_job_files(job: Path, *, plots: bool = False) -> dict:
    for name in JOB_FILES:
        assert (job / name).is_file(), f"{name} missing in {job}"
    assert (job / "plots" / "curves.png").is_file() == plots
    metrics = json.loads((job / "metrics.json").read_text())
    assert 0.0 <= metrics["ndcg_at_10"] <= 1.0
    assert metrics["fit_seconds"] >= 0.0 and metrics["eval_seconds"] >= 0.0
    curves = pd.read_csv(job / "curves.csv")
    assert curves["k"].tolist() == list(range(1, 11))
    assert curves["ndcg_at_k"].iloc[-1] == pytest.approx(metrics["ndcg_at_10"], rel=1e-12)
    return metrics


def test_single_run_end_to_end_and_rerun_from_the_job_config(tmp_path, local_store):
    proc = run_command(
        [
            *TINY_DATA,
            *TINY_ALS,
            *QUIET,
            "plots=true",
            "metrics=default",
            "progress=auto",
            "tracking.precision=exact",
        ],
        tmp_path,
        module=False,
        env={**clean_env(), "RECOEVAL_UPLOADER": "1"},  # as a user runs it: the upload child
    )
    assert_ok(proc)
    assert re.search(r"MLflow run [0-9a-f]{32} in sqlite:///.*\(logged in", proc.stdout)
    # progress=auto: no bars when stderr is not a terminal
    assert "ALS:" not in proc.stderr and "eval:" not in proc.stderr
    job = _single_job_dir(tmp_path)
    metrics = _check_job_files(job, plots=True)
    # the summary table reached the terminal, and the log file
    assert "ndcg_at_10" in proc.stdout and "job directory" in proc.stdout
    assert "ndcg_at_10" in (job / "recoeval.log").read_text()
    # one MLflow run in the local store of the starting directory, not in the job directory
    assert not (job / "mlflow.db").exists()
    _, runs = _runs(local_store)
    assert len(runs) == 1
    run = runs[0]
    assert run.info.status == "FINISHED"
    assert run.data.metrics["ndcg_at_10"] == pytest.approx(metrics["ndcg_at_10"], rel=1e-12)
    assert run.data.params["model.name"] == "als" and run.data.params["model.factors"] == "8"
    assert (
        run.data.tags["recoeval.sweep_id"] == json.loads((job / "job.json").read_text())["job_uid"]
    )
    assert "mlflow.parentRunId" not in run.data.tags
    assert json.loads((job / "SYNCED").read_text())["run_id"] == run.info.run_id
    # a plain run is named after its dataset and model, with its real times and context
    assert run.info.run_name == "synthetic als f=8 it=5", run.info.run_name
    assert run.info.end_time - run.info.start_time >= 1000 * metrics["eval_seconds"] - 1000
    assert run.data.tags["mlflow.user"] and run.data.tags["mlflow.source.name"]

    # the documented re-run command gives the same per-user metrics (its entry point in this
    # process: the same job from the saved config, without a second interpreter's start)
    again = tmp_path / "again"
    again.mkdir()
    proc = run_main(
        ["--config-path", str(job / ".hydra"), "--config-name", "config", "tracking.enabled=false"],
        again,
    )
    assert_ok(proc)
    rerun = _single_job_dir(again)
    pd.testing.assert_frame_equal(
        pd.read_parquet(rerun / "per_user.parquet"),
        pd.read_parquet(job / "per_user.parquet"),
        check_exact=True,
    )


def _check_sweep(tmp_path: Path, uri: str, launcher: str) -> None:
    sweep = _sweep_dir(tmp_path)
    jobs = sorted(p for p in sweep.iterdir() if p.is_dir())
    assert [p.name for p in jobs] == ["0", "1", "2", "3"]
    record = json.loads((sweep / "recoeval_sweep.json").read_text())
    client, runs = _runs(uri)
    parents = [r for r in runs if r.data.tags.get("recoeval.sweep_parent") == "true"]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId")]
    assert len(parents) == 1 and len(children) == 4 and len(runs) == 5
    parent = parents[0]
    assert parent.info.run_id == record["parent_run_id"]
    assert parent.info.status == "FINISHED"
    assert parent.data.tags["recoeval.launcher"] == launcher
    assert parent.data.metrics["sweep_jobs"] == 4.0
    sweep_id = parent.data.tags["recoeval.sweep_id"]
    assert record["swept_keys"] == ["model", "seed"]
    names = [c.info.run_name for c in children]
    assert len(set(names)) == 4 and all(len(n) < 40 for n in names), names
    assert set(names) == {"als seed=0", "als seed=1", "popularity seed=0", "popularity seed=1"}
    seen = set()
    for job in jobs:
        _check_job_files(job)
        synced = json.loads((job / "SYNCED").read_text())
        child = client.get_run(synced["run_id"])
        assert child.info.status == "FINISHED"
        assert child.data.tags["mlflow.parentRunId"] == parent.info.run_id
        assert child.data.tags["recoeval.sweep_id"] == sweep_id
        overrides = yaml.safe_load((job / ".hydra" / "overrides.yaml").read_text())
        cfg = yaml.safe_load((job / "config.yaml").read_text())
        seen.add((cfg["model"]["name"], cfg["seed"]))
        assert child.data.params["model.name"] == cfg["model"]["name"]
        assert child.data.params["seed"] == str(cfg["seed"])
        assert not any(
            k.startswith(("definitions.", "tracking.", "hydra.")) for k in child.data.params
        )
        # the bounds are a tag, not metrics (no chart section of their own in the UI)
        assert not any("_ci95_" in k for k in child.data.metrics)
        assert "ndcg_at_10" in json.loads(child.data.tags["recoeval.ci95"])
        assert "coverage_at_10" in child.data.metrics  # catalogue-level aggregates too
        assert child.data.tags["recoeval.overrides"] == " ".join(overrides)
        metrics = json.loads((job / "metrics.json").read_text())
        assert child.data.metrics["ndcg_at_10"] == pytest.approx(metrics["ndcg_at_10"], rel=1e-12)
    assert seen == {("als", 0), ("als", 1), ("popularity", 0), ("popularity", 1)}
    # the leaderboard's best value is the best child's
    best = max(c.data.metrics["ndcg_at_10"] for c in children)
    assert parent.data.metrics["best_ndcg_at_10"] == pytest.approx(best, rel=1e-12)


def test_sweep_2x2_joblib_launcher(tmp_path, local_store):
    proc = run_command(
        [
            "-m",
            "model=als,popularity",
            "seed=0,1",
            *TINY_DATA,
            *QUIET,
            "hydra/launcher=joblib",
            "hydra.launcher.n_jobs=2",
            "tracking.precision=exact",
        ],
        tmp_path,
    )
    assert_ok(proc)
    _check_sweep(tmp_path, local_store, "JoblibLauncher")


def test_sweep_2x2_basic_launcher(tmp_path, local_store):
    """Hydra's basic launcher runs the jobs one after the other in the launching process: the
    command's entry point runs in this process (its exit status and output as the process would
    give them); the joblib sweep above runs as a real process, with the launcher's workers."""
    proc = run_main(
        ["-m", "model=als,popularity", "seed=0,1", *TINY_DATA, *QUIET, "tracking.precision=exact"],
        tmp_path,
    )
    assert_ok(proc)
    _check_sweep(tmp_path, local_store, "BasicLauncher")
    # the seconds of MLflow's start before the first job are announced
    said = proc.stdout + proc.stderr
    assert f"creating the sweep's MLflow parent run ({local_store})..." in said
    assert said.index("creating the sweep's MLflow parent run") < said.index("MLflow sweep ")


def test_failing_job_closes_the_parent(tmp_path, local_store):
    # the second job asks for an empty dataset and fails; on_multirun_end never runs. The sweep
    # ran every job and shows the one that ran: its parent is FINISHED, its failure named
    proc = run_command(
        ["-m", "dataset.n_users=100,0", "dataset.n_items=50", "model=popularity", *QUIET], tmp_path
    )
    assert proc.returncode == 2
    assert "'n_users' parameter of make_synthetic" in proc.stderr
    _, runs = _runs(local_store)
    parents = [r for r in runs if r.data.tags.get("recoeval.sweep_parent") == "true"]
    children = [r for r in runs if r.data.tags.get("mlflow.parentRunId")]
    assert len(parents) == 1 and parents[0].info.status == "FINISHED"
    outcome = parents[0].data.tags["recoeval.sweep_outcome"]
    assert outcome.startswith("finished, 1 of 2 jobs failed: #1 (dataset.n_users=0)")
    assert len(children) == 1 and children[0].info.status == "FINISHED"
    assert children[0].data.tags["mlflow.parentRunId"] == parents[0].info.run_id
    assert parents[0].data.metrics["sweep_jobs"] == 1.0


@pytest.mark.parametrize(
    "args,expected",
    [
        (["dataset=movielens_10m"], "no option 'movielens_10m' in the config group 'dataset'"),
        (["model.factors=many"], "the value given to 'model.factors' has the wrong type"),
        (["dataset=movielens_100k"], "'dataset.path' is required"),
    ],
)
def test_bad_override_exits_2_with_one_paragraph(tmp_path, args, expected):
    proc = run_main([*args, "tracking=none"], tmp_path)
    assert proc.returncode == 2
    err = proc.stderr.strip()
    assert expected in err
    assert "Traceback" not in err and len(err.splitlines()) == 1
    assert not (tmp_path / "mlflow.db").exists()


def test_als_beats_popularity_on_movielens_100k(tmp_path, shared_data):
    """Both models through the command on the real u.data (random 20% holdout per user,
    ratings kept as values and every rating a positive, as asked explicitly since MovieLens
    defaults to binary relevance at 4 stars, seed 0). Measured: ALS (16 factors, regularization 0.1, 15
    iterations) ndcg_at_10 = 0.3828, popularity 0.1978."""
    u_data = shared_data / "ml-100k" / "u.data"
    if not u_data.is_file():
        pytest.skip(f"{u_data} not found")
    proc = run_command(
        [
            "-m",
            "dataset=movielens_100k",
            f"dataset.path={u_data}",
            "model=als,popularity",
            "metrics=default",
            "tracking=none",
            "dataset.relevance_level=null",
            "dataset.gains=graded",
            "plots=false",
            "progress=false",
            "nthreads=2",
        ],
        tmp_path,
    )
    assert_ok(proc)
    ndcg = {}
    for job in (p for p in _sweep_dir(tmp_path).iterdir() if p.is_dir()):
        cfg = yaml.safe_load((job / "config.yaml").read_text())
        metrics = json.loads((job / "metrics.json").read_text())
        ds = json.loads((job / "dataset.json").read_text())
        assert (ds["n_users"], ds["n_items"], ds["interactions"]) == (943, 1682, 100_000)
        ndcg[cfg["model"]["name"]] = metrics["ndcg_at_10"]
    assert ndcg["als"] > 0.34
    assert ndcg["popularity"] < 0.23
    assert ndcg["als"] - ndcg["popularity"] > 0.12


# ---------------------------------------------------------------------------------------------
# Bad invocations: every one ends with exit 2 (usage) or 1 (a failure while running) and one
# paragraph on stderr, never a traceback. "cfg" cases are composition errors, checked with
# `--cfg job` (Hydra composes, then stops: the same error path, without running a job); "run"
# cases fail while the job runs. {data} is a folder of bad data files made by the fixture.
# ---------------------------------------------------------------------------------------------

TINY_RUN = [
    "model=popularity",
    "metrics.names=[p,ndcg]",
    "metrics.k=5",
    *QUIET,
    "dataset.n_users=40",
    "dataset.n_items=30",
    "tracking=none",
]
FILE_RUN = TINY_RUN[:6] + ["tracking=none"]

BAD_INVOCATIONS = [
    # -- composition: options, keys, types, syntax (checked with --cfg job) --------------------
    ("cfg", ["dataset=movielens_10m"], 2, "no option 'movielens_10m' in the config group"),
    ("cfg", ["model=bogus"], 2, "no option 'bogus' in the config group 'model'"),
    ("cfg", ["split=bogus"], 2, "no option 'bogus' in the config group 'split'"),
    ("cfg", ["metrics=bogus"], 2, "no option 'bogus' in the config group 'metrics'"),
    ("cfg", ["hydra/launcher=bogus"], 2, "no option 'bogus'"),
    ("cfg", ["model.factor=32"], 2, "'model.factor' is not a setting"),
    ("cfg", ["foo=1"], 2, "'foo' is not a setting"),
    ("cfg", ["dataset.path=x.csv"], 2, "'dataset.path' is not a setting"),
    ("cfg", ["model=popularity", "model.factors=8"], 2, "model=als"),
    ("cfg", ["dataset.columns.user=u"], 2, "dataset=csv / parquet"),
    ("cfg", ["hydra.launcher.n_jobs=2"], 2, "hydra.launcher.n_jobs"),
    ("cfg", ["model.factors=many"], 2, "the value given to 'model.factors' has the wrong type"),
    ("cfg", ["metrics.k=1.5"], 2, "'metrics.k'"),
    ("cfg", ["metrics.k=null"], 2, "'metrics.k'"),
    ("cfg", ["metrics.cumulative=maybe"], 2, "'metrics.cumulative'"),
    ("cfg", ["metrics.names=5"], 2, "'metrics.names'"),
    ("cfg", ["metrics.names={a:1}"], 2, "metrics.names"),
    ("cfg", ["metrics.profile=[a,b]"], 2, "'metrics.profile'"),
    ("cfg", ["metrics.ties=[a,b]"], 2, "'metrics.ties'"),
    ("cfg", ["metrics.block_rows=1.5"], 2, "'metrics.block_rows'"),
    ("cfg", ["seed=1.5"], 2, "'seed'"),
    ("cfg", ["seed=null"], 2, "'seed'"),
    ("cfg", ["plots=perhaps"], 2, "'plots'"),
    ("cfg", ["tracking.uri=[a]"], 2, "'tracking.uri'"),
    ("cfg", ["dataset.implicit.threshold=high"], 2, "'dataset.implicit.threshold'"),
    ("cfg", ["split=kfold", "split.fold=x"], 2, "'split.fold'"),
    ("cfg", ["dataset=csv", "dataset.path=x", "dataset.columns=5"], 2, "dataset.columns"),
    ("cfg", ["dataset=csv", "dataset.path=x", "dataset.columns=[a,b]"], 2, "dataset.columns"),
    ("cfg", ["=1"], 2, "could not apply the command line"),
    ("cfg", ["metrics.names=[p,ndcg"], 2, "could not parse the command line"),
    ("cfg", ["dataset.sep=;"], 2, "could not parse the command line"),
    ("cfg", ["model=als,popularity"], 2, "model"),
    ("cfg", ["--config-name", "nonexistent"], 2, "nonexistent"),
    ("cfg", ["--config-path", "/nonexistent/folder"], 2, "/nonexistent/folder"),
    # -- running: values the library refuses ---------------------------------------------------
    ("run", ["seed=18446744073709551616"], 2, "seed: the value 18446744073709551616 is out of"),
    ("run", ["metrics.seed=-1"], 2, "metrics.seed: The 'seed' parameter of evaluate"),
    ("run", ["metrics.block_rows=-5"], 2, "metrics.block_rows: The 'block_rows' parameter"),
    ("run", ["metrics.ties=bogus"], 2, "metrics.ties: The 'ties' parameter"),
    ("run", ["metrics.profile=bogus"], 2, "metrics.profile: The 'profile' parameter"),
    ("run", ["metrics.k=100000"], 2, "metrics.k must be at most the number of items"),
    ("run", ["metrics.names=[bogus]"], 2, "metrics.names must be names of registered"),
    ("run", ["metrics.names=[]"], 2, "metrics.names:"),
    ("run", ["metrics.backend=gpu"], 2, "metrics.backend must be one of cpu, cuda; got 'gpu'"),
    ("run", ["metrics.serendipity_top_n=-1"], 2, "metrics.serendipity_top_n:"),
    ("run", ["dataset.n_users=0"], 2, "dataset.n_users: The 'n_users' parameter"),
    ("run", ["nthreads=0"], 2, "nthreads: The 'nthreads' parameter of run_job"),
    ("run", ["progress=maybe"], 2, "progress: The 'progress' parameter"),
    ("run", ["split.test_fraction=2"], 2, "split.test_fraction:"),
    ("run", ["split=kfold", "split.fold=7"], 2, "split.fold"),
    ("run", ["dataset.kind=bogus"], 2, "dataset.kind: The 'kind' parameter of load_dataset"),
    ("run", ["model.name=bogus"], 2, "model.name: The 'name' parameter of make_model"),
    ("run", ["model=als", "model.factors=0"], 2, "model.factors"),
    ("run", ["dataset.implicit.method=bogus"], 2, "dataset.implicit.method"),
    ("run", ["dataset.k_core=1000"], 2, "The dataset is empty after preparation"),
    ("run", ["seed=${oops}"], 2, "oops"),
    # -- running: data files -------------------------------------------------------------------
    ("file", ["~dataset"], 2, "'dataset' is required"),
    ("file", ["dataset=csv"], 2, "'dataset.path' is required"),
    ("file", ["dataset=csv", "dataset.path=/nonexistent.csv"], 2, "no such file"),
    ("file", ["dataset=csv", "dataset.path={data}"], 2, "not a regular file"),
    ("file", ["dataset=csv", "dataset.path={data}/empty.csv"], 2, "empty"),
    ("file", ["dataset=csv", "dataset.path={data}/binary.csv"], 2, "load_csv"),
    ("file", ["dataset=csv", "dataset.path={data}/noheader.csv"], 2, "not found in the header"),
    (
        "file",
        ["dataset=csv", "dataset.path={data}/short_rows.csv"],
        2,
        "as many fields as the header",
    ),
    (
        "file",
        ["dataset=csv", "dataset.path={data}/ok.csv", "dataset.columns={user:x,item:y}"],
        2,
        "column(s) ['x', 'y'] not found",
    ),
    ("file", ["dataset=csv", "dataset.path={data}/dup.csv"], 2, "duplicate (user, item) pair"),
    (
        "file",
        ["dataset=csv", "dataset.path={data}/ok.csv", "dataset.duplicates=bogus"],
        2,
        "dataset.duplicates",
    ),
    ("file", ["dataset=csv", "dataset.path={data}/big.csv"], 2, "out of the 64-bit integer range"),
    ("file", ["dataset=csv", "dataset.path={data}/fraction.csv"], 2, "not an integer"),
    ("file", ["dataset=csv", "dataset.path={data}/text_value.csv"], 2, "non-numeric value"),
    ("file", ["dataset=csv", "dataset.path={data}/ok.csv", "dataset.sep=x"], 2, "single field"),
    (
        "file",
        ["dataset=csv", "dataset.path={data}/ok.csv", "dataset.encoding=bogus-8"],
        2,
        "dataset.encoding",
    ),
    (
        "file",
        [
            "dataset=csv",
            "dataset.path={data}/ok.csv",
            "dataset.header=false",
            "dataset.columns={user:user,item:item}",
        ],
        2,
        "column positions",
    ),
    (
        "file",
        ["dataset=csv", "dataset.path={data}/no_time.csv", "split=temporal_global"],
        2,
        "timestamp",
    ),
    ("file", ["dataset=parquet", "dataset.path={data}/ok.csv"], 2, "could not be read as"),
    ("file", ["dataset=movielens_100k", "dataset.path={data}/binary.csv"], 2, "load_csv"),
    ("file", ["model=factors_file", "model.path=/nonexistent.npz"], 2, "model.path"),
    # -- running: a failure that is not a usage error ------------------------------------------
    ("file", ["hydra.run.dir=/proc/no-such-place"], 1, "recoeval-track: "),
]


@pytest.fixture(scope="module")
def bad_data(tmp_path_factory):
    data = tmp_path_factory.mktemp("bad-data")
    rows = [
        f"{u},{i},{1 + (u + i) % 5},{1000 + u * 10 + i}" for u in range(1, 9) for i in range(1, 7)
    ]
    (data / "ok.csv").write_text("user,item,value,timestamp\n" + "\n".join(rows) + "\n")
    (data / "no_time.csv").write_text(
        "user,item,value\n" + "\n".join(r.rsplit(",", 1)[0] for r in rows) + "\n"
    )
    (data / "short_rows.csv").write_text("user,item,value,timestamp\n1,2\n3,4\n")
    (data / "empty.csv").write_text("")
    (data / "binary.csv").write_bytes(bytes(range(256)) * 4)
    (data / "noheader.csv").write_text("a,b,c\n1,2,3\n")
    (data / "dup.csv").write_text("user,item\n1,2\n1,2\n2,3\n")
    (data / "big.csv").write_text("user,item\n" + f"{10**30},1\n" + "2,1\n3,2\n")
    (data / "fraction.csv").write_text("user,item\n1.5,1\n2,1\n")
    (data / "text_value.csv").write_text("user,item,value\n1,1,high\n2,1,3\n")
    return data


def _invocation(case, data: Path) -> list[str]:
    mode, args, _, _ = case
    args = [a.replace("{data}", str(data)) for a in args]
    if mode == "cfg":
        return [*args, "--cfg", "job"]
    base = TINY_RUN if mode == "run" else FILE_RUN
    return [*base, *args]


#: The cases also run as real ``recoeval-track`` processes: one of each kind, and the failure
#: that exits 1 (every case runs in-process below).
IN_PROCESSES = (1, 28, 39, 69, len(BAD_INVOCATIONS) - 1)


def _problems(results, bad_data: Path) -> tuple[list[str], int]:
    """The cases whose exit status, last line of stderr or output is wrong, and the number of
    outputs holding a traceback."""
    problems, tracebacks = [], 0
    for (mode, args, status, expected), proc in results:
        text = proc.stdout + proc.stderr
        tracebacks += "Traceback" in text
        lines = proc.stderr.strip().splitlines()
        last = lines[-1] if lines else ""
        expected = expected.replace("{data}", str(bad_data))
        if (
            proc.returncode != status
            or "Traceback" in text
            or "internal error" in text
            or not last.startswith("recoeval-track: ")
            or expected not in last
        ):
            problems.append(f"{mode} {args}: exit {proc.returncode}, last line {last[:300]!r}")
    return problems, tracebacks


def test_bad_invocations_never_end_in_a_traceback(tmp_path, bad_data):
    """At least 60 bad command lines, each through the command's entry point: the exit status
    is 2 (usage) or 1 (failure), stderr ends with one paragraph naming what to change, and no
    output holds a traceback or the bug message. They run in this process (what escapes the
    entry point counts as a traceback); the next test runs some as real processes."""
    assert len(BAD_INVOCATIONS) >= 60
    results = []
    for i, case in enumerate(BAD_INVOCATIONS):
        cwd = tmp_path / f"c{i}"
        cwd.mkdir()
        results.append((case, run_main(_invocation(case, bad_data), cwd)))
    problems, tracebacks = _problems(results, bad_data)
    print(f"{len(BAD_INVOCATIONS)} bad invocations, {tracebacks} ending in a traceback")
    assert tracebacks == 0
    assert not problems, "\n".join(problems)


def test_bad_invocations_as_real_processes(tmp_path, bad_data):
    """Some of the bad command lines as real ``recoeval-track`` processes (all at once): the
    process exits with the status, and says on stderr what, the entry point does in-process."""
    from concurrent.futures import ThreadPoolExecutor

    assert [BAD_INVOCATIONS[i][0] for i in IN_PROCESSES] == ["cfg", "cfg", "run", "file", "file"]
    assert BAD_INVOCATIONS[IN_PROCESSES[-1]][2] == 1
    script = Path(sys.executable).with_name("recoeval-track")
    if not script.is_file():
        pytest.skip("the recoeval-track console script is not installed in this environment")

    def one(i):
        case = BAD_INVOCATIONS[i]
        cwd = tmp_path / f"c{i}"
        cwd.mkdir()
        proc = run_process([str(script), *_invocation(case, bad_data)], cwd)
        return case, proc

    with ThreadPoolExecutor(max_workers=len(IN_PROCESSES)) as pool:
        results = list(pool.map(one, IN_PROCESSES))
    problems, tracebacks = _problems(results, bad_data)
    assert tracebacks == 0
    assert not problems, "\n".join(problems)
