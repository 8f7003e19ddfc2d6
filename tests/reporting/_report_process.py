"""The report command and pdflatex as the report tests run them: real processes, output
captured, no ambient MLflow settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

#: How every process here runs: its output captured as text, its exit status returned.
CAPTURED = dict(capture_output=True, text=True, check=False)


def run_python(
    args: list[str], cwd: Path, *, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``python ARGS`` in ``cwd``; by default in this process's environment without its
    ``MLFLOW_*`` variables."""
    if env is None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_")}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, timeout=timeout, **CAPTURED)


def run_report_command(
    args: list[str], cwd: Path, *, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """``python -m recoeval_tracking.app.report ARGS`` in ``cwd`` (see :func:`run_python`)."""
    return run_python(["-m", "recoeval_tracking.app.report", *args], cwd, timeout=timeout, env=env)


def assert_latex_compiles(tex: str, folder: Path, name: str = "t") -> None:
    """``tex`` in an article with booktabs and amssymb compiles with pdflatex to a PDF."""
    doc = (
        "\\documentclass{article}\n\\usepackage{booktabs}\n\\usepackage{amssymb}\n"
        "\\begin{document}\n" + tex + "\n\\end{document}\n"
    )
    (folder / f"{name}.tex").write_text(doc, encoding="utf-8")
    cmd = ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"]
    proc = subprocess.run(cmd, cwd=folder, timeout=120, **CAPTURED)
    assert proc.returncode == 0, proc.stdout[-2000:]
    assert (folder / f"{name}.pdf").stat().st_size > 1000
