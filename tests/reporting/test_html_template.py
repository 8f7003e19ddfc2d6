"""The report page's markup is one Jinja2 template, shipped as package data, autoescaped."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata, resources
from pathlib import Path

from report_runs import synthetic_run

from recoeval_tracking.reporting.render import render_html
from recoeval_tracking.reporting.report import build_report

ROOT = Path(__file__).resolve().parents[2]
TEMPLATE = "templates/report.html.j2"


def test_the_template_is_package_data():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = data["tool"]["setuptools"]["package-data"]["recoeval_tracking.reporting"]
    package_dir = ROOT / "recoeval_tracking" / "reporting"
    shipped = {
        p.relative_to(package_dir).as_posix() for pat in patterns for p in package_dir.glob(pat)
    }
    assert TEMPLATE in shipped
    assert resources.files("recoeval_tracking.reporting").joinpath(TEMPLATE).is_file()


def test_the_template_engine_is_a_declared_dependency():
    """Every library the renderers import is in ``[project] dependencies`` by its distribution
    name, not left for MLflow to install."""
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = {
        re.split(r"[<>=!~;\[ ]", req, maxsplit=1)[0].lower().replace("_", "-")
        for req in data["project"]["dependencies"]
    }
    render = ROOT / "recoeval_tracking" / "reporting" / "render"
    trees = [ast.parse(p.read_text(encoding="utf-8")) for p in sorted(render.glob("*.py"))]
    imported = set()
    for node in (node for tree in trees for node in ast.walk(tree)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"__future__"}
    assert {"jinja2", "markupsafe"} <= third_party
    dists = metadata.packages_distributions()
    missing = {
        name: dists[name]
        for name in third_party
        if not {d.lower().replace("_", "-") for d in dists[name]} & declared
    }
    assert not missing, f"imported by reporting/render/, not declared in pyproject.toml: {missing}"


def test_every_run_string_is_escaped_by_the_template():
    hostile = "<img src=x onerror=alert(1)></td><script>alert('x')</script>"
    a = synthetic_run("a", {"ndcg_at_10": 0.3}, seed=0, params={"model.name": hostile})
    b = synthetic_run("b", {"ndcg_at_10": 0.4}, seed=1)
    a.name, b.name = hostile, "b & <b>bold</b>"
    page = render_html(build_report([a, b], n_bootstrap=0, n_permutations=10), {}, title=hostile)
    assert "<script" not in page and "<img" not in page and "<b>bold</b>" not in page
    # the name lands in the title, the heading and the tables, escaped each time
    escaped = "&lt;img src=x onerror=alert(1)&gt;&lt;/td&gt;&lt;script&gt;alert(&#39;x&#39;)"
    assert page.count(escaped) >= 3
    assert f"<title>{escaped}&lt;/script&gt;</title>" in page
    assert "b &amp; &lt;b&gt;bold&lt;/b&gt;" in page


def test_columns_of_words_are_aligned_left_and_columns_of_numbers_right():
    """A reason or a name reads from the left; a mean, an interval or a count from the right."""
    runs = [
        synthetic_run("als", {"ndcg_at_10": 0.3, "ils_at_10": 0.4}, seed=1),
        synthetic_run("pop", {"ndcg_at_10": 0.2}, seed=2),
    ]
    page = render_html(build_report(runs, "pop", n_bootstrap=20, n_permutations=20))
    assert "td.t,th.t{text-align:left}" in page
    left_out = page[page.index("Left out of the comparison") :]
    left_out = left_out[: left_out.index("</table>")]
    header = re.findall(r"<th( class=\"t\")?>([^<]+)</th>", left_out)
    assert dict((name, bool(cls)) for cls, name in header)["reason"] is True
    summary = page[page.index("<h2>Summary") :]
    summary = summary[: summary.index("</table>")]
    cells = re.findall(r"<td( class=\"t\")?>(?:<b>)?([^<]+)", summary)
    assert cells and all(bool(cls) == (value in ("als", "pop (baseline)")) for cls, value in cells)
