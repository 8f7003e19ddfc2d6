"""The end of a sweep that is not tracked (``tracking=none``): the same closing lines as a
tracked sweep's (:func:`~recoeval_tracking.tracking.sweeps.sweep_end_text`), read from the job
folders instead of MLflow: the tested jobs best first with the interval of the sort metric, the
protocol, each system's budget and the split's leakage (the sweep's ``recoeval_study.json``),
each system against each baseline, the jobs that failed, and the report command over the
folders."""

from __future__ import annotations

import math
import shlex
from pathlib import Path
from typing import Any

__all__ = ["local_sweep_end_text"]

#: Overrides the sweeper adds to its jobs: never a swept setting of the user's.
_SWEEPER_KEYS = ("phase", "baseline_rank", "baselines")


def _job_folders(sweep_dir: Path) -> list[Path]:
    """The sweep's job folders (``0``, ``1``...), in job order."""
    if not sweep_dir.is_dir():
        return []
    found = [p for p in sweep_dir.iterdir() if p.is_dir() and p.name.isdigit()]
    return sorted(found, key=lambda p: int(p.name))


def _pairs(overrides: list[str] | None) -> dict[str, str]:
    out = {}
    for item in overrides or []:
        key, sep, value = str(item).partition("=")
        if sep:
            out[key.lstrip("+~")] = value
    return out


def _swept(jobs: list[Any]) -> list[str]:
    """The keys whose value differs between the jobs (a key some jobs lack counts): what the
    sweep varied, the grid's, the baselines' and an Optuna search's spaces alike (read over
    every job, so that a search's one tested job is named after its values too)."""
    pairs = [_pairs(job.overrides) for job in jobs]
    keys = list(dict.fromkeys(k for p in pairs for k in p if k not in _SWEEPER_KEYS))
    return [k for k in keys if len({p.get(k) for p in pairs}) > 1]


def _board(jobs: list[Any], swept: list[str]) -> Any:
    """The tested jobs as the leaderboard :func:`~recoeval_tracking.tracking.views.
    leaderboard_text` and :func:`~recoeval_tracking.tracking.sweeps.baseline_differences`
    read (the columns and ``attrs`` of :func:`~recoeval_tracking.tracking.sweeps.
    build_leaderboard`), best first."""
    import pandas as pd

    from ..metrics.registry import greater_is_better
    from ..metrics.results import headline_metrics
    from ..tracking.names import short_run_name

    metrics = list(dict.fromkeys(m for job in jobs for m in job.metric_columns))
    rows, tags, ranks, headline = [], {}, {}, {}
    for job in jobs:
        pairs = _pairs(job.overrides)
        name = short_run_name(
            job.config,
            job.overrides,
            swept,
            suffix=f"#{job.path.name}",
            model_name=pairs.get("model"),
        )
        row = {
            "run_name": name or job.path.name,
            "run_id": job.path.name,
            "status": "FINISHED",
            "overrides": " ".join(job.overrides or []),
        }
        for m in metrics:
            for key in (m, f"{m}_ci95_low", f"{m}_ci95_high"):
                row[key] = job.metrics.get(key, math.nan)
        rows.append(row)
        rank = (job.config or {}).get("baseline_rank")
        tags[job.path.name] = {"recoeval.overrides": row["overrides"]}
        if rank is not None:
            ranks[job.path.name] = int(rank)
            tags[job.path.name]["recoeval.baseline_rank"] = str(rank)
        headline.update(dict.fromkeys(headline_metrics(job.metric_columns, job.k)))
    board = pd.DataFrame(rows)
    sort_by = next(
        (m for m in metrics if m.startswith("ndcg_at_")), metrics[0] if metrics else None
    )
    if sort_by is not None and len(board):
        board = board.sort_values(
            sort_by, ascending=not greater_is_better(sort_by), na_position="last", kind="stable"
        ).reset_index(drop=True)
    board.attrs.update(
        metrics=metrics, headline=list(headline), sort_by=sort_by, baselines=ranks, tags=tags
    )
    return board


def local_sweep_end_text(sweep_dir: str | Path) -> str:
    """What a sweep without tracking prints last (see the module docstring); empty when no
    job folder of the sweep holds results."""
    from ..jobdir.read import job_dir_state, read_job_dir
    from ..tracking.sweeps import baseline_differences, baseline_text, budget_lines, read_study
    from ..tracking.views import leaderboard_text

    sweep_dir = Path(sweep_dir)
    tested, failed, selection, read = [], [], 0, []
    for folder in _job_folders(sweep_dir):
        if job_dir_state(folder) != "complete":
            failed.append(folder.name)
            continue
        job = read_job_dir(folder, per_user=False)
        read.append(job)
        if (job.config or {}).get("phase") == "selection":
            selection += 1
        else:
            tested.append(job)
    if not tested and not failed:
        return ""
    lines = []
    if tested:
        board = _board(tested, _swept(read))  # what the whole sweep varied names each run
        n = len(board)
        what = (
            f"{n} tested configuration{'s' if n != 1 else ''} ({selection} more evaluated on "
            "validation only)"
            if selection
            else f"{n} job{'s' if n != 1 else ''}"
        )
        lines += [
            f"sweep {sweep_dir} (not tracked): {what}, best first by {board.attrs['sort_by']} "
            "on test:",
            leaderboard_text(board),
        ]
    if failed:
        many = len(failed) != 1
        lines.append(
            f"failed: job{'s' if many else ''} #{', #'.join(failed)} "
            f"({'their folders are' if many else 'its folder is'} marked INCOMPLETE; the lines "
            "above say why)"
        )
    study = read_study(sweep_dir)
    if study and study.get("protocol"):
        lines.append(f"protocol: {study['protocol']}")
        lines += budget_lines(study)
    if study and study.get("leakage"):
        lines.append(str(study["leakage"]))
    if tested:
        lines += baseline_text(baseline_differences(board, board.attrs["tags"]))
        folders = ",".join(_shown(job.path) for job in tested)
        lines.append(
            "compare them with paired tests: recoeval-track-report "
            + shlex.quote(f"select.job_dirs=[{folders}]")
        )
    return "\n".join(lines)


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when it lies inside it (the report command
    reads relative paths from there)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
