"""Faults injected into real processes against a real ``mlflow server`` on 127.0.0.1: concurrent
syncs and first runs, SIGKILL at each stage of a job and of a sweep, a full disk, a store down at
sweep start, bad folders, and secrets in overrides. Each scenario asserts the counts: one run
per job, no duplicate, nothing deleted, no RUNNING leftover, nothing pending, nothing lost.

Every command with a fault, every command that races another, and every sync whose failure
(exit 1, one paragraph, no traceback) is judged runs as its own process (``inject.py`` injects
the fault: a SIGKILL the process sends itself at a named point, a failing write). A command with
nothing injected that runs alone (the sync that recovers after a fault, the sweep whose store is
down throughout) runs its entry point in this process (:func:`conftest.sync_here`,
:func:`commands.run_main`: its exit status and output as the process would give them), as does
the one refused at load before any work; jobs are tiny (synthetic data, popularity, two metrics,
no plots). The module shares one server; each test has its own experiment.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest
from commands import run_main
from mlflow_server import dead_uri

from recoeval_tracking.jobdir import (
    INCOMPLETE,
    PENDING,
    SYNCED,
    UPLOADING,
    job_dir_state,
    read_job_dir,
    write_job_dir,
)
from recoeval_tracking.tracking.pending import PENDING_SWEEP, mark_pending
from recoeval_tracking.tracking.runs import log_job_dir, set_marker, upload_args
from recoeval_tracking.tracking.sweeps import write_sweep_record

from .conftest import (
    TINY,
    counts,
    job_dirs,
    load_results_factory,
    record,
    run,
    run_all,
    sync_here,
)

make_results = load_results_factory()
SECRET = "S3cr3t-do-not-log"

pytestmark = pytest.mark.slow

ZERO = {"duplicates": 0, "deleted": 0, "running": 0, "pending": 0, "lost": 0}


def _ok(proc) -> None:
    assert proc.returncode == 0, (
        f"exit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    )


def _one_paragraph(proc) -> str:
    err = proc.stderr.strip()
    assert "Traceback" not in proc.stderr + proc.stdout
    last = err.splitlines()[-1]
    assert last.startswith("recoeval-track: ") and "\n" not in last
    return last


def _client(uri):
    from mlflow import MlflowClient

    return MlflowClient(uri)


def _sweep_parent(uri: str, experiment: str):
    """The parent run of the experiment's one sweep."""
    c = _client(uri)
    exp = c.get_experiment_by_name(experiment)
    return c.search_runs([exp.experiment_id], "tags.`recoeval.sweep_parent` = 'true'")[0]


def _one_run_per_job(numbers: dict, jobs: int, parents: int | None = 1) -> None:
    """``jobs`` job folders, each logged once (under ``parents`` sweep parents; None: not
    counted): nothing duplicated, deleted, left running, pending or lost."""
    assert numbers["jobs"] == numbers["runs"] == jobs
    assert parents is None or numbers["parents"] == parents
    assert {k: numbers[k] for k in ZERO} == ZERO


def _track(server, experiment: str, *extra: str) -> list[str]:
    return [*TINY, f"tracking.uri={server.uri}", f"tracking.experiment={experiment}", *extra]


def _seeds(server, experiment: str, n: int = 4) -> list[str]:
    """The arguments of a sweep of ``n`` jobs (seeds 0 to n - 1) into ``multirun``."""
    seeds = ",".join(str(i) for i in range(n))
    return ["-m", *_track(server, experiment), f"seed={seeds}", "hydra.sweep.dir=multirun"]


# ---------------------------------------------------------------------------------------------
# secrets
# ---------------------------------------------------------------------------------------------


def _texts_in_store(uri: str, experiment: str, dest: Path) -> list[str]:
    """Every name, tag, param and artifact text of the experiment's runs."""
    c = _client(uri)
    exp = c.get_experiment_by_name(experiment)
    texts = []
    for r in c.search_runs([exp.experiment_id], max_results=100):
        texts += (
            [r.info.run_name or ""]
            + list(r.data.tags.values())
            + list(r.data.tags)
            + list(r.data.params.values())
            + list(r.data.params)
        )
        local = Path(c.download_artifacts(r.info.run_id, "", str(dest / r.info.run_id)))
        texts += [
            p.read_text(errors="replace")
            for p in local.rglob("*")
            if p.is_file() and p.suffix in (".csv", ".json", ".yaml", ".txt", ".md")
        ]
    return texts


