"""The app's child processes (standard library only): each is ``python -m <module> [args]``
with its stdin and stdout pipes to the job and its stderr discarded, and each is ended with
both pipes closed. The warm-up child (:mod:`recoeval_tracking._warm_child`) and the upload
child (:mod:`recoeval_tracking._uploader_child`) are started and ended here."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence

__all__ = ["start_child", "stop_child"]


def start_child(
    module: str, args: Sequence[str] = (), env: Mapping[str, str] | None = None
) -> subprocess.Popen:
    """``python -m module *args`` in this environment, with ``env``'s variables over it;
    ``OSError`` when it cannot start."""
    return subprocess.Popen(
        [sys.executable, "-m", module, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )


def stop_child(proc: subprocess.Popen, kill: bool = False) -> None:
    """End the child (``kill``: at once, in the middle of its work; else once it has read that
    nothing more comes) and close its pipes. A no-op but for the pipes once it has ended."""
    if kill and proc.poll() is None:
        proc.kill()
    if proc.stdin is not None:
        try:
            proc.stdin.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
