"""The report's first screen as a reader meets it: the intro counts and names the metrics the
report compares (a metric the baseline has no value of is compared for no run, and is said in
one line apart, with the reason), and a warning box has one bold lead phrase, its rest plain."""

from __future__ import annotations

import re

from report_runs import synthetic_run

from recoeval_tracking.reporting.render import render_html, render_markdown
from recoeval_tracking.reporting.render.html import _PAGE, _environment
from recoeval_tracking.reporting.render.markdown import _md_items
from recoeval_tracking.reporting.render.sections import _protocol_items
from recoeval_tracking.reporting.report import build_report


def _report():
    runs = [  # ils: only als has item vectors; the baseline pop has none
        synthetic_run("als", {"ndcg_at_10": 0.3, "p_at_10": 0.2, "ils_at_10": 0.4}, seed=1),
        synthetic_run("pop", {"ndcg_at_10": 0.2, "p_at_10": 0.1}, seed=2),
        synthetic_run("knn", {"ndcg_at_10": 0.25, "p_at_10": 0.15}, seed=3),
    ]
    return build_report(runs, "pop", n_bootstrap=0, n_permutations=20)


def test_the_intro_counts_only_the_compared_metrics_and_says_the_rest_in_one_line():
    md = render_markdown(_report())
    intro, apart = md.split("\n\n")[1:3]
    assert intro.endswith("on 2 metrics: ndcg_at_10, p_at_10.")
    assert "ils" not in intro
    assert apart.count("\n") == 0  # one line
    assert apart.startswith("Not compared: ils_at_10 (only als has it; ils needs item vectors")
    assert "is in als only" not in md  # said once: no note repeating it
    page = render_html(_report(), {})
    assert "on 2 metrics: ndcg_at_10, p_at_10.</p>" in page
    assert "<p>Not compared: ils_at_10 (only als has it; ils needs item vectors" in page


def test_a_report_where_every_metric_is_compared_has_no_such_line():
    runs = [
        synthetic_run("als", {"ndcg_at_10": 0.3}, seed=1),
        synthetic_run("pop", {"ndcg_at_10": 0.2}, seed=2),
    ]
    md = render_markdown(build_report(runs, "pop", n_bootstrap=0, n_permutations=20))
    assert "on 1 metric: ndcg_at_10." in md and "Not compared" not in md


def _unequal():
    settings = {
        "protocol": "chosen on validation by val NDCG@10, tested once",
        "budgets": {"cosine": "6 configurations, 1.0 s of fits", "pop": "2 configurations"},
        "equal_budgets": False,
        "leakage": "99.9% of test entries are older than the newest training entry",
    }
    return _protocol_items(settings)


def test_the_unequal_budget_box_has_one_bold_lead_and_plain_text_after():
    ((kind, _, text),) = _unequal()
    assert kind == "warning"
    page = _environment().get_template(_PAGE).render(title="t", items=_unequal(), figures={})
    (box,) = re.findall(r"<p class='warning'>(.*?)</p>", page, flags=re.S)
    assert re.findall(r"<b>(.*?)</b>", box) == ["Unequal budgets:"]
    assert box.startswith("<b>Unequal budgets:</b> the systems were not tuned alike")
    assert "Budgets: cosine 6 configurations, 1.0 s of fits; pop 2 configurations." in box
    css = page[page.index(".warning{") :]
    assert "font-weight:bold" not in css[: css.index("}")]
    md = "\n".join(_md_items(_unequal(), None))
    (line,) = [ln for ln in md.splitlines() if ln.startswith(">")]
    assert line.startswith("> **Unequal budgets:** the systems") and line.count("**") == 2
    # a warning without a short lead phrase is plain throughout
    text = "x" * 70 + ": the rest"
    page = (
        _environment()
        .get_template(_PAGE)
        .render(title="t", items=[("warning", "", text)], figures={})
    )
    assert f"<p class='warning'>{text}</p>" in page


def test_metrics_left_out_for_one_reason_say_it_once():
    runs = [
        synthetic_run("als", {"ndcg_at_10": 0.3, "ils_at_10": 0.4, "diversity_at_10": 0.6}, 1),
        synthetic_run("pop", {"ndcg_at_10": 0.2}, seed=2),
    ]
    md = render_markdown(build_report(runs, "pop", n_bootstrap=0, n_permutations=20))
    (line,) = [ln for ln in md.splitlines() if ln.startswith("Not compared")]
    assert line.startswith(
        "Not compared: ils_at_10, diversity_at_10 (only als has them; each needs item vectors"
    )
    assert line.count("item vectors") == 1