#: Credentials known by their value, whatever their key: a passphrase, a personal access token
#: (``pat``), a ``Bearer`` value under an innocent key, and a value taken from an innocently
#: named environment variable (``${oc.env:...}``).
VALUES = {
    "passphrase": "pp-Zq81",
    "pat": "pat-Wq72",
    "bearer": "bear-Xk93ab",
    "env": "from-env-Vn64",
}


@pytest.fixture(scope="module")
def secrets_sweep(tmp_path_factory, server):
    """One sweep of two jobs holding every secret of the two tests below (the redaction goes key
    by key and value by value: no secret is hidden through another), one process instead of
    two: its process, its folder, and every text of its runs in the store."""
    root = tmp_path_factory.mktemp("secrets")
    uri_with_password = server.uri.replace("http://", f"http://bob:{SECRET}@")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RECOEVAL_TEST_NOTE", VALUES["env"])  # an innocent name
        proc = run(
            "none",
            "track",
            [
                "-m",
                *TINY,
                f"tracking.uri={uri_with_password}",
                "tracking.experiment=secrets",
                f"+db.password={SECRET}",
                f"+db.passphrase={VALUES['passphrase']}",
                f"+db.pat={VALUES['pat']}",
                f"+db.header='Bearer {VALUES['bearer']}'",
                "+db.note=${oc.env:RECOEVAL_TEST_NOTE}",
                "seed=0,1",
                "hydra.sweep.dir=multirun",
            ],
            root,
        )
    _ok(proc)
    texts = _texts_in_store(server.uri, "secrets", root / "downloaded")
    return root, proc, [*texts, proc.stdout, proc.stderr]  # the terminal too


def _local_files(root: Path) -> list[tuple[Path, str]]:
    """The text of every file in the job folders but Hydra's own copies."""
    return [
        (p, p.read_text(errors="replace"))
        for p in (root / "multirun").rglob("*")
        if p.is_file()
        and ".hydra" not in p.parts
        and p.name not in ("multirun.yaml", "recoeval_sweep.json")
    ]


def test_secrets_in_overrides_leak_nowhere(secrets_sweep, server):
    """Overrides holding credentials (a URL password Hydra escapes as ``\\:``, a ``+db.password``)
    reach no run name, tag, param, artifact, leaderboard or description, nor the job folders
    (Hydra's own ``.hydra/`` copies aside)."""
    root, _, texts = secrets_sweep
    leaks = [t for t in texts if SECRET in t]
    local = [p for p, text in _local_files(root) if SECRET in text]
    parent = _sweep_parent(server.uri, "secrets")
    assert "<redacted>" in parent.data.tags["recoeval.overrides"]
    numbers = record(
        "secrets in overrides (URL password, +db.password)",
        counts(server.uri, "secrets", root),
        leaks=len(leaks) + len(local),
    )
    assert leaks == [] and local == []
    _one_run_per_job(numbers, 2)


def test_secrets_known_by_their_value_leak_nowhere(secrets_sweep, server):
    """A passphrase, a personal access token (``pat``), a ``Bearer`` value under an innocent
    key, and a value taken from an innocently named environment variable
    (``${oc.env:...}``) reach no run, param, artifact, leaderboard or job-folder file."""
    root, _, texts = secrets_sweep
    leaks = [(name, t[:200]) for t in texts for name, v in VALUES.items() if v in t]
    local = [
        (name, str(p)) for p, text in _local_files(root) for name, v in VALUES.items() if v in text
    ]
    numbers = record(
        "secrets known by value (passphrase, pat, Bearer, ${oc.env:...})",
        counts(server.uri, "secrets", root),
        leaks=len(leaks) + len(local),
    )
    assert leaks == [] and local == []
    _one_run_per_job(numbers, 2, None)


# ---------------------------------------------------------------------------------------------
# concurrency
# ---------------------------------------------------------------------------------------------


