"""Mutation testing of the package: does the suite notice one wrong line?

Each mutant changes one operator or constant of one module (the usual operators: comparison
``<``/``<=``/``>``/``>=``/``==``/``!=`` swapped for its neighbour, ``+``/``-`` and ``*``/``/``
swapped, an integer constant off by one, ``and``/``or`` swapped, a ``not`` dropped, ``True`` and
``False`` swapped, a ``min``/``max`` swapped). Mutants are drawn with a fixed seed from every site
of the chosen modules, written into a private copy of the package, and the tests mapped to the
module run against that copy; a mutant is *killed* when they fail (or time out), and *survives*
when they pass.

Why not mutmut or cosmic-ray: mutmut 3 wraps every function in a Python trampoline, which numba
cannot compile, so the engine's kernels cannot be mutated with it; cosmic-ray rewrites files in
place and runs one fixed test command over every site (thousands here), serially. Numba's cache
also keys a function on its own file only, so a kernel compiled against an unmutated callee in
another module would be reused; each mutant here therefore gets a fresh ``NUMBA_CACHE_DIR`` (or
``NUMBA_DISABLE_JIT=1`` with ``--no-jit``).

Usage::

    python tools/mutate.py --list                              # the areas and their tests
    python tools/mutate.py --area engine --n 40 --seed 0       # 40 mutants of engine/
    python tools/mutate.py --area all --n 25 --jobs 2 --out mutants.json
    python tools/mutate.py --replay mutants.json --only survived   # re-run the survivors
    python tools/mutate.py --set issue18 --out issue18.json    # a named set of hand mutations
    python tools/mutate.py --replay mutants.json --only survived --tests tests  # whole suite

A named set (``--set``, defined in tools/mutation_sets.py) holds hand-made mutations: concrete
source replacements in a module or a shipped config file, each with the tests that must catch
it. The package copy of every slot also holds the configs as ``recoeval_tracking.configs`` (so
a mutated config is the one the app reads), and the tests that start processes put the copy
first on their ``PYTHONPATH`` (tests/commands.py), so the processes run the mutant too.

The summary lists every surviving mutant as ``file:line  original -> mutated``; the JSON file
keeps every mutant with its outcome so survivors can be re-run after new tests are written.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "recoeval_tracking"

#: Area -> (module globs relative to the package, test paths run against its mutants).
AREAS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "engine": (
        (
            "engine/ranks.py",
            "engine/topk.py",
            "engine/fill.py",
            "engine/kernels.py",
            "engine/driver.py",
            "engine/records.py",
        ),
        (
            "tests/engine",
            "tests/metrics/test_against_reference.py",
            "tests/metrics/test_invariants.py",
            "tests/metrics/test_seed_examples.py",
        ),
    ),
    "metrics": (
        (
            "metrics/evaluate.py",
            "metrics/inputs.py",
            "metrics/beyond.py",
            "metrics/registry.py",
            "metrics/profiles.py",
            "metrics/compat.py",
            "metrics/results.py",
            "metrics/rating.py",
            "metrics/protocol.py",
            "metrics/sampling.py",
            "metrics/definitions.py",
            "metrics/listrank.py",
            "metrics/popularity.py",
            "metrics/implicit_topk.py",
        ),
        # the engine paths' reference checks of the list metrics and aggregates, not
        # the engine's other tests (tiling, CUDA simulator), which run the kernels
        ("tests/metrics", "tests/test_options.py", "tests/engine/test_paths.py"),
    ),
    "splitting": (
        (
            "splitting/_strategies.py",
            "splitting/_split.py",
            "splitting/_cv.py",
            "splitting/_recometrics.py",
        ),
        ("tests/splitting",),
    ),
    "stats": (
        (
            "stats/_paired.py",
            "stats/_intervals.py",
            "stats/_corrections.py",
            "stats/_effects.py",
            "stats/_equivalence.py",
            "stats/_replicates.py",
            "stats/_power.py",
            "stats/_posthoc.py",
            "stats/_friedman.py",
            "stats/_resampling.py",
            "reporting/stats.py",
        ),
        ("tests/stats", "tests/reporting/test_report_settings.py"),
    ),
    # the report tests without the browser screenshot and the end-to-end sweep (minutes each)
    "report": (
        ("reporting/report.py", "reporting/runs.py"),
        (
            "tests/reporting/test_report.py",
            "tests/reporting/test_report_settings.py",
            "tests/reporting/test_report_inputs.py",
            "tests/reporting/test_comparability.py",
            "tests/reporting/test_summary.py",
        ),
    ),
    "data": (
        (
            "data/_build.py",
            "data/_interactions.py",
            "data/_loaders.py",
            "data/_prepare.py",
            "data/_synthetic.py",
        ),
        ("tests/data",),
    ),
    "jobdir": (
        ("jobdir/io.py", "jobdir/markers.py", "jobdir/redact.py", "jobdir/read.py"),
        ("tests/jobdir",),
    ),
    # the tracking tests that use sweeps (the rest start servers and browsers for other code)
    "sweeps": (
        ("tracking/sweeps.py",),
        (
            "tests/tracking/test_mlflow_log.py",
            "tests/tracking/test_server.py",
            "tests/tracking/test_leaderboard_file.py",
            "tests/tracking/test_sweep_record.py",
            "tests/reporting/test_report_settings.py",
        ),
    ),
}

_CMP_SWAP = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
}
_BIN_SWAP = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Mult,
}


@dataclass
class Mutant:
    """One mutation: the module, the site (line, column, kind) and the outcome."""

    module: str
    line: int
    col: int
    kind: str
    before: str
    after: str
    outcome: str = ""  # killed | survived | timeout | error
    seconds: float = 0.0
    name: str = ""  # hand mutations: "<set>:<name>"; ``module`` is then relative to ROOT
    tests: list[str] | None = None  # hand mutations: the tests that must catch it


def _unmutated_nodes(tree: ast.AST) -> set[int]:
    """Nodes no mutant touches: docstrings, and every node of a decorator (``@njit(cache=True,
    inline="always")``: compile options change speed and caching, never a value)."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
            for deco in getattr(node, "decorator_list", []):
                ids.update(id(sub) for sub in ast.walk(deco))
    return ids


