"""Benchmark: a report over 50 runs of 100,000 users each (synthetic per-user tables).

Builds the report (means with t and bootstrap intervals, paired t / Wilcoxon / randomisation
tests against the baseline, Holm correction, the activity-quartile slice) and renders the HTML
page with its figures (curves of every run with CI bands, per-user distributions, the metric
against the swept parameter). Prints the seconds of each stage and the total. Target: under 60 s.

Usage::

    python benchmarks/bench_report.py [--runs 50] [--users 100000] [--metrics 2] [--k 10]
        [--bootstrap 1000] [--permutations 1000] [--no-slices]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from recoeval_tracking.reporting.runs import RunData


def synthetic_runs(
    n_runs: int, n_users: int, n_metrics: int, k: int, seed: int = 0
) -> list[RunData]:
    """Runs of a sweep over ``model.factors``: per-user values drawn around a mean that grows
    with the run index, about 1% NaN users per metric, curves with CI columns."""
    rng = np.random.default_rng(seed)
    n_train = rng.integers(1, 500, n_users)
    names = ["ndcg_at", "p_at", "r_at", "ap_at", "hit_at"][: max(1, n_metrics)]
    runs = []
    for r in range(n_runs):
        mu = 0.2 + 0.002 * r
        df = pd.DataFrame({"user_id": np.arange(n_users) * 7 + 3, "n_train": n_train, "n_test": 10})
        for name in names:
            v = rng.beta(mu * 5, (1 - mu) * 5, n_users)
            v[rng.random(n_users) < 0.01] = np.nan
            df[f"{name}_{k}"] = v
        ks = np.arange(1, k + 1)
        curve = mu * (1 - np.exp(-ks / 4))
        curves = pd.DataFrame(
            {
                "k": ks,
                "ndcg_at_k": curve,
                "ndcg_at_k_ci95_low": curve - 0.002,
                "ndcg_at_k_ci95_high": curve + 0.002,
            }
        )
        runs.append(
            RunData(
                run_id=f"{r:032x}",
                name=f"model.factors={8 * (r + 1)}",
                per_user=df,
                params={"model.factors": str(8 * (r + 1))},
                curves=curves,
                fingerprints={"data": "d", "split": "s", "definitions": "f"},
            )
        )
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--metrics", type=int, default=2)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--permutations", type=int, default=1000)
    parser.add_argument("--no-slices", action="store_true")
    args = parser.parse_args()

    t0 = time.perf_counter()
    import scipy.stats  # noqa: F401 - one-off import, reported apart

    from recoeval_tracking.reporting.render import write_report
    from recoeval_tracking.reporting.report import build_report

    t_import = time.perf_counter() - t0
    runs = synthetic_runs(args.runs, args.users, args.metrics, args.k)
    slices = [] if args.no_slices else [{"kind": "activity", "q": 4}]
    t1 = time.perf_counter()
    report = build_report(
        runs,
        "best:ndcg_at_10" if args.k == 10 else None,
        slices=slices,
        n_bootstrap=args.bootstrap,
        n_permutations=args.permutations,
        seed=0,
    )
    t_build = time.perf_counter() - t1
    with tempfile.TemporaryDirectory() as tmp:
        t2 = time.perf_counter()
        paths = write_report(report, Path(tmp) / "report.html", Path(tmp) / "report.md")
        t_render = time.perf_counter() - t2
        size = paths["html"].stat().st_size
    total = t_build + t_render
    print(
        f"report over {args.runs} runs x {args.users:,} users, {len(report.metrics)} metrics, "
        f"{len(report.comparisons)} comparisons, {len(report.slices)} slice groups, "
        f"{args.bootstrap} bootstrap resamples, {args.permutations} permutations"
    )
    print(f"  imports (one-off):        {t_import:6.2f} s")
    print(f"  build_report:             {t_build:6.2f} s")
    print(f"  render + write (HTML {size / 1e6:.1f} MB, Markdown, figures): {t_render:6.2f} s")
    print(
        f"  total:                    {total:6.2f} s  (target < 60 s: "
        f"{'met' if total < 60 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
