"""The first minute: cold and warm starts, each in a fresh process with its own numba cache.

Each figure comes from a new Python process whose ``NUMBA_CACHE_DIR`` is an empty temporary
folder (``cold``) or one a previous process filled (``warm``), with ``OPENBLAS_CORETYPE`` unset:

* ``evaluate(all) cold``: ``import recoeval_tracking`` and ``evaluate(train, test, A=, B=,
  metrics="all")`` on 300 users x 400 items of random float32 factors (every kernel of the ten
  metrics is compiled);
* ``evaluate() cold``: the same with the default metrics;
* ``evaluate(list) cold``: the same with the default metrics and coverage (the top-K list);
* ``evaluate() warm``: the default ``evaluate()`` again in a new process, its kernels in the
  cache (import included: what a user waits for the first result of a new session);
* ``recoeval-track cold``: README's first command (synthetic data, a random split, ALS, the
  standard metrics; ``tracking=local`` into a temporary folder) with an empty cache, wall
  seconds, the CPU seconds of the command and of every process it started (``cpu``: the work a
  quiet 2-core machine can at best halve, steadier than the wall on a shared one), its stage
  times and the longest silence on the terminal (seconds between two lines);
* ``recoeval-track -m``: a sweep of two models (``model=popularity,item_knn``) into a new
  store (its parent run creates it), with the kernel cache the row before left (or an empty
  one when run alone: ``--only sweep``): the seconds to its first line, the longest silence
  and the wall seconds.

Each row prints the seconds inside the process (import, first call) and the wall seconds of the
process. The CPU (model, AVX2 / AVX-512) and the load are printed first: the numbers depend on
both (compiling is single-threaded; the app's warm-up child uses the second core).

Usage::

    python benchmarks/bench_cold_start.py                 # all five, ~1 min on 2 cores
    python benchmarks/bench_cold_start.py --only evaluate --repeat 2
    python benchmarks/bench_cold_start.py --only app --only sweep
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: The child that times the import and the first call of ``evaluate`` (``metrics`` in argv).
_EVALUATE = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np, scipy.sparse as sp
import recoeval_tracking as rt
t1 = time.perf_counter()
rng = np.random.default_rng(0)
m, n = 300, 400
A = rng.standard_normal((m, 8)).astype(np.float32)
B = rng.standard_normal((n, 8)).astype(np.float32)
cells = rng.random((m, n))
train = sp.csr_array((cells < 0.1).astype(np.float64))
test = sp.csr_array(((cells > 0.95) * rng.integers(1, 6, (m, n))).astype(np.float64))
LISTED = ["p", "r", "ap", "ndcg", "hit", "rr", "coverage"]  # @k metrics and the top-K list
kw = {"default": {}, "list": {"metrics": LISTED}}.get(sys.argv[1], {"metrics": sys.argv[1]})
res = rt.evaluate(train, test, A=A, B=B, **kw)
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "call": t2 - t1, "modules": sorted(
    m for m in ("pandas", "mlflow", "hydra", "matplotlib", "dask") if m in sys.modules)}))
"""


#: The targets of the evaluate rows, in seconds: the first call on an empty cache (by metrics)
#: and a new process's import + first default call with the cache filled.
COLD_TARGETS = {"all": 8.0, "default": 5.0}
WARM_TARGET = 0.7
#: README's first command cold (wall, on a quiet machine); a sweep's first line and its longest
#: silence.
APP_TARGET, FIRST_LINE_TARGET, SILENCE_TARGET = 10.0, 1.0, 2.0


def _verdict(seconds: float, target: float) -> str:
    return f" (target <= {target:g} s: {'met' if seconds <= target else 'MISSED'})"


def cpu_info() -> str:
    """The CPU's model name and whether it has AVX2 and AVX-512 (from /proc/cpuinfo)."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and ":" in line:
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and ":" in line:
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, avx2={'avx2' in flags}, avx512f={'avx512f' in flags}"


def _env(cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    env["NUMBA_CACHE_DIR"] = str(cache)
    env.pop("RECOEVAL_WARM_UP", None)
    return env


def run_evaluate(metrics: str, cache: Path) -> dict:
    """One new process evaluating ``metrics`` with the numba cache ``cache``."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _EVALUATE, metrics],
        env=_env(cache),
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - t0
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    row["wall"] = wall
    return row


#: The sweep of the ``recoeval-track -m`` row.
SWEEP = ["-m", "model=popularity,item_knn"]


