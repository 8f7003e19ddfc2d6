"""One study, one answer on four surfaces: a k-fold sweep of a grid with two baselines
(``-m model=item_knn model.neighbours=5,20 'baselines=[popularity,random]' split=kfold
split.fold=0,1``, synthetic data, a SQLite store in a temporary folder) is read back from

* the terminal (the sweep's last lines: one block per baseline, each system's mean difference
  over the folds paired),
* MLflow (each tested run's ``vs_<baseline>_ndcg_at_10``, its role tag, the parent's
  ``vs_<baseline>_ndcg_at_10`` and ``recoeval.vs_best.<baseline>``, the marked leaderboard),
* ``rt.compare`` on the same run ids (:meth:`Comparison.against_baselines`),
* the report (the systems x baselines table of its Markdown page and its LaTeX),

and every difference agrees number for number, computed here from the runs' own metrics.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from commands import SMALL_SWEEP

import recoeval_tracking as rt

from .conftest import study_here

SMALL = SMALL_SWEEP
STUDY = [
    "-m",
    "model=item_knn",
    "model.neighbours=5,20",
    "baselines=[popularity,random]",
    "split=kfold",
    "split.fold=0,1",
]
METRIC = "ndcg_at_10"
BASELINES = ["popularity", "random"]


@pytest.fixture(scope="module")
def study(tmp_path_factory, migrated_db):
    root, proc = study_here(tmp_path_factory, migrated_db, "study", [*STUDY, *SMALL])
    from mlflow import MlflowClient

    uri = f"sqlite:///{root / 'mlflow.db'}"
    client = MlflowClient(uri)
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()])
    parent = next(r for r in runs if r.data.tags.get("recoeval.sweep_parent") == "true")
    children = [r for r in runs if r is not parent]
    return root, uri, proc.stdout, parent, children


def _system(run) -> str:
    """A run's system as the surfaces name it: its name without the fold."""
    return " ".join(w for w in run.info.run_name.split() if not w.startswith("fold="))


def _expected(children) -> dict[tuple[str, str], float]:
    """(baseline, system) -> the mean over folds of the run's value minus the baseline's run of
    the same fold, from the runs' logged metrics."""
    value = {(_system(r), r.data.params["split.fold"]): r.data.metrics[METRIC] for r in children}
    systems = sorted({s for s, _ in value})
    out = {}
    for b in BASELINES:
        for s in systems:
            if s != b:
                out[(b, s)] = float(np.mean([value[(s, f)] - value[(b, f)] for f in ("0", "1")]))
    return out


def _terminal(stdout: str) -> dict[tuple[str, str], str]:
    out, base = {}, None
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("against each baseline"))
    for line in lines[start + 1 :]:
        head = re.match(r"^  (\S.*?) \(baseline; ", line)
        row = re.match(r"^     (.+?)\s+([+-]\d+\.\d{4})  \(", line)
        if head:
            base = head.group(1)
        elif row:
            out[(base, row.group(1).removesuffix(" (baseline)"))] = row.group(2)
        else:
            break
    return out


@pytest.mark.slow
def test_the_terminal_the_runs_the_parent_compare_and_the_report_agree(study, tmp_path):
    from recoeval_tracking.app.report import run_report

    root, uri, stdout, parent, children = study
    expected = _expected(children)
    assert len(expected) == 2 * 3  # each baseline against the two grid points and the other

    # the terminal: every baseline, in the order named, each system paired by fold
    said = _terminal(stdout)
    assert said == {k: f"{v:+.4f}" for k, v in expected.items()}, stdout[-3000:]
    assert "each run paired with the baseline's run of the same split.fold" in stdout
    assert "2 replicates" in stdout and "all runs" not in stdout
    blocks = [ln for ln in stdout.splitlines() if re.match(r"^  \S.* \(baseline; ", ln)]
    assert [b.split()[0] for b in blocks] == BASELINES

    # each run: its difference to each baseline's run of the same fold, and its role
    for run in children:
        system = _system(run)
        assert run.data.tags["recoeval.role"] == ("baseline" if system in BASELINES else "compared")
        for b in BASELINES:
            key = f"vs_{b}_{METRIC}"
            if system == b:
                assert key not in run.data.metrics
    for (b, s), v in expected.items():
        logged = [r.data.metrics[f"vs_{b}_{METRIC}"] for r in children if _system(r) == s]
        assert len(logged) == 2 and math.isclose(float(np.mean(logged)), v, abs_tol=1e-12)

    # the parent: per baseline the best compared system's difference, named
    for b in BASELINES:
        best = max(
            (s for (bb, s) in expected if bb == b and s not in BASELINES),
            key=lambda s, b=b: expected[(b, s)],
        )
        assert parent.data.tags[f"recoeval.vs_best.{b}"] == best
        assert math.isclose(
            parent.data.metrics[f"vs_{b}_{METRIC}"], expected[(b, best)], abs_tol=1e-12
        )
    assert parent.data.tags["recoeval.vs_baselines"] in stdout
    note = parent.data.tags["mlflow.note.content"]
    assert "popularity fold=0 (baseline)" in note and "**Against each baseline**" in note

    # rt.compare on the same runs
    cmp = rt.compare(
        [r.info.run_id for r in children],
        tracking_uri=uri,
        metrics=[METRIC],
        n_bootstrap=0,
        n_permutations=100,
    )
    assert cmp.baseline == "popularity" and cmp.settings["replicate_key"] == "split.fold"
    table = cmp.against_baselines(METRIC)
    got = {(r.baseline, r.system): r.delta for r in table.itertuples()}
    assert got.keys() == expected.keys()
    for k, v in expected.items():
        assert math.isclose(got[k], v, abs_tol=1e-12), k
    # the first baseline's rows are the summary's own numbers
    summary = cmp.summary().set_index("system")
    for (b, s), v in got.items():
        if b == "popularity":
            assert summary.loc[s, "delta"] == v

    # the report: its systems x baselines table, in the page and in LaTeX
    out = run_report(
        {
            "tracking": {"uri": uri},
            "select": {"sweep_id": parent.data.tags["recoeval.sweep_id"]},
            "metrics": [METRIC],
            "n_bootstrap": 0,
            "n_permutations": 100,
            "output": {
                "dir": str(tmp_path / "report"),
                "markdown": "report.md",
                "latex": "report.tex",
                "log_to_mlflow": False,
            },
        }
    )
    md = out["paths"]["markdown"].read_text()
    head = md.index(f"## {METRIC} against every baseline")
    body = md[head:].split("\n\n")[1].splitlines()  # the table after its heading
    header = [c.strip() for c in body[0].strip("|").split("|")]
    assert header == ["system", *(f"vs {b} \\(baseline\\)" for b in BASELINES)]
    page = {}
    for line in body[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        system = cells[0].replace("\\", "").removesuffix(" (baseline)")
        for b, cell in zip(BASELINES, cells[1:]):
            if cell:
                page[(b, system)] = cell.replace("\\", "").split()[0]
    assert page == {k: f"{v:+.4f}" for k, v in expected.items()}
    assert "| all runs" not in md  # a group is named after its system
    tex = out["paths"]["latex"].read_text()
    assert "vs popularity & vs random" in tex
    for v in expected.values():
        assert f"${v:+.4f}$" in tex
