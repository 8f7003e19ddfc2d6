"""What the model protocol costs a user's own model: the same scores given three ways, in one run.

A model of the user's own hands its scores to the evaluator through ``score_users(user_indices)``
(called one block of users at a time, its result copied into the engine's buffer), through
``factors()`` (then scored by the engine's own blocked GEMM), or through ``recommend`` (lists).
This script times, on the same data and the same scores (``A @ B.T``, float32, K=10, the
default top-K metrics), with the same threads:

* ``factors``: ``evaluate(A=..., B=...)`` directly (the baseline path);
* ``UserModel(factors)``: the same factors through the protocol;
* ``UserModel(score_users)``: a model whose ``score_users`` computes ``A[users] @ B.T`` itself;
* ``UserModel(score_users(out=))``: the same, written into the engine's block buffer;
* the same with ``score_users_thread_safe = True``: called from every thread at once, each with
  single-threaded BLAS (the factors path's arrangement);

and prints each as a ratio to ``factors`` and to the GEMM floor (the fastest blocked ``A @ B.T``
into preallocated buffers: benchmarks/bench_engine.py's floor). Timings are the best of
``--repeat`` rounds, each running every row in turn; compare ratios within one run.
``--parts`` adds where ``score_users``' time goes: the factors path made to look for NaN as the
kernels do in a model's scores, the model's GEMM alone over the engine's blocks, each at the
run's threads (wall) and on one thread (CPU seconds, the steadier figure on a busy machine).

Usage::

    python benchmarks/bench_user_model.py                  # 50000 x 20000 x 64, ~2 min
    python benchmarks/bench_user_model.py --parts          # and the parts, ~5 min more
    python benchmarks/bench_user_model.py --size 5000x2000x32 --repeat 2
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__" and "OPENBLAS_CORETYPE" in os.environ:
    _env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    os.execve(sys.executable, [sys.executable, *sys.argv], _env)

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import best_of, blas_info, gemm_floor, make_data  # noqa: E402

import recoeval_tracking as rt  # noqa: E402
from recoeval_tracking.models import UserModel  # noqa: E402

METRICS = ["p", "r", "ap", "ndcg", "hit", "rr"]
#: The protocol's targets, in multiples of the factors path's time.
TARGETS = {
    "UserModel with score_users()": 1.3,
    "UserModel with score_users(out=)": 1.3,
    "... and score_users_thread_safe": 1.3,
}


class ScoreUsers:
    """A user's model that scores blocks of users itself."""

    def __init__(self, A, B):
        self.A, self.B = A, B

    def fit(self, train):
        return self

    def score_users(self, user_indices):
        return self.A[user_indices] @ self.B.T


class ScoreUsersOut(ScoreUsers):
    """The same model writing into the engine's buffer (``out=``)."""

    def score_users(self, user_indices, out=None):
        return np.matmul(self.A[user_indices], self.B.T, out=out)


class ScoreUsersThreadSafe(ScoreUsersOut):
    """The same, declared safe to call from several threads at once."""

    score_users_thread_safe = True