def run_app(cache: Path, workdir: Path, args: tuple[str, ...] = ()) -> dict:
    """README's first command (or ``recoeval-track ARGS``) in ``workdir`` with the numba cache
    ``cache``: wall seconds, the job's stage seconds, the seconds to the first line and the
    longest time with no new line on stdout or stderr."""
    beside = Path(sys.executable).parent / "recoeval-track"  # this environment's entry point
    exe = str(beside) if beside.exists() else shutil.which("recoeval-track") or "recoeval-track"
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [exe, *args, "progress=false"],
        cwd=workdir,
        env=_env(cache),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    last, silence, lines, first = t0, 0.0, [], None
    for line in proc.stdout:
        now = time.perf_counter()
        silence = max(silence, now - last)
        last = now
        first = now - t0 if first is None else first
        lines.append(f"{now - t0:6.2f} {line.rstrip()}")
    code = proc.wait()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - used.ru_utime) + (after.ru_stime - used.ru_stime)
    silence = max(silence, wall - last)
    if code != 0:
        raise SystemExit("recoeval-track failed:\n" + "\n".join(lines))
    stages = {}  # from the job's "timings: load 0.12 s, ..." line (eval includes the wait)
    for line in lines:
        if "timings: " in line:
            for part in line.split("timings: ", 1)[1].split(", "):
                name, _, rest = part.partition(" ")
                stages[name] = float(rest.split()[0])
    return {
        "wall": wall,
        "cpu": cpu,
        "silence": silence,
        "first": first,
        "stages": stages,
        "lines": lines,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--only",
        choices=["evaluate", "app", "sweep"],
        action="append",
        help="only these rows (repeat it for several)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs per row (each printed)")
    ap.add_argument("--show-lines", action="store_true", help="the app's lines, timed")
    args = ap.parse_args()
    print(f"CPU: {cpu_info()}; load average {os.getloadavg()[0]:.2f}")
    print(f"python {platform.python_version()}")
    for _ in range(args.repeat):
        if not args.only or "evaluate" in args.only:
            for metrics in ("all", "default", "list"):
                with tempfile.TemporaryDirectory() as tmp:
                    cold = run_evaluate(metrics, Path(tmp))
                    target = COLD_TARGETS.get(metrics)
                    print(
                        f"evaluate({metrics}) cold: import {cold['import']:.2f} s, "
                        f"first call {cold['call']:.2f} s, wall {cold['wall']:.2f} s"
                        f"{_verdict(cold['call'], target) if target else ''}"
                    )
                    if metrics == "default":
                        warm = run_evaluate(metrics, Path(tmp))
                        both = warm["import"] + warm["call"]
                        print(
                            f"evaluate() warm, new process: import {warm['import']:.2f} s, "
                            f"first call {warm['call']:.2f} s, import + call "
                            f"{both:.2f} s{_verdict(both, WARM_TARGET)}, wall "
                            f"{warm['wall']:.2f} s; loaded: "
                            f"{', '.join(warm['modules']) or 'none of'} "
                            "(pandas, mlflow, hydra, matplotlib, dask)"
                        )
        with tempfile.TemporaryDirectory() as cache:
            if not args.only or "app" in args.only:
                with tempfile.TemporaryDirectory() as work:
                    app = run_app(Path(cache), Path(work))
                stages = ", ".join(f"{k} {v}" for k, v in app["stages"].items())
                print(
                    f"recoeval-track cold: wall {app['wall']:.2f} s"
                    f"{_verdict(app['wall'], APP_TARGET)[:-1]} on a quiet machine), cpu "
                    f"{app['cpu']:.1f} s ({stages}); first line {app['first']:.2f} s, longest "
                    f"silence {app['silence']:.2f} s{_verdict(app['silence'], SILENCE_TARGET)}"
                )
                if args.show_lines:
                    print("\n".join("    " + line for line in app["lines"]))
            if not args.only or "sweep" in args.only:
                kernels = "warm" if any(Path(cache).iterdir()) else "cold"
                with tempfile.TemporaryDirectory() as work:
                    sweep = run_app(Path(cache), Path(work), tuple(SWEEP))
                print(
                    f"recoeval-track {' '.join(SWEEP)} ({kernels} kernels, new store): first "
                    f"line {sweep['first']:.2f} s{_verdict(sweep['first'], FIRST_LINE_TARGET)}, "
                    f"longest silence {sweep['silence']:.2f} s"
                    f"{_verdict(sweep['silence'], SILENCE_TARGET)}, wall {sweep['wall']:.2f} s"
                )
                if args.show_lines:
                    print("\n".join("    " + line for line in sweep["lines"]))
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
