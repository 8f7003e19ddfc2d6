"""A job's fixed cost: composing its config, writing its folder (tables, plots), logging to MLflow.

The job is ``recoeval-track dataset=movielens_100k model=item_knn`` (MovieLens 100K from
``--data``, by default ``/work/shared/data/ml-100k/u.data`` when it exists; otherwise the same
sizes of synthetic data: 943 users x 1,682 items, 100,000 interactions), ``progress=false``,
logged to a SQLite store in a temporary folder. Every figure is read from the terminal as a user
sees it (each line timed as it arrives, as ``bench_cold_start.py`` does) and from the seconds the
job prints itself (``fit``, ``eval``, and the folder's and the upload's own figures when the
version prints them). Each stage:

* ``start``: the command's start to the job's first stage line (the interpreter, the imports,
  Hydra composing the config), in a new process; for a sweep's later job, Hydra's launcher line
  (``#1 : ...``) to the job's first stage line: composing its config and starting it;
* ``compose``: Hydra composing the job's config (``hydra.compose``), timed in this process
  after a first composition: what each job of a sweep pays for its config;
* ``fit``, ``eval``: the job's own ``timings:`` line;
* ``write folder``: the line that announces the folder to the summary printed once it is
  written (tables, plots, ``job.json``); ``plots``: the part of it the job reports for plots;
* ``MLflow log``: the line that announces the upload to the run id's line;
* ``fixed cost`` = compose + write folder + MLflow log (target <= 1 s on a warm store);
  beside it, each single run's whole command (its wall seconds, the imports of a new process
  included).

Rows: the first run makes the store (``new store``), then ``--repeat`` single runs on that warm
store, each a new process (``single run``), then one sweep of ``--jobs`` jobs in one process on
the warm store (``sweep job #i``; its first job starts the process). The judged figures are the
medians of the single runs and of the sweep's later jobs. Each command's CPU seconds (its
process and the children it waited for) are printed beside its wall. Last, ``--repeat`` times
each in a new process: ``recoeval-track --help`` and a sweep of two tiny jobs on the warm store
(``-m model=popularity,random dataset.n_users=60 dataset.n_items=30 plots=false``), whose
seconds are little but a process's fixed cost. The CPU and the load are printed first.

Usage::

    python benchmarks/bench_job.py                       # about a minute on 2 quiet cores
    python benchmarks/bench_job.py --repeat 5 --jobs 4 --show-lines
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cold_start import cpu_info  # noqa: E402

DEFAULT_DATA = Path("/work/shared/data/ml-100k/u.data")
#: The synthetic stand-in for MovieLens 100K (its sizes).
SYNTHETIC = [
    "dataset=synthetic",
    "dataset.n_users=943",
    "dataset.n_items=1682",
    "dataset.n_interactions=100000",
]
TARGET = 1.0


def job_args(data: Path | None) -> list[str]:
    """The job's overrides (MovieLens 100K when ``data`` is given, else synthetic)."""
    source = ["dataset=movielens_100k", f"dataset.path={data}"] if data is not None else SYNTHETIC
    return [*source, "model=item_knn", "progress=false"]


def _command() -> list[str]:
    beside = Path(sys.executable).parent / "recoeval-track"  # this environment's entry point
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "recoeval_tracking"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


#: The CPU seconds of the last :func:`run` (its process and the children it waited for).
last_cpu = [0.0]


def run(args: list[str], workdir: Path) -> tuple[float, list[tuple[float, str]]]:
    """Run ``recoeval-track ARGS`` in ``workdir``: its wall seconds and its lines, each with
    the seconds since the start at which it arrived (its CPU seconds in ``last_cpu[0]``)."""
    env = {
        k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "MLFLOW_TRACKING_URI")
    }
    cpu0 = _children_cpu()
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [*_command(), *args],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    lines = [(time.perf_counter() - t0, line.rstrip("\n")) for line in proc.stdout]
    code = proc.wait()
    wall = time.perf_counter() - t0
    last_cpu[0] = _children_cpu() - cpu0
    if code != 0:
        raise SystemExit(
            f"recoeval-track failed ({code}):\n" + "\n".join(f"{t:6.2f} {s}" for t, s in lines)
        )
    return wall, lines


