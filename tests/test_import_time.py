"""What a job does not need stays unimported: a new process's first job pays for every import
(``python -X importtime``); each check runs in a fresh interpreter and looks at
``sys.modules`` there."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from commands import clean_env
from scipy import stats


def _run(code: str) -> list:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env=clean_env(),
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_interval_of_a_mean_imports_no_scipy_stats():
    # every job's table and metrics.json carry 95% intervals; scipy.stats is a second of a new
    # process (its distributions, scipy.optimize, scipy.spatial) for one Student-t quantile
    values = [0.0, 0.5, 0.25, 1.0, 0.75, 0.1, 0.9]
    code = (
        "import json, sys, numpy as np\n"
        "from recoeval_tracking.metrics.results import mean_ci95\n"
        f"row = mean_ci95(np.array({values!r}))\n"
        "print(json.dumps([list(row), 'scipy.stats' in sys.modules]))\n"
    )
    (mean, low, high, n), loaded = _run(code)
    assert not loaded
    # the definition: mean +- t_{0.975, n-1} * s / sqrt(n), the quantile from scipy.stats here
    v = np.array(values)
    half = stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    assert n == 7 and mean == v.mean()
    assert [low, high] == pytest.approx([v.mean() - half, v.mean() + half], rel=1e-14, abs=0)
