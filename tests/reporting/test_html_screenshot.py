"""The report page in headless Chromium: no console errors, and a screenshot of its first screen
(1400 x 900) showing the summary table and the headline curves, the details folded below. Skipped when Chromium is absent (``apt-get install chromium``). Set
``RECOEVAL_SCREENSHOT_DIR`` to keep the PNG."""

from __future__ import annotations

import os
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from report_runs import synthetic_run

from recoeval_tracking.reporting.render import write_report
from recoeval_tracking.reporting.report import build_report

CHROMIUM = "/usr/bin/chromium"


def _chromium(args, tmp_path, height=900):
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={tmp_path / 'chrome-profile'}",
            f"--window-size=1400,{height}",
            *args,
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.mark.slow
@pytest.mark.skipif(
    not os.path.exists(CHROMIUM), reason="Chromium is not installed (apt-get install chromium)"
)
def test_report_page_in_headless_chromium(tmp_path):
    runs = []
    for i, mu in enumerate((0.3, 0.45, 0.32)):
        r = synthetic_run(
            f"run{i}",
            {"ndcg_at_10": mu, "p_at_10": mu / 2},
            seed=i,
            params={"model.factors": str(16 * (i + 1))},
        )
        k = np.arange(1, 11)
        r.curves = pd.DataFrame(
            {
                "k": k,
                "ndcg_at_k": mu * (1 - np.exp(-k / 3)),
                "ndcg_at_k_ci95_low": mu * (1 - np.exp(-k / 3)) - 0.02,
                "ndcg_at_k_ci95_high": mu * (1 - np.exp(-k / 3)) + 0.02,
            }
        )
        runs.append(r)
    rep = build_report(runs, n_bootstrap=100, n_permutations=100)
    page = write_report(rep, tmp_path / "report.html")["html"]
    url = page.resolve().as_uri()

    # Console messages go to stderr with --enable-logging; the page has no script, so none.
    dump = _chromium(["--enable-logging=stderr", "--v=0", "--dump-dom", url], tmp_path)
    assert dump.returncode == 0, dump.stderr[-2000:]
    console = [line for line in dump.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert console == []
    dom = dump.stdout
    # The summary, the effect sizes, one table per metric, the win/tie/loss table of each
    # metric, users per run, inputs; figures: the ndcg curves, two per-user distributions, the
    # metrics against model.factors.
    assert dom.count("<table") == 2 * len(rep.metrics) + 4 and dom.count("<img") == 4
    # First the summary and the headline curve, then the folded details: every metric's table,
    # the distributions, the sweep figure, the inputs.
    first_fold = dom.index("<details")
    assert dom.index("Summary") < first_fold and dom.index("<img") < first_fold
    assert dom.count("<details") == 5 and "<details open" not in dom

    shot = tmp_path / "report.png"
    proc = _chromium(
        [
            "--virtual-time-budget=10000",
            "--run-all-compositor-stages-before-draw",
            f"--screenshot={shot}",
            url,
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    keep = os.environ.get("RECOEVAL_SCREENSHOT_DIR")
    if keep:
        os.makedirs(keep, exist_ok=True)
        shutil.copyfile(shot, os.path.join(keep, "report_page.png"))
    from matplotlib import image

    pixels = image.imread(str(shot))
    assert pixels.shape[:2] == (900, 1400)
    # The summary and a curve figure make a first screen far from blank: many distinct colours,
    # much ink.
    rgb = (pixels[..., :3] * 255).astype(np.uint8).reshape(-1, 3)
    assert len(np.unique(rgb, axis=0)) > 200
    assert (rgb.sum(axis=1) < 600).mean() > 0.02