def _at(lines: list[tuple[float, str]], text: str, start: int = 0) -> tuple[int, float]:
    for i in range(start, len(lines)):
        if text in lines[i][1]:
            return i, lines[i][0]
    shown = "\n".join(f"{t:6.2f} {s[:200]}" for t, s in lines[start:])
    raise SystemExit(f"no line with {text!r} in the output:\n{shown}")


_SECONDS = re.compile(r"(\w+) ([0-9.]+) s")


def job_stages(lines: list[tuple[float, str]], start: int, begun: float) -> tuple[dict, int]:
    """The stage seconds of the job whose lines begin at index ``start`` (``begun``: the time
    its start is counted from) and the index of its last line."""
    i_load, t_load = _at(lines, "] - loading dataset", start)
    i_timings, _ = _at(lines, "timings: ", i_load)
    own = dict(_SECONDS.findall(lines[i_timings][1].split("timings: ", 1)[1].split(";")[0]))
    i_write, t_write = _at(lines, "] - writing the job directory", i_load)
    i_summary, t_summary = _at(lines, " at K=", i_write)
    i_log, t_log = _at(lines, "] - logging the job to MLflow", i_summary)
    i_run, t_run = _at(lines, "] - MLflow run ", i_log)
    plots = re.search(r"plots ([0-9.]+) s", lines[i_timings][1])
    return {
        "start": t_load - begun,
        "fit": float(own.get("fit", "nan")),
        "eval": float(own.get("eval", "nan")),
        "write folder": t_summary - t_write,
        "plots": float(plots.group(1)) if plots else float("nan"),
        "MLflow log": t_run - t_log,
    }, i_run


def compose_seconds(args: list[str], repeat: int = 5) -> float:
    """The median seconds of ``hydra.compose`` of the app's config with ``args`` in this
    process, after a first composition (imports and Hydra's set-up left out)."""
    from hydra import compose, initialize_config_module

    from recoeval_tracking.app import cli, schema  # noqa: F401 - schema: the structured configs
    from recoeval_tracking.app.cli import config_path

    cli.register_search_plugin()  # as the command does (an editable install hides the plugins)
    if hasattr(cli, "share_config_store"):  # as the command composes (versions that do)
        cli.share_config_store()

    module = config_path().removeprefix("pkg://")
    overrides = [a for a in args if "=" in a]
    times = []
    with initialize_config_module(module, version_base="1.3"):
        compose("config", overrides=overrides)
        for _ in range(repeat):
            t0 = time.perf_counter()
            compose("config", overrides=overrides)
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _row(name: str, stages: dict, compose: float, wall: float | None = None) -> dict:
    fixed = compose + stages["write folder"] + stages["MLflow log"]
    cells = ", ".join(f"{k} {v:.2f}" for k, v in stages.items())
    whole = f"; the command {wall:.2f} s ({last_cpu[0]:.2f} CPU-s)" if wall is not None else ""
    print(f"{name:>14}: {cells}; fixed cost {fixed:.2f} s{whole}")
    return {**stages, "fixed": fixed, "wall": wall, "cpu": last_cpu[0]}