class Factors(ScoreUsers):
    """The same model handing over its factors."""

    score_users = None  # type: ignore[assignment]

    def factors(self):
        return self.A, self.B


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="50000x20000x64", help="users x items x factors")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--parts",
        action="store_true",
        help="also time the parts of score_users' cost: the factors path with the NaN pass the "
        "kernels run on a model's scores, and the model's GEMM alone over the engine's blocks",
    )
    args = ap.parse_args()
    m, n, p = (int(x) for x in args.size.split("x"))
    print(
        f"machine: {platform.machine()} {platform.processor() or ''}; "
        f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}"
    )
    for line in blas_info():
        print(f"BLAS: {line}")
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    tr, te, A, B = make_data(m, n, p)
    print(
        f"data: {m} users x {n} items x {p} factors, float32, {tr.nnz} train and {te.nnz} "
        f"test entries; K=10, metrics {METRICS}, {args.threads} threads"
    )

    def ev(**inputs):
        return rt.evaluate(tr, te, **inputs, k=10, metrics=METRICS, nthreads=args.threads)

    def through(model):
        um = UserModel(model)
        um.fit(tr)
        return lambda: ev(**um.eval_inputs(10))

    calls = {
        "factors (evaluate(A=, B=))": lambda: ev(A=A, B=B),
        "UserModel with factors()": through(Factors(A, B)),
        "UserModel with score_users()": through(ScoreUsers(A, B)),
        "UserModel with score_users(out=)": through(ScoreUsersOut(A, B)),
        "... and score_users_thread_safe": through(ScoreUsersThreadSafe(A, B)),
    }
    ref = None
    for call in calls.values():  # warm: compile once, and check the values agree
        got = call().per_user["ndcg_at_10"].to_numpy()
        if ref is None:
            ref = got
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6, equal_nan=True)
    floor, how = gemm_floor(A, B, args.threads, args.repeat)
    print(f"GEMM floor: {floor:.3f} s ({how})")
    # rounds of every row in turn, so that a change of load on a shared machine reaches them all
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(args.repeat):
        for name, call in calls.items():
            best[name] = min(best[name], best_of(call, 1))
    base = None
    for name, sec in best.items():
        base = base or sec
        goal = ""
        if name in TARGETS:
            met = sec / base <= TARGETS[name]
            goal = f"  target <= {TARGETS[name]:.1f}x factors: {'met' if met else 'MISSED'}"
        print(
            f"{name:34s} {sec:7.3f} s  {sec / base:5.2f}x factors  {sec / floor:5.2f}x floor{goal}"
        )
    if args.parts:
        parts(tr, te, A, B, base, args.threads, args.repeat)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def parts(tr, te, A, B, base: float, threads: int, repeat: int) -> None:
    """Where a ``score_users`` model's time goes beside the factors path (``base`` seconds), at
    ``threads`` threads (wall) and on one thread (CPU seconds of this process, the steadier
    figure on a busy machine): the factors path as it is, the same made to look for NaN in every
    row as the kernels do for a model's scores (the factors' bound switched off), the model's
    ``score_users(out=)`` through the engine, and the model's GEMM alone over the engine's blocks
    of a source (30 MiB each), into new arrays and into one buffer."""
    import importlib

    from recoeval_tracking.engine import driver

    evaluate_module = importlib.import_module("recoeval_tracking.metrics.evaluate")
    rows = driver.default_block_rows(B.shape[0], 4, A.shape[0], driver.SOURCE_BLOCK_BYTES)
    blocks = [np.arange(s, min(s + rows, A.shape[0])) for s in range(0, A.shape[0], rows)]
    model, into = ScoreUsers(A, B), ScoreUsersOut(A, B)
    buf = np.empty((rows, B.shape[0]), dtype=np.float32)
    um = UserModel(into)
    um.fit(tr)

    def ev(n: int, **inputs):
        return rt.evaluate(tr, te, **inputs, k=10, metrics=METRICS, nthreads=n)

    def with_nan_pass(n: int):
        bound = evaluate_module.factors_finite
        evaluate_module.factors_finite = lambda *a, **k: False
        try:
            ev(n, A=A, B=B)
        finally:
            evaluate_module.factors_finite = bound

    rows_out = {
        "factors path": lambda n: ev(n, A=A, B=B),
        "factors path with the NaN pass": with_nan_pass,
        "score_users(out=) through the engine": lambda n: ev(n, **um.eval_inputs(10)),
        "the model's GEMM alone, new arrays": lambda n: each(blocks, model.score_users),
        "the model's GEMM alone, one buffer": lambda n: each(
            blocks, lambda u: into.score_users(u, out=buf[: len(u)])
        ),
    }

    def each(blocks, call) -> None:
        for u in blocks:  # one block alive at a time, as in the engine
            call(u)

    print(f"parts (blocks of {rows} users): {threads} threads wall; 1 thread CPU seconds")
    one = None
    for name, call in rows_out.items():
        with driver.thread_limits(threads):
            wall = best_of(lambda: call(threads), repeat)
        with driver.thread_limits(1):
            cpu = best_of(lambda: call(1), repeat, clock=time.process_time)
        one = one or cpu
        print(
            f"  {name:38s} {wall:7.3f} s {wall / base:5.2f}x factors | "
            f"{cpu:7.3f} cpu-s {cpu / one:5.2f}x"
        )


if __name__ == "__main__":
    main()