def _sites(tree: ast.AST) -> list[tuple[ast.AST, str, int]]:
    """Every mutable site: (node, kind, index within the node)."""
    skip = _unmutated_nodes(tree)
    out = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Compare):
            out += [(node, "cmp", i) for i, op in enumerate(node.ops) if type(op) in _CMP_SWAP]
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _BIN_SWAP:
            out.append((node, "binop", 0))
        elif isinstance(node, ast.BoolOp):
            out.append((node, "boolop", 0))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append((node, "not", 0))
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, bool):
                out.append((node, "bool", 0))
            elif isinstance(node.value, int) and abs(node.value) < 10**6:
                out.append((node, "int", 0))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("min", "max")
        ):
            out.append((node, "minmax", 0))
    return out


def _apply(node: ast.AST, kind: str, idx: int) -> None:
    if kind == "cmp":
        node.ops[idx] = _CMP_SWAP[type(node.ops[idx])]()
    elif kind == "binop":
        node.op = _BIN_SWAP[type(node.op)]()
    elif kind == "boolop":
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif kind == "not":
        node.op = ast.UAdd()  # "+x" keeps the operand's truth value: the "not" is dropped
    elif kind == "bool":
        node.value = not node.value
    elif kind == "int":
        node.value = node.value + 1
    elif kind == "minmax":
        node.func.id = "max" if node.func.id == "min" else "min"


def _segment(source: str, node: ast.AST) -> str:
    return (ast.get_source_segment(source, node) or "").splitlines()[0][:90]


def enumerate_mutants(module: str) -> list[Mutant]:
    """Every mutant of ``module`` (a path relative to the package)."""
    source = (ROOT / PACKAGE / module).read_text()
    tree = ast.parse(source)
    mutants = []
    for node, kind, idx in _sites(tree):
        before = _segment(source, node)
        tree2 = ast.parse(source)
        match = [
            s
            for s in _sites(tree2)
            if (s[0].lineno, s[0].col_offset, s[1], s[2])
            == (node.lineno, node.col_offset, kind, idx)
        ]
        if not match:
            continue
        _apply(*match[0])
        after = ast.unparse(match[0][0]).splitlines()[0][:90]
        mutants.append(Mutant(module, node.lineno, node.col_offset, f"{kind}:{idx}", before, after))
    return mutants


