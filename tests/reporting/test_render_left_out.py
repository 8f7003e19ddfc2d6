"""The left-out table on the page: folded under a heading that counts its rows (the notes above
it already say what is missing), its column saying in words what each row leaves out, and its
long reasons wrapped instead of widening the table past the screen."""

from __future__ import annotations

import re

from report_runs import synthetic_run

from recoeval_tracking.reporting.render import render_html, render_markdown
from recoeval_tracking.reporting.report import build_report


def _report():
    runs = [
        synthetic_run("als", {"ndcg_at_10": 0.3, "ils_at_10": 0.4}, seed=1),
        synthetic_run("pop", {"ndcg_at_10": 0.2}, seed=2),
        synthetic_run("knn", {"ndcg_at_10": 0.25}, seed=3),
    ]
    return build_report(runs, "pop", n_bootstrap=0, n_permutations=20)


def test_the_left_out_table_is_folded_and_says_what_each_row_leaves_out():
    report = _report()
    assert len(report.left_out) == 3  # ils of pop and knn (no values), of als (no test)
    page = render_html(report, {})
    fold = page[page.index("<details><summary>Left out of the comparison") :]
    fold = fold[: fold.index("</details>")]
    assert "with the reason (3)</summary>" in fold
    header = re.findall(r"<th[^>]*>([^<]+)</th>", fold)
    assert header == ["metric", "system", "left out", "reason"]
    rows = re.findall(r"<tr><td[^>]*>([^<]+)</td><td[^>]*>([^<]+)</td><td[^>]*>([^<]+)</td>", fold)
    assert [(system, what) for _, system, what in rows] == [
        ("pop", "the metric"),
        ("knn", "the metric"),
        ("als", "the test (mean shown)"),
    ]
    md = render_markdown(report)
    assert "<summary>Left out of the comparison, with the reason (3)</summary>" in md


def test_long_reasons_wrap_and_short_words_do_not():
    page = render_html(_report(), {})
    assert "td.w{white-space:normal" in page
    fold = page[page.index("<details><summary>Left out of the comparison") :]
    fold = fold[: fold.index("</details>")]
    long_cells = re.findall(r'<td class="t w">([^<]+)</td>', fold)
    assert long_cells and all(len(c) > 60 for c in long_cells)
    short_cells = re.findall(r'<td class="t">([^<]+)</td>', fold)
    assert short_cells and all(len(c) <= 60 for c in short_cells)


def test_the_one_dataset_sentence_stays_below_the_first_screen():
    """The sentence on the rank statistics goes before the folded details, not into the first
    screen before the left-out fold."""
    page = render_html(_report(), {})
    left_out_end = page.index("</details>", page.index("<summary>Left out of the comparison"))
    assert left_out_end < page.index("One dataset:")