def _median(rows: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def _summary(name: str, rows: list[dict], compose: float) -> None:
    if not rows:
        return
    parts = [f"compose {compose:.2f}"] + [
        f"{k} {_median(rows, k):.2f}" for k in ("write folder", "plots", "MLflow log")
    ]
    fixed = _median(rows, "fixed")
    verdict = "met" if fixed <= TARGET else "missed"
    walls = [r["wall"] for r in rows if r.get("wall") is not None]
    whole = (
        f"; the whole command {statistics.median(walls):.2f} s ({_median(rows, 'cpu'):.2f} CPU-s)"
        if walls
        else ""
    )
    print(
        f"{name}, median of {len(rows)}: {', '.join(parts)} -> fixed cost {fixed:.2f} s "
        f"(target <= {TARGET:.1f} s: {verdict}){whole}"
    )


#: A sweep of two tiny jobs on the warm store, no plots: little but the process's fixed cost.
TINY_SWEEP = [
    "-m",
    "model=popularity,random",
    "dataset.n_users=60",
    "dataset.n_items=30",
    "plots=false",
    "progress=false",
]


def _small_commands(work: Path, repeat: int) -> None:
    """``recoeval-track --help`` and :data:`TINY_SWEEP`, each ``repeat`` times in a new
    process: their wall and CPU seconds (medians)."""
    for name, args in (
        ("--help", ["--help"]),
        ("tiny sweep", TINY_SWEEP),
    ):
        walls, cpus = [], []
        for i in range(repeat):
            extra = [f"hydra.sweep.dir=tiny/{i}"] if args is TINY_SWEEP else []
            walls.append(run([*args, *extra], work)[0])
            cpus.append(last_cpu[0])
        print(
            f"{name:>14}: wall {statistics.median(walls):.2f} s, "
            f"{statistics.median(cpus):.2f} CPU-s (median of {repeat}: "
            f"{', '.join(f'{c:.2f}' for c in cpus)} CPU-s)"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA if DEFAULT_DATA.is_file() else None)
    ap.add_argument("--repeat", type=int, default=3, help="single runs on the warm store")
    ap.add_argument("--jobs", type=int, default=3, help="jobs of the sweep")
    ap.add_argument("--show-lines", action="store_true", help="every run's lines, timed")
    args = ap.parse_args()
    print(f"CPU: {cpu_info()}; load average {os.getloadavg()[0]:.2f}")
    print(f"python {platform.python_version()}; data: {args.data or 'synthetic, ML-100K sizes'}")
    job = job_args(args.data)
    compose = compose_seconds(job)
    work = Path(tempfile.mkdtemp(prefix="bench-job-"))
    try:
        shown = []
        # each run in a folder of its own (Hydra's default names folders by the second)
        wall, lines = run([*job, "hydra.run.dir=runs/0"], work)  # makes the store
        shown.append(("new store", lines))
        _row("new store", job_stages(lines, 0, 0.0)[0], compose)
        singles = []
        for i in range(args.repeat):
            wall, lines = run([*job, f"hydra.run.dir=runs/{i + 1}"], work)
            shown.append((f"single run {i + 1}", lines))
            stages = job_stages(lines, 0, 0.0)[0]
            singles.append(_row(f"single run {i + 1}", stages, compose, wall))
        neighbours = ",".join(str(50 + 10 * j) for j in range(args.jobs))
        wall, lines = run(
            ["-m", *job, f"model.neighbours={neighbours}", "hydra.sweep.dir=sweep"], work
        )
        shown.append(("sweep", lines))
        later, at = [], 0
        for j in range(args.jobs):
            i_launch, t_launch = _at(lines, f"#{j} : ", at)
            stages, at = job_stages(lines, i_launch, t_launch if j else 0.0)
            row = _row(f"sweep job #{j}", stages, compose)
            if j:
                later.append(row)
        print(f"sweep of {args.jobs} jobs: wall {wall:.2f} s ({last_cpu[0]:.2f} CPU-s)")
        _small_commands(work, args.repeat)
        _summary("single run on a warm store (new process)", singles, compose)
        _summary("later job of a sweep (same process)", later, compose)
        if args.show_lines:
            for name, timed in shown:
                print(f"--- {name}")
                print("\n".join(f"    {t:6.2f} {s[:160]}" for t, s in timed))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