def _source_file(m: Mutant) -> Path:
    """The unmutated file of ``m`` in this checkout."""
    return ROOT / m.module if m.name else ROOT / PACKAGE / m.module


def _slot_file(m: Mutant, work: Path) -> Path:
    """Where the slot's copy of ``m``'s file lies (configs/ is the package's ``configs``)."""
    if not m.name:
        return work / PACKAGE / m.module
    if m.module.startswith("configs/"):
        return work / PACKAGE / m.module
    return work / m.module


def hand_mutants(set_name: str) -> list[Mutant]:
    """The mutations of the named set (tools/mutation_sets.py), checked to apply."""
    sys.path.insert(0, str(ROOT / "tools"))
    import mutation_sets as ms

    out = []
    for name, (path, reps, tests, what) in ms.SETS[set_name].items():
        ms.apply((ROOT / path).read_text(), reps, f"{set_name}:{name}")  # fails early if stale
        out.append(
            Mutant(
                path,
                0,
                0,
                "hand",
                what,
                " / ".join(n for _, n in reps)[:90],
                name=f"{set_name}:{name}",
                tests=list(tests),
            )
        )
    return out


def mutated_source(m: Mutant) -> str:
    if m.name:
        sys.path.insert(0, str(ROOT / "tools"))
        import mutation_sets as ms

        set_name, name = m.name.split(":", 1)
        _, reps, _, _ = ms.SETS[set_name][name]
        return ms.apply(_source_file(m).read_text(), reps, m.name)
    source = (ROOT / PACKAGE / m.module).read_text()
    tree = ast.parse(source)
    kind, idx = m.kind.split(":")
    for node, k, i in _sites(tree):
        if (node.lineno, node.col_offset, k, i) == (m.line, m.col, kind, int(idx)):
            _apply(node, k, i)
            return ast.unparse(tree) + "\n"
    raise LookupError(f"site {m.module}:{m.line}:{m.col} {m.kind} not found")


def _area_of(module: str) -> str:
    for area, (modules, _) in AREAS.items():
        if module in modules:
            return area
    raise KeyError(module)


def _slot_dir(slot: int) -> Path:
    # one folder per process too: two runs at once must not share a package copy
    return Path(tempfile.gettempdir()) / "recoeval-mutants" / f"{os.getpid()}-slot-{slot}"


