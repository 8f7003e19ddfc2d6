"""A Python process at the repository's root, as the GPU tests start the bench and pytest."""

from __future__ import annotations

import subprocess
import sys

from commands import REPO_ROOT


def run_python(
    args: list[str], *, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess:
    """``python ARGS`` in the repository's root, its output captured; ``env=None`` inherits."""
    captured = dict(capture_output=True, text=True, check=False)
    return subprocess.run(
        [sys.executable, *args], cwd=REPO_ROOT, env=env, timeout=timeout, **captured
    )
