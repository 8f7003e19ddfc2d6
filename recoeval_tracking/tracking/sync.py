"""``recoeval-track-sync``: upload job directories whose upload failed, exactly once.

Usage::

    recoeval-track-sync PATH... [--tracking-uri URI] [--dry-run]

Finds every job directory holding a ``PENDING`` marker under the given paths (recursively),
and uploads each with the arguments recorded in its marker, to ``--tracking-uri`` or else the URI
the job was configured with. Exactly once: :func:`~recoeval_tracking.tracking.mlflow.log_job_dir`
first looks for a FINISHED run tagged with the directory's ``recoeval.job_uid`` and creates none
when there is one; after success ``PENDING`` is replaced by ``SYNCED`` (run id). Running the
command twice creates no duplicate run.

Sweeps: a child whose parent run is missing from the target store (the store was down when the
sweep started, or another URI is given) gets a parent found by its ``recoeval.sweep_id`` tag, or
created and closed with a leaderboard. ``PENDING_SWEEP`` markers (a parent that could not be
closed) are handled after the jobs: the parent is closed with its recorded status and a
leaderboard that includes the jobs just uploaded. Parents that gained children and are already
closed get their leaderboard refreshed.

Exit status: 0 when everything pending was uploaded (or nothing was pending), 1 when some
directories are still pending (their marker records the new error), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._validation import param_error

__all__ = ["SyncOutcome", "find_pending", "sync_job_dir", "sync_paths", "main"]


@dataclass
class SyncOutcome:
    """What happened to one pending directory."""

    path: Path
    run_id: str | None
    error: str | None = None


def find_pending(paths: Iterable[str | Path], marker: str = "PENDING") -> list[Path]:
    """Directories under ``paths`` (each a job directory or any folder above) holding ``marker``,
    sorted, without duplicates."""
    found: set[Path] = set()
    for p in paths:
        root = Path(p)
        if not root.exists():
            raise param_error("paths", "find_pending", "existing files or folders", str(root))
        if root.is_file():
            root = root.parent
        if (root / marker).is_file():
            found.add(root.resolve())
        for m in root.rglob(marker):
            if m.is_file():
                found.add(m.parent.resolve())
    return sorted(found)


def _read_marker(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


class _Parents:
    """Resolves sweep parents in the target store, creating missing ones once per sweep id."""

    def __init__(self, uri: str):
        self.uri = uri
        self.created: dict[str, str] = {}  # sweep_id -> parent run id created here
        self.touched: set[str] = set()

    def resolve(self, parent_run_id: str | None, sweep_id: str | None, experiment: str) -> str | None:
        from . import mlflow as mt

        if not parent_run_id:
            return None
        client = mt._client(self.uri)
        if mt._run_exists(client, parent_run_id):
            self.touched.add(parent_run_id)
            return parent_run_id
        if not sweep_id:
            return None
        if sweep_id in self.created:
            return self.created[sweep_id]
        exp = client.get_experiment_by_name(experiment)
        if exp is not None:
            found = client.search_runs(
                [exp.experiment_id],
                filter_string=(f"tags.`recoeval.sweep_id` = '{sweep_id}' and "
                               "tags.`recoeval.sweep_parent` = 'true'"), max_results=1)
            if found:
                self.touched.add(found[0].info.run_id)
                return found[0].info.run_id
        parent = mt.create_sweep_parent(tracking_uri=self.uri, experiment=experiment,
                                        sweep_id=sweep_id)
        self.created[sweep_id] = parent.run_id
        return parent.run_id


def sync_job_dir(path: str | Path, *, tracking_uri: str | None = None,
                 _parents: _Parents | None = None) -> SyncOutcome:
    """Upload one pending job directory; see the module docstring."""
    from ..jobdir import PENDING
    from . import mlflow as mt

    root = Path(path)
    marker = _read_marker(root / PENDING)
    uri = mt.resolve_tracking_uri(tracking_uri or marker.get("tracking_uri"))
    upload = dict(marker.get("upload") or {})
    upload["tracking_uri"] = uri
    parents = _parents or _Parents(uri)
    try:
        with mt._fast_fail_http():
            upload["parent_run_id"] = parents.resolve(
                upload.get("parent_run_id"), upload.get("sweep_id"),
                upload.get("experiment", mt.DEFAULT_EXPERIMENT))
    except Exception as err:  # noqa: BLE001 - the store is still unreachable
        run_id = None
        error = mt._first_line(err)
    else:
        run_id = mt.upload_or_mark_pending(root, **upload)
        error = None if run_id else _read_marker(root / PENDING).get("error", "upload failed")
    return SyncOutcome(root, run_id, error)


def sync_paths(paths: Sequence[str | Path], *, tracking_uri: str | None = None,
               out=None) -> list[SyncOutcome]:
    """Upload every pending job directory under ``paths``, then close pending sweep parents.

    Progress lines go to ``out`` (default: ``sys.stdout``). Returns one :class:`SyncOutcome` per
    pending job directory.
    """
    from . import mlflow as mt

    out = sys.stdout if out is None else out
    if isinstance(paths, (str, Path)):
        paths = [paths]
    pending = find_pending(paths)
    sweeps = find_pending(paths, mt.PENDING_SWEEP)
    outcomes: list[SyncOutcome] = []
    parents_by_uri: dict[str, _Parents] = {}
    for job in pending:
        from ..jobdir import PENDING

        marker = _read_marker(job / PENDING)
        uri = mt.resolve_tracking_uri(tracking_uri or marker.get("tracking_uri"))
        parents = parents_by_uri.setdefault(uri, _Parents(uri))
        outcome = sync_job_dir(job, tracking_uri=uri, _parents=parents)
        outcomes.append(outcome)
        if outcome.run_id:
            print(f"uploaded {job} -> run {outcome.run_id} ({uri})", file=out)
        else:
            print(f"still pending {job}: {outcome.error}", file=out)

    closed: set[str] = set()
    for sweep_dir in sweeps:
        marker = _read_marker(sweep_dir / mt.PENDING_SWEEP)
        uri = mt.resolve_tracking_uri(tracking_uri or marker.get("tracking_uri"))
        parent = marker.get("parent_run_id")
        if not parent:
            continue
        ok = mt.finish_sweep_parent_or_mark_pending(sweep_dir, parent,
                                                    marker.get("status", "FINISHED"),
                                                    tracking_uri=uri)
        if ok:
            closed.add(parent)
            print(f"closed sweep parent {parent} ({uri})", file=out)
    for uri, parents in parents_by_uri.items():
        client = None
        for sweep_id, parent in parents.created.items():
            if parent not in closed:
                mt.finish_sweep_parent(parent, "FINISHED", tracking_uri=uri)
                closed.add(parent)
                print(f"created and closed sweep parent {parent} for sweep {sweep_id}", file=out)
        for parent in parents.touched - closed:
            try:
                client = client or mt._client(uri)
                run = client.get_run(parent)
                if run.info.status != "RUNNING":
                    mt.finish_sweep_parent(parent, run.info.status, tracking_uri=uri,
                                           close_running_children=False)
                    print(f"refreshed the leaderboard of sweep parent {parent}", file=out)
            except Exception as err:  # noqa: BLE001 - refreshing is a courtesy
                print(f"could not refresh sweep parent {parent}: {mt._first_line(err)}", file=out)
    if not pending and not sweeps:
        print("nothing pending under " + ", ".join(str(p) for p in paths), file=out)
    return outcomes


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``recoeval-track-sync``; returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="recoeval-track-sync",
        description="Upload job directories marked PENDING (the tracking store was unreachable) "
                    "to MLflow, exactly once.")
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="job directories or folders above them (searched recursively)")
    parser.add_argument("--tracking-uri", default=None,
                        help="tracking URI (default: the one each job was configured with)")
    parser.add_argument("--dry-run", action="store_true",
                        help="list what is pending without uploading")
    args = parser.parse_args(argv)
    for p in args.paths:
        if not Path(p).exists():
            print(f"recoeval-track-sync: no such file or folder: {p}", file=sys.stderr)
            return 2
    if args.dry_run:
        from .mlflow import PENDING_SWEEP

        for job in find_pending(args.paths):
            print(f"pending job {job}")
        for sweep in find_pending(args.paths, PENDING_SWEEP):
            print(f"pending sweep parent {sweep}")
        return 0
    outcomes = sync_paths(args.paths, tracking_uri=args.tracking_uri)
    return 0 if all(o.run_id for o in outcomes) else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