def run_mutant(
    m: Mutant,
    *,
    slot: int,
    timeout: float,
    no_jit: bool,
    extra: list[str],
    tests: list[str] | None = None,
    boundscheck: bool = False,
) -> Mutant:
    """Run the area's tests against the slot's copy of the package holding the mutant.

    Each slot keeps one copy of the package (file times preserved) and its own numba cache, so
    the kernels of unmutated modules compile once per slot; an engine mutant starts from an
    empty cache, since numba would reuse a kernel compiled against the unmutated callee.
    """
    work = _slot_dir(slot)
    cache = work / "numba-cache"
    shutil.copytree(
        ROOT / PACKAGE,
        work / PACKAGE,
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copytree(
        ROOT / "configs",
        work / PACKAGE / "configs",
        dirs_exist_ok=True,
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    target = _slot_file(m, work)
    try:
        if "engine/" in m.module:
            shutil.rmtree(cache, ignore_errors=True)
        target.write_text(mutated_source(m))
        env = dict(os.environ)
        env["PYTHONPATH"] = f"{work}{os.pathsep}{env.get('PYTHONPATH', '')}"
        env["NUMBA_CACHE_DIR"] = str(cache)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        if no_jit:
            env["NUMBA_DISABLE_JIT"] = "1"
        if boundscheck:  # an index past a slice then raises instead of reading its neighbour
            env["NUMBA_BOUNDSCHECK"] = "1"
        tests = tests or m.tests or list(AREAS[_area_of(m.module)][1])
        # -P: the working directory (this checkout) must not shadow the mutated copy
        cmd = [
            sys.executable,
            "-P",
            "-m",
            "pytest",
            "-x",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not slow",
            *extra,
            *tests,
        ]
        t0 = time.perf_counter()
        try:
            proc = subprocess.run(
                cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False
            )
            # pytest: 0 all passed; 1 a test failed; 2 collection failed (the mutant broke an
            # import); anything else (5: no test ran) is an error of the run itself
            # 3: pytest's internal error, also caused by the mutant
            # a negative code: the tests' process died of a signal (a mutated kernel reading
            # out of bounds segfaults), which the suite noticed too
            m.outcome = {0: "survived", 1: "killed", 2: "killed", 3: "killed"}.get(
                proc.returncode, "killed" if proc.returncode < 0 else "error"
            )
        except subprocess.TimeoutExpired:
            m.outcome = "timeout"
        m.seconds = time.perf_counter() - t0
        return m
    finally:
        shutil.copy2(_source_file(m), target)  # the original, with its file time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--area", default="all", help=f"one of {sorted(AREAS)} or 'all'")
    ap.add_argument("--n", type=int, default=20, help="mutants drawn per area")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per mutant")
    ap.add_argument("--no-jit", action="store_true", help="run with NUMBA_DISABLE_JIT=1")
    ap.add_argument(
        "--boundscheck",
        action="store_true",
        help="run with NUMBA_BOUNDSCHECK=1 (compiled kernels check their indices)",
    )
    ap.add_argument("--out", default=None, help="JSON file for every mutant and outcome")
    ap.add_argument("--replay", default=None, help="re-run mutants from a JSON file")
    ap.add_argument("--only", default=None, help="with --replay: only this outcome")
    ap.add_argument("--set", default=None, help="run a named set of hand mutations (issue18)")
    ap.add_argument(
        "--tests",
        nargs="+",
        default=None,
        help="run these tests against every mutant (e.g. 'tests': the whole suite)",
    )
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    if args.list:
        for area, (modules, tests) in AREAS.items():
            n = sum(
                len(enumerate_mutants(mod)) for mod in modules if (ROOT / PACKAGE / mod).exists()
            )
            print(
                f"{area:10s} {n:5d} sites  modules: {', '.join(modules)}\n"
                f"{'':17s}tests: {' '.join(tests)}"
            )
        return 0
    if args.set:
        mutants = hand_mutants(args.set)
    elif args.replay:
        mutants = [Mutant(**d) for d in json.loads(Path(args.replay).read_text())]
        if args.only:
            mutants = [m for m in mutants if m.outcome == args.only]
    else:
        areas = sorted(AREAS) if args.area == "all" else args.area.split(",")
        rng = random.Random(args.seed)
        mutants = []
        for area in areas:
            pool = [
                m
                for mod in AREAS[area][0]
                if (ROOT / PACKAGE / mod).exists()
                for m in enumerate_mutants(mod)
            ]
            mutants += rng.sample(pool, min(args.n, len(pool)))
    print(f"{len(mutants)} mutants, {args.jobs} at a time", flush=True)
    done: list[Mutant] = []

    free = list(range(max(1, args.jobs)))
    lock = threading.Lock()

    def one(m: Mutant) -> Mutant:
        with lock:
            slot = free.pop()
        try:
            r = run_mutant(
                m,
                slot=slot,
                timeout=args.timeout,
                no_jit=args.no_jit,
                extra=[],
                tests=args.tests,
                boundscheck=args.boundscheck,
            )
        finally:
            with lock:
                free.append(slot)
        print(
            f"{r.outcome:8s} {r.seconds:6.1f}s  {r.name or f'{r.module}:{r.line}'}  "
            f"{r.before!r} -> {r.after!r}",
            flush=True,
        )
        if args.out:  # one JSON line per mutant as it ends, so a cut-off run keeps its results
            with lock, open(args.out + "l", "a") as fh:
                fh.write(json.dumps(asdict(r)) + "\n")
        return r

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        done = list(pool.map(one, mutants))
    killed = sum(m.outcome in ("killed", "timeout") for m in done)
    print(f"\n{killed}/{len(done)} killed ({100.0 * killed / max(len(done), 1):.1f}%)")
    for m in done:
        if m.outcome not in ("killed", "timeout"):
            print(
                f"  {m.outcome:8s} {m.name or f'{m.module}:{m.line}'}  {m.before!r} -> {m.after!r}"
            )
    if args.out:
        Path(args.out).write_text(json.dumps([asdict(m) for m in done], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