def _sweep_folders(root: Path, experiment: str, server_uri: str, n: int = 8) -> str:
    """A sweep whose store was down from its start: ``n`` jobs in every state a sync meets
    (PENDING, UPLOADING with a half-made run on the server, complete but never marked)."""
    dead = dead_uri()
    sweep_id = "sw" + experiment[-6:]
    write_sweep_record(
        root,
        {
            "sweep_id": sweep_id,
            "parent_run_id": None,
            "tracking_uri": dead,
            "experiment": experiment,
        },
    )
    set_marker(
        root,
        PENDING_SWEEP,
        {
            "sweep_id": sweep_id,
            "parent_run_id": None,
            "status": "FINISHED",
            "experiment": experiment,
            "tracking_uri": dead,
        },
    )
    upload = upload_args(experiment=experiment, sweep_id=sweep_id)
    c = _client(server_uri)
    exp_id = c.create_experiment(experiment)
    for i in range(n):
        config = {"tracking": {"enabled": True, "uri": None, "experiment": experiment}, "seed": i}
        path = write_job_dir(
            make_results(n_users=30, k=3, seed=i),
            root / str(i),
            plots=False,
            config_yaml=config,
            overrides=[f"seed={i}"],
        )
        (path / ".hydra").mkdir()
        if i % 4 in (0, 1):
            mark_pending(path, dead, ConnectionError("refused"), upload)
        elif i % 4 == 2:  # an upload cut off after its run was created
            uid = read_job_dir(path, per_user=False).job_uid
            run_id = c.create_run(exp_id, tags={"recoeval.job_uid": uid}).info.run_id
            c.log_metric(run_id, "p_at_3", 0.5)
            set_marker(
                path, UPLOADING, {"tracking_uri": server_uri, "run_id": run_id, "upload": upload}
            )
        # i % 4 == 3: complete, never marked (killed between writing and uploading)
    return sweep_id


def test_concurrent_syncs_on_one_sweep_folder(tmp_path, server):
    """Three ``recoeval-track-sync`` started together on the same eight jobs: one run per job,
    one parent, nothing deleted or left RUNNING."""
    sweep = tmp_path / "multirun"
    _sweep_folders(sweep, "concurrent-syncs", server.uri)
    procs = run_all([("none", "sync", [sweep, "--tracking-uri", server.uri], tmp_path)] * 3)
    for proc in procs:
        _ok(proc)
    numbers = record(
        "3 concurrent syncs on one sweep folder", counts(server.uri, "concurrent-syncs", sweep)
    )
    _one_run_per_job(numbers, 8)
    assert numbers["sweep_ids"] == 1
    assert not (sweep / PENDING_SWEEP).exists()
    parent = _sweep_parent(server.uri, "concurrent-syncs")
    assert parent.info.status == "FINISHED"
    kids = _client(server.uri).search_runs(
        [parent.info.experiment_id], f"tags.`mlflow.parentRunId` = '{parent.info.run_id}'"
    )
    assert len(kids) == 8


def test_syncs_running_while_the_sweep_runs(tmp_path, server):
    """Two syncs started with a sweep on the same folder: they may upload a job before the job
    does (it then finds its run) and leave the running sweep's parent open; one run per job."""
    exp = "syncs-during-sweep"
    sweep = tmp_path / "multirun"
    sweep.mkdir()
    procs = run_all(
        [
            (
                "none",
                "track",
                _seeds(server, exp),
                tmp_path,
            )
        ]
        + [("none", "sync", [sweep], tmp_path)] * 2
    )
    for proc in procs:
        _ok(proc)
    _one_run_per_job(record("2 syncs while the sweep runs", counts(server.uri, exp, sweep)), 4)
    parent = _sweep_parent(server.uri, exp)
    assert parent.info.status == "FINISHED" and parent.data.metrics["sweep_jobs"] == 4


def test_concurrent_first_runs_share_one_new_sqlite_store(tmp_path):
    """Two sweeps started together in a folder with no ``mlflow.db`` yet: the schema is created
    once (under the lock beside the database) and every job lands in it. One job each: the
    race is at each sweep's first use of the store (its parent run), before any job."""
    common = [*TINY, "tracking=local", "tracking.experiment=first-runs", "seed=0"]
    procs = run_all(
        [
            ("none", "track", ["-m", *common, f"hydra.sweep.dir=multirun/{name}"], tmp_path)
            for name in ("a", "b")
        ]
    )
    for proc in procs:
        _ok(proc)
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    numbers = record(
        "2 first runs at once on a new SQLite store",
        counts(uri, "first-runs", tmp_path / "multirun"),
    )
    _one_run_per_job(numbers, 2, 2)
    with sqlite3.connect(tmp_path / "mlflow.db") as db:
        tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
    assert not [t for t in tables if t.startswith("_alembic_tmp")]


