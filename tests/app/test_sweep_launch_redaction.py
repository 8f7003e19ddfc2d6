"""A sweep's job-launch lines (Hydra's launcher logs ``#0 : <overrides>``) printed credentials
inside quoted overrides: ``+x.opts='user=bob password=...'``, a URL's ``?token=...``. The
record factory ``recoeval-track`` installs before Hydra starts (``app/task.py``'s
``redact_logs``, called by ``app/cli.py``'s ``main``) now cleans them with the one rule of
``jobdir/redact.py``; the job folder's files leak nothing either."""

from __future__ import annotations

import pytest
from commands import run_command

SECRETS = ["pw-launch-4f9a", "tok-launch-7c2e", "tok-list-1b3d", "tok-list-9e8f"]


@pytest.mark.slow
def test_a_sweeps_launch_lines_and_files_leak_no_quoted_secret(tmp_path):
    proc = run_command(
        [
            "-m",
            "model=popularity",
            "dataset.n_users=60",
            "dataset.n_items=30",
            "plots=false",
            "progress=false",
            "tracking=none",
            "+x.opts='user=bob password=pw-launch-4f9a'",
            "+x.url='http://h/x?token=tok-launch-7c2e'",
            "+db.tokens=[tok-list-1b3d,tok-list-9e8f]",
            "hydra.sweep.dir=sweep",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    terminal = proc.stdout + proc.stderr
    assert "#0 : model=popularity" in terminal  # the launch line is there, cleaned
    assert not [s for s in SECRETS if s in terminal], terminal[-3000:]
    job = tmp_path / "sweep" / "0"
    for name in ("config.yaml", "overrides.yaml"):
        text = (job / name).read_text()
        assert not [s for s in SECRETS if s in text], (name, text)
