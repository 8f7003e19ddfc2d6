"""``recoeval-track-sync``: upload job directories whose upload failed, exactly once.

Usage::

    recoeval-track-sync PATH... [--tracking-uri URI] [--dry-run]

Finds every job directory under the given paths (recursively) that needs an upload (marked
``PENDING`` or ``UPLOADING``, or complete and never uploaded although tracking was on) and
uploads each exactly once, to ``--tracking-uri`` or else the URI the job was configured with;
then closes sweep parents (marked ``PENDING_SWEEP``, or left RUNNING by a killed sweep). Any
number of syncs and jobs may run at once on the same folders. The rules are those of
:mod:`recoeval_tracking.tracking.pending`.

Exit status: 0 when everything was uploaded (or nothing needed it), 1 when some directories are
still pending (their marker records the new error), were skipped, or could not be read (each is
named with the reason; the others are still uploaded; ``--dry-run`` lists the unreadable
folders too and exits 1), 2 for bad arguments (a path that does not exist, a
``--tracking-uri`` that is no tracking URI). What was done goes to standard output, what went
wrong (still pending, skipped, could not...) to standard error.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Sequence
from pathlib import Path

from ..tracking.pending import JOB_FILE_NAMES, scan, sync_paths

__all__ = ["main"]

#: The starts of the lines of :func:`~recoeval_tracking.tracking.pending.sync_paths` that report a
#: problem (they go to standard error).
_PROBLEMS = ("still pending ", "skipped ", "could not ")


class _Lines(io.TextIOBase):
    """The stream given to ``sync_paths``: each whole line to standard error when it reports a
    problem (:data:`_PROBLEMS`), else to standard output."""

    def __init__(self) -> None:
        super().__init__()
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        while "\n" in self._pending:
            line, self._pending = self._pending.split("\n", 1)
            print(line, file=sys.stderr if line.startswith(_PROBLEMS) else sys.stdout, flush=True)
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self.write("\n")


def _dry_run(paths: Sequence[str]) -> int:
    """List what a sync would upload; 1 when some folder could not be read (what it holds is
    unknown, and a sync would not upload it), else 0."""
    found = scan(paths)
    for job in found.jobs:
        print(f"pending job {job}")
    for job in found.unmarked:
        print(f"never uploaded job {job}")
    for job in found.incomplete:
        print(f"incomplete job {job} (nothing to upload)")
    for sweep in found.pending_sweeps:
        print(f"pending sweep parent {sweep}")
    for folder, reason in found.unreadable:
        print(
            f"unreadable folder {folder} ({reason}): a job pending in it is not listed and a "
            "sync would not upload it; run the sync as a user who can read it",
            file=sys.stderr,
        )
    return 1 if found.unreadable else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``recoeval-track-sync``; returns the exit status."""
    from .. import __version__
    from .stages import quick_exit

    quick_exit()

    parser = argparse.ArgumentParser(
        prog="recoeval-track-sync",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Upload job directories marked PENDING (the tracking store was unreachable) "
        "to MLflow, exactly once,\nthen close the sweep parents left open.",
        epilog="settings:\n"
        "  the store    --tracking-uri, else the URI each job was configured with\n"
        "               (recorded in its marker when its upload failed)\n"
        "  the runs     each job keeps its experiment, parent and tags from its upload\n"
        "               markers (PENDING, UPLOADING); nothing is uploaded twice\n"
        "exit status: 0 all uploaded, 1 some still pending, skipped or unreadable\n"
        "             (--dry-run too), 2 bad arguments\n"
        "example: recoeval-track-sync multirun/ --dry-run",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"recoeval-track-sync (recoeval_tracking) {__version__}",
    )
    parser.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="job directories or folders above them (searched recursively)",
    )
    parser.add_argument(
        "--tracking-uri",
        default=None,
        help="tracking URI (default: the one each job was configured with)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="list what is pending without uploading"
    )
    args = parser.parse_args(argv)
    if args.tracking_uri is not None:
        from .._validation import InputError
        from .precheck import check_tracking_uri

        try:
            check_tracking_uri(args.tracking_uri)
        except InputError as err:
            text = str(err).replace("tracking.uri must", "--tracking-uri must", 1)
            print(f"recoeval-track-sync: {text}", file=sys.stderr)
            return 2
    for p in args.paths:
        try:
            exists = Path(p).exists()
        except OSError as err:  # a folder above it cannot be searched
            print(
                f"recoeval-track-sync: cannot look at {p} ({err.strerror or err}): nothing "
                "under it was listed or uploaded; run the sync as a user who can read it.",
                file=sys.stderr,
            )
            return 1
        if not exists:
            print(f"recoeval-track-sync: no such file or folder: {p}", file=sys.stderr)
            return 2
        if Path(p).is_file() and Path(p).name not in JOB_FILE_NAMES:
            print(
                f"recoeval-track-sync: {p} is a file, not a job folder or a folder above one "
                f"(a file of a job folder, such as job.json or PENDING, stands for its folder)",
                file=sys.stderr,
            )
            return 2
    if args.dry_run:
        return _dry_run(args.paths)
    try:
        lines = _Lines()
        outcomes = sync_paths(args.paths, tracking_uri=args.tracking_uri, out=lines)
        lines.flush()
    except KeyboardInterrupt:
        print(
            "recoeval-track-sync: interrupted; run it again to finish (nothing is uploaded twice).",
            file=sys.stderr,
        )
        return 130
    except Exception as err:  # noqa: BLE001 - one paragraph, never a traceback
        from ..jobdir.redact import scrub_text

        first = (str(err).strip().splitlines() or [""])[0][:300]
        print(
            scrub_text(
                f"recoeval-track-sync: {type(err).__name__}: {first}. Nothing was "
                "uploaded twice; run it again (--dry-run lists what is pending)."
            ),
            file=sys.stderr,
        )
        return 1
    return 0 if all(o.ok for o in outcomes) else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