# ---------------------------------------------------------------------------------------------
# SIGKILL at each stage of a job; a full disk
# ---------------------------------------------------------------------------------------------

STAGES = ("kill-before-job-json", "kill-before-upload", "kill-mid-upload", "kill-after-finish")


def test_sigkill_at_each_stage_of_a_job_then_sync(tmp_path, server):
    """A job killed while writing leaves a folder marked INCOMPLETE that is never uploaded (and
    ``log_job_dir`` refuses it, however often it is called); a job killed before, during or
    after its upload is found and finished by sync: one run each, none deleted."""
    exp = "sigkill-job"
    procs = run_all(
        [
            (fault, "track", [*_track(server, exp), f"hydra.run.dir=jobs/{fault}"], tmp_path)
            for fault in STAGES
        ]
    )
    for proc in procs:
        assert proc.returncode == -9, proc.stderr[-2000:]
    jobs = tmp_path / "jobs"
    cut = jobs / "kill-before-job-json"
    assert job_dir_state(cut) == "incomplete" and (cut / "per_user.parquet").is_file()
    assert not list(cut.rglob("*.recoeval-tmp"))
    for _ in range(2):
        with pytest.raises(Exception, match="INCOMPLETE"):
            log_job_dir(cut, tracking_uri=server.uri, experiment=exp)
    assert (jobs / "kill-mid-upload" / UPLOADING).is_file()
    before = counts(server.uri, exp, jobs)
    assert before["running"] == 1  # the run of the job killed mid-upload
    sync = sync_here([jobs], tmp_path)
    _ok(sync)
    assert "incomplete" in sync.stdout and str(cut) in sync.stdout
    numbers = record("SIGKILL at 4 stages of a job, then sync", counts(server.uri, exp, jobs))
    _one_run_per_job(numbers, 3, None)
    for stage in STAGES[1:]:
        assert (jobs / stage / SYNCED).is_file()


def test_sigkill_of_a_sync_mid_upload_then_sync_again(tmp_path, server):
    """A sync killed in the middle of an upload leaves the run RUNNING and the folder marked
    UPLOADING; the next sync finishes that same run."""
    exp = "sigkill-sync"
    root = tmp_path / "jobs"
    for i in range(2):
        path = write_job_dir(make_results(n_users=30, k=3, seed=i), root / str(i), plots=False)
        mark_pending(path, dead_uri(), ConnectionError("refused"), upload_args(experiment=exp))
    killed = run("kill-mid-upload", "sync", [root, "--tracking-uri", server.uri], tmp_path)
    assert killed.returncode == -9
    assert counts(server.uri, exp, root)["running"] == 1
    _ok(sync_here([root, "--tracking-uri", server.uri], tmp_path))
    numbers = record("SIGKILL of a sync mid-upload, then sync", counts(server.uri, exp, root))
    _one_run_per_job(numbers, 2, None)


def test_full_disk_while_writing_the_job_folder(tmp_path, server):
    """A write that fails as on a full disk: one paragraph naming the folder and what was kept,
    exit 1, no traceback; the folder stays INCOMPLETE (no truncated file under a final name)
    and nothing is uploaded, by the job or by sync."""
    exp = "full-disk"
    proc = run("enospc-per-user", "track", [*_track(server, exp), "hydra.run.dir=job"], tmp_path)
    assert proc.returncode == 1
    message = _one_paragraph(proc)
    job = tmp_path / "job"
    assert str(job) in message and "No space left on device" in message
    assert "per_user.parquet" in message and "Kept: metrics.json" in message
    assert job_dir_state(job) == "incomplete" and (job / INCOMPLETE).is_file()
    assert not (job / "per_user.parquet").exists()
    assert not [p for p in job.iterdir() if "recoeval-tmp" in p.name]
    _ok(sync_here([job, "--tracking-uri", server.uri], tmp_path))
    for _ in range(2):
        with pytest.raises(Exception, match="INCOMPLETE"):
            log_job_dir(job, tracking_uri=server.uri, experiment=exp)
    numbers = record("full disk while writing (ENOSPC)", counts(server.uri, exp, job))
    _one_run_per_job(numbers, 0, None)


