"""What a fresh interpreter prints: the imports of a Python worker or of a user's first import,
measured where this session's modules cannot hide them."""

from __future__ import annotations

import subprocess
import sys


def fresh_python(code: str) -> str:
    """The standard output of ``python -c code`` in a new interpreter, stripped."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()
