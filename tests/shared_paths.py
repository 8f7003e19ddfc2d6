"""Where the real MovieLens files are: ``$RECOEVAL_SHARED_DATA`` or ``<repo>/../shared/data``.

Imported by test modules as ``shared_paths`` (the root conftest puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def shared_file(*parts: str) -> Path:
    """Path of a shared data file, or skip the test when it is missing."""
    env = os.environ.get("RECOEVAL_SHARED_DATA")
    root = Path(env) if env else Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
    p = root.resolve().joinpath(*parts)
    if not p.exists():
        pytest.skip(f"shared data file {p} is missing")
    return p