# ---------------------------------------------------------------------------------------------
# sweeps
# ---------------------------------------------------------------------------------------------


def test_sigkill_of_a_sweep_then_sync_closes_its_parent(tmp_path, server):
    """A sweep killed outright (SIGKILL, no exit handler) leaves its parent RUNNING; sync sees
    the sweep's lock is free and closes it as KILLED."""
    exp = "sigkill-sweep"
    proc = run("kill-third-job", "track", _seeds(server, exp), tmp_path)
    assert proc.returncode == -9
    sweep = tmp_path / "multirun"
    assert counts(server.uri, exp, sweep)["running"] == 1  # the parent
    _ok(sync_here([sweep], tmp_path))
    numbers = record("SIGKILL of a sweep at its 3rd job, then sync", counts(server.uri, exp, sweep))
    _one_run_per_job(numbers, 2)
    parent = _sweep_parent(server.uri, exp)
    assert parent.info.status == "KILLED"


def test_store_down_for_a_whole_sweep_then_sync(tmp_path, server):
    """The store is down from the sweep's start to its end: every job is PENDING, the sweep
    records its id; sync creates one parent for that sweep id and links every job to it (two
    jobs: every one of them, not just the first)."""
    exp = "down-whole-sweep"
    proc = run_main(
        [
            "-m",
            *TINY,
            f"tracking.uri={dead_uri()}",
            f"tracking.experiment={exp}",
            "seed=0,1",
            "hydra.sweep.dir=multirun",
        ],
        tmp_path,
    )
    _ok(proc)
    sweep = tmp_path / "multirun"
    assert len(list(sweep.glob("*/PENDING"))) == 2 and (sweep / PENDING_SWEEP).is_file()
    _ok(sync_here([sweep, "--tracking-uri", server.uri], tmp_path))
    numbers = record("store down for a whole sweep, then sync", counts(server.uri, exp, sweep))
    _one_run_per_job(numbers, 2)
    assert numbers["sweep_ids"] == 1


def test_store_down_only_at_sweep_start(tmp_path, server):
    """The parent cannot be created at the sweep's start; the jobs create it once by sweep id
    (under the sweep's parent lock) and the sweep's end closes it: no sync needed. Two jobs:
    the first creates the parent, the second finds it."""
    exp = "down-at-start"
    proc = run("parent-fails-once", "track", _seeds(server, exp, 2), tmp_path)
    _ok(proc)
    assert "could not create the sweep's parent run" in proc.stderr
    sweep = tmp_path / "multirun"
    numbers = record("store down at sweep start only", counts(server.uri, exp, sweep))
    _one_run_per_job(numbers, 2)
    assert numbers["sweep_ids"] == 1
    parent = _sweep_parent(server.uri, exp)
    assert parent.info.status == "FINISHED" and parent.data.metrics["sweep_jobs"] == 2


# ---------------------------------------------------------------------------------------------
# bad folders
# ---------------------------------------------------------------------------------------------


