"""``recoeval-track-sync``: upload job directories whose upload failed, exactly once.

Usage::

    recoeval-track-sync PATH... [--tracking-uri URI] [--dry-run]

Finds every job directory holding a ``PENDING`` marker under the given paths (recursively) and
uploads each with the arguments recorded in its marker, to ``--tracking-uri`` or else the URI the
job was configured with; then closes the sweep parents marked ``PENDING_SWEEP``. The rules
(exactly once, missing sweep parents) are those of :mod:`recoeval_tracking.tracking.pending`.

Exit status: 0 when everything pending was uploaded (or nothing was pending), 1 when some
directories are still pending (their marker records the new error), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from ..tracking.pending import PENDING_SWEEP, find_pending, sync_paths

__all__ = ["main"]


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
        for job in find_pending(args.paths):
            print(f"pending job {job}")
        for sweep in find_pending(args.paths, PENDING_SWEEP):
            print(f"pending sweep parent {sweep}")
        return 0
    outcomes = sync_paths(args.paths, tracking_uri=args.tracking_uri)
    return 0 if all(o.run_id for o in outcomes) else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
