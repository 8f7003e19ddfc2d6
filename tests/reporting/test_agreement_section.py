"""The report section of ``rt.compare_profiles`` (reporting/agreement.py), its hook in a run
comparison's report and the ``recoeval-track-agree`` command."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from report_runs import synthetic_run

import recoeval_tracking as rt
from recoeval_tracking.app.agree import main as agree_main
from recoeval_tracking.reporting.agreement import agreement_items
from recoeval_tracking.reporting.agreement_page import render_agreement
from recoeval_tracking.reporting.render import render_html, render_markdown
from recoeval_tracking.reporting.report import build_report

# item 0 in train; test 1 (value 5) and 3 (value 1); the list: 3, 9 (outside), 1, 1 again, 2
TRAIN = sp.csr_array(np.array([[1.0, 0, 0, 0, 0]]))
TEST = sp.csr_array(np.array([[0, 5.0, 0, 1.0, 0]]))


@pytest.fixture(scope="module")
def agreement():
    return rt.compare_profiles(
        TRAIN, TEST, ranked=np.array([[3, 9, 1, 1, 2]]), k=3, profiles=["recbole", "elliot"]
    )


def test_section_shows_values_reasons_lists_and_notes(agreement):
    items = agreement_items(agreement)
    kinds = [kind for kind, _, _ in items]
    assert kinds[:2] == ["text", "table"] and "warning" in kinds
    page = render_agreement(agreement)
    # RecBole's binary-gain NDCG against the default linear one:
    # default DCG 1/1 + 5/log2(4) over 5 + 1/log2(3); binary 1 + 1/2 over 1 + 1/log2(3)
    lin = (1 + 5 / 2) / (5 + 1 / np.log2(3))
    binary = 1.5 / (1 + 1 / np.log2(3))
    assert f"{binary:.4f}" in page and f"{lin:.4f}" in page
    assert f"{binary / lin - 1:+.1%}" in page and "gain: linear -\\> binary" in page
    # the list has an item outside the catalogue (9) and a repeat (1)
    assert "| out\\_of\\_catalogue | 1 |" in page and "| duplicates | 1 |" in page
    assert "Elliot counts every copy" in page
    html = render_agreement(agreement, "html")
    assert "<table" in html and "Why libraries disagree" in html
    with pytest.raises(rt.InputError, match="'fmt'"):
        render_agreement(agreement, "pdf")


def test_a_comparison_that_carries_an_agreement_shows_it(agreement):
    runs = [
        synthetic_run(n, {"ndcg_at_10": mu}, seed=i)
        for i, (n, mu) in enumerate([("a", 0.3), ("b", 0.2)])
    ]
    cmp = rt.Comparison.from_report(build_report(runs, "b", n_bootstrap=20, n_permutations=20))
    assert "Why libraries disagree" not in render_markdown(cmp)
    cmp.agreement = agreement  # type: ignore[attr-defined]
    assert "Why libraries disagree" in render_markdown(cmp)
    assert "Why libraries disagree" in render_html(cmp, figures={})


def test_command_line(tmp_path, capsys):
    (tmp_path / "train.tsv").write_text("u1\ta\t5\nu2\tb\t4\n")
    (tmp_path / "test.tsv").write_text("u1\tb\t3\nu1\tc\t1\nu2\ta\t2\n")
    (tmp_path / "recs.tsv").write_text("u1\tc\t0.9\nu1\tzz\t0.8\nu1\tb\t0.7\nu2\ta\t0.5\n")
    args = [f"--{x}={tmp_path / (x + '.tsv')}" for x in ("train", "test")]
    args += [f"--ranked={tmp_path / 'recs.tsv'}", "--k=2", "--profiles=warprec"]
    assert agree_main([*args, f"--markdown={tmp_path / 'a.md'}"]) == 0
    out = capsys.readouterr().out
    # u1: zz is unknown -> a miss at rank 2 by default, dropped by WarpRec (b moves up)
    assert "warprec MAP" in out and "out_of_catalogue: slot -> drop" in out
    assert (tmp_path / "a.md").read_text().startswith("# Why libraries disagree")
    assert agree_main([*args[:1], f"--test={tmp_path / 'missing.tsv'}", args[2], "--k=2"]) == 2
    assert agree_main([*args, "--profiles=nope"]) == 2
    err = capsys.readouterr().err
    assert "recoeval-track-agree:" in err and "'profiles'" in err and "'warprec'" in err


def test_command_line_help_and_file_errors_name_the_option(tmp_path, capsys):
    """A newcomer's first look: --help says what each file holds and shows a run; a missing or
    narrow file is refused naming its option."""
    with pytest.raises(SystemExit):
        agree_main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for words in ("user, item, value", "user, item, score", "outside the catalogue"):
        assert words in text, words
    assert "recoeval-track-agree --train train.tsv --test test.tsv --ranked recs.tsv" in text
    (tmp_path / "two.tsv").write_text("u1\ta\n")
    assert agree_main(["--train=none.tsv", "--test=none.tsv", "--ranked=none.tsv"]) == 2
    assert "--train must be a file of user, item, value rows" in capsys.readouterr().err
    one = str(tmp_path / "two.tsv")
    assert agree_main([f"--train={one}", f"--test={one}", f"--ranked={one}"]) == 2
    err = capsys.readouterr().err
    assert (
        "--train must be a file of user, item, value rows" in err
        and "whose rows have 2 columns" in err
    )