def test_bad_folders_are_reported_and_skipped(tmp_path, server):
    """Among pending folders, one without results and one whose marker is not JSON (and whose
    store is recorded nowhere) are named and skipped; the good ones are uploaded; nothing is
    written to a store in the current directory."""
    exp = "bad-folders"
    root = tmp_path / "jobs"
    dead = dead_uri()
    upload = upload_args(experiment=exp)
    for i in range(3):  # their store was down; it is back
        path = write_job_dir(make_results(n_users=30, k=3, seed=i), root / f"good{i}", plots=False)
        mark_pending(path, server.uri, ConnectionError("refused"), upload)
    empty = root / "no-results"
    empty.mkdir()
    (empty / PENDING).write_text(json.dumps({"tracking_uri": dead, "upload": upload}))
    broken = write_job_dir(
        make_results(n_users=30, k=3, seed=9),
        root / "broken-marker",
        plots=False,
        config_yaml={"tracking": {"enabled": True, "uri": None, "experiment": exp}},
    )
    (broken / PENDING).write_text("{not json")
    recorded = write_job_dir(
        make_results(n_users=30, k=3, seed=8),
        root / "marker-not-json",
        plots=False,
        config_yaml={"tracking": {"enabled": True, "uri": server.uri, "experiment": exp}},
    )
    (recorded / PENDING).write_text("{not json")
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    proc = run("none", "sync", [root], cwd)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    assert re.search(rf"skipped {re.escape(str(empty))}: .*no results", proc.stderr)
    assert re.search(rf"skipped {re.escape(str(broken))}: .*--tracking-uri", proc.stderr)
    assert not (cwd / "mlflow.db").exists()
    first = counts(server.uri, exp, root)
    # the good ones, and the one whose config names its store, are uploaded; the two bad
    # folders keep their markers; the broken marker's job waits for a store to be given
    assert first["runs"] == 4 and first["pending"] == 2 and first["lost"] == 1
    _ok(sync_here([broken, "--tracking-uri", server.uri], cwd))
    numbers = record(
        "bad folders among pending ones (no results, marker not JSON)",
        counts(server.uri, exp, root),
    )
    assert numbers["jobs"] == numbers["runs"] == 5
    assert numbers["pending"] == 1  # the folder without results, named by every sync
    assert {k: numbers[k] for k in ZERO if k != "pending"} == {k: 0 for k in ZERO if k != "pending"}


def test_a_truncated_per_user_table_leaves_no_half_made_run(tmp_path, server):
    """A pending job whose ``per_user.parquet`` was cut off (a copy interrupted, a disk error)
    used to get an active FAILED run holding all its metrics, the folder still PENDING: the
    sync checks the folder whole first, names the file, makes no run and keeps the folder
    pending; the good job beside it is uploaded. Written again, the job uploads."""
    exp = "truncated-table"
    root = tmp_path / "jobs"
    upload = upload_args(experiment=exp)
    good = write_job_dir(make_results(n_users=30, k=3, seed=0), root / "good", plots=False)
    bad = write_job_dir(make_results(n_users=30, k=3, seed=1), root / "bad", plots=False)
    for path in (good, bad):
        mark_pending(path, server.uri, ConnectionError("refused"), upload)
    table = bad / "per_user.parquet"
    table.write_bytes(table.read_bytes()[:-200])
    proc = run("none", "sync", [root], tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    assert re.search(
        rf"skipped {re.escape(str(bad))}: .*per_user\.parquet", proc.stdout + proc.stderr
    )
    c = _client(server.uri)
    runs = c.search_runs([c.get_experiment_by_name(exp).experiment_id])
    assert [r.info.status for r in runs] == ["FINISHED"]  # the good job only
    assert (bad / PENDING).is_file() and "per_user.parquet" in json.loads(
        (bad / PENDING).read_text()
    )["error"]
    write_job_dir(make_results(n_users=30, k=3, seed=2), bad, plots=False)
    mark_pending(bad, server.uri, ConnectionError("refused"), upload)
    _ok(sync_here([root], tmp_path))
    numbers = record(
        "a pending job with a truncated per_user.parquet", counts(server.uri, exp, root)
    )
    _one_run_per_job(numbers, 2, None)


def test_ids_beyond_64_bits_are_refused_at_load(tmp_path):
    """Ids of 10^30 used to pass the whole job and then fail writing ``per_user.parquet``:
    they are refused at load, before any work, with the column and line named. No fault is
    injected and no process is killed: the command's entry point runs in this process (its
    exit status and stderr as the process would give them)."""
    data = tmp_path / "big.csv"
    rows = ["user,item,value", f"{10**30},1,1"] + [
        f"{u},{i},1" for u in range(1, 8) for i in range(1, 6)
    ]
    data.write_text("\n".join(rows) + "\n")
    proc = run_main(
        [*TINY[:6], "dataset=csv", f"dataset.path={data}", "tracking=none", "hydra.run.dir=job"],
        tmp_path,
    )
    assert proc.returncode == 2
    message = _one_paragraph(proc)
    assert "out of the 64-bit integer range" in message and "line 2" in message
    assert not job_dirs(tmp_path / "job")
    record(
        "ids of 10^30 (refused at load)",
        {
            "jobs": 0,
            "runs": 0,
            "parents": 0,
            "duplicates": 0,
            "deleted": 0,
            "running": 0,
            "pending": 0,
            "lost": 0,
        },
    )
