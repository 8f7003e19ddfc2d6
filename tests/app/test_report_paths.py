"""The report writes nothing outside ``output.dir``: a page name is inside by path components,
not by text (``report2/`` is not inside ``report/``), and the Markdown page's figures are never
written through a symbolic link that leaves the folder (a figures folder, or a figure, linked
elsewhere by whoever could write there)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from recoeval_tracking import InputError
from recoeval_tracking._validation import resolve_under
from recoeval_tracking.app.report import run_report
from recoeval_tracking.jobdir import write_job_dir

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tracking"))
from results_factory import make_results  # noqa: E402


@pytest.mark.parametrize("rel", ["../report2/page.html", "../report2", "../rep", "/elsewhere/x"])
def test_a_sibling_whose_name_starts_alike_is_outside(tmp_path, rel):
    """A text prefix test took ``<tmp>/report2/page.html`` for a path inside ``<tmp>/report``."""
    base = tmp_path / "report"
    base.mkdir()
    (tmp_path / "report2").mkdir()
    with pytest.raises(InputError, match="output.html must be a path inside"):
        resolve_under(base, rel, what="output.html")


def test_a_link_to_a_sibling_whose_name_starts_alike_is_outside(tmp_path):
    base = tmp_path / "report"
    base.mkdir()
    (tmp_path / "report2").mkdir()
    (base / "pages").symlink_to(tmp_path / "report2", target_is_directory=True)
    with pytest.raises(InputError, match="report2"):
        resolve_under(base, "pages/page.html", what="output.html")


@pytest.mark.parametrize("rel", ["page.html", "sub/../page.html", "sub/deeper/page.md", "."])
def test_paths_inside_pass(tmp_path, rel):
    base = tmp_path / "report"
    (base / "sub").mkdir(parents=True)
    assert resolve_under(base, rel, what="output.html").is_relative_to(base.resolve())


def _job_dirs(tmp_path: Path) -> list[str]:
    ds = {"data_fingerprint": "d" * 16, "split_fingerprint": "s" * 16}
    return [
        str(write_job_dir(make_results(n_users=30, seed=i), tmp_path / n, dataset=ds, plots=False))
        for i, n in enumerate(("a", "b"))
    ]


def _cfg(tmp_path: Path, out: Path) -> dict:
    return {
        "select": {"job_dirs": _job_dirs(tmp_path)},
        "baseline": "a",
        "slices": [],
        "n_bootstrap": 20,
        "n_permutations": 20,
        "output": {"dir": str(out), "markdown": "report.md", "html": None, "log_to_mlflow": False},
    }


def test_figures_are_not_written_through_a_linked_figures_folder(tmp_path):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (out / "report_figures").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(InputError) as err:
        run_report(_cfg(tmp_path, out), tmp_path)
    text = str(err.value)
    assert f"{out / 'report_figures'} is a symbolic link to {elsewhere.resolve()}" in text
    assert "outside output.dir" in text
    assert list(elsewhere.iterdir()) == [] and not (out / "report.md").exists()


def test_figures_are_not_written_through_a_linked_figure(tmp_path):
    out, victim = tmp_path / "out", tmp_path / "victim.png"
    (out / "report_figures").mkdir(parents=True)
    victim.write_bytes(b"precious")
    (out / "report_figures" / "curves_ndcg_at_k.png").symlink_to(victim)
    with pytest.raises(InputError, match=r"curves_ndcg_at_k\.png is a symbolic link to"):
        run_report(_cfg(tmp_path, out), tmp_path)
    assert victim.read_bytes() == b"precious"


def test_a_link_made_while_the_statistics_ran_is_refused_too(tmp_path, monkeypatch):
    """Checked again just before the pages are written (the statistics can take minutes)."""
    import importlib

    # the module, not the function of the same name that the package exports
    importlib.import_module("recoeval_tracking.reporting.compare")
    compare_module = sys.modules["recoeval_tracking.reporting.compare"]

    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    original = compare_module.compare

    def compare_then_link(*args, **kwargs):
        result = original(*args, **kwargs)
        (out / "report_figures").symlink_to(elsewhere, target_is_directory=True)
        return result

    monkeypatch.setattr(compare_module, "compare", compare_then_link)
    with pytest.raises(InputError, match="is a symbolic link to"):
        run_report(_cfg(tmp_path, out), tmp_path)
    assert list(elsewhere.iterdir()) == []


def test_links_that_stay_inside_are_followed(tmp_path):
    out = tmp_path / "out"
    (out / "kept").mkdir(parents=True)
    (out / "report_figures").symlink_to(out / "kept", target_is_directory=True)
    result = run_report(_cfg(tmp_path, out), tmp_path)
    assert result["paths"]["markdown"] == out / "report.md"
    assert sorted(p.name for p in (out / "kept").iterdir())  # the figures, inside output.dir


def test_a_page_linked_out_is_refused_naming_the_link(tmp_path):
    out, victim = tmp_path / "out", tmp_path / "victim.md"
    out.mkdir()
    victim.write_text("precious")
    (out / "report.md").symlink_to(victim)
    with pytest.raises(InputError, match=r"output\.markdown: .*report\.md is a symbolic link to"):
        run_report(_cfg(tmp_path, out), tmp_path)
    assert victim.read_text() == "precious"


def test_a_missing_sqlite_store_is_named_and_not_created(tmp_path):
    """The report looks for the SQLite file before it searches (opening a missing store would
    create an empty one): the message names the file MLflow would have opened."""
    from .conftest import run_main

    proc = run_main(["select.sweep_id=0123456789ab"], tmp_path, command="recoeval-track-report")
    assert proc.returncode == 2
    assert f"there is no MLflow store at {tmp_path.resolve() / 'mlflow.db'} " in " ".join(
        proc.stderr.split()
    )
    assert not (tmp_path / "mlflow.db").exists()
