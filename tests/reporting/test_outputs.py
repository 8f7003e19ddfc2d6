"""The comparison's outputs go through the renderers' registration (reporting.outputs): the
comparison never imports its renderers, the renderer modules register themselves."""

from __future__ import annotations

import pytest

import recoeval_tracking.reporting  # noqa: F401 - the package imports every renderer
from recoeval_tracking.reporting.compare import Comparison
from recoeval_tracking.reporting.outputs import OUTPUTS, output
from recoeval_tracking.reporting.render import figures, html, latex, markdown, write


def test_every_output_is_registered_by_its_renderer():
    assert OUTPUTS["latex"] is latex.comparison_latex
    assert OUTPUTS["effects_latex"] is latex.effects_latex
    assert OUTPUTS["html"] is html.render_html
    assert OUTPUTS["markdown"] is markdown.render_markdown
    assert OUTPUTS["write"] is write.write_report
    assert OUTPUTS["plot"] is figures.comparison_plot
    assert OUTPUTS["cd_figure"] is figures.cd_figure


@pytest.mark.parametrize(
    ("method", "name", "kwargs"),
    [
        ("to_html", "html", {"title": "T"}),
        ("to_markdown", "markdown", {"title": "T"}),
    ],
)
def test_the_methods_call_the_registered_renderer(monkeypatch, method, name, kwargs):
    calls = []
    monkeypatch.setitem(OUTPUTS, name, lambda comp, **kw: calls.append((comp, kw)) or "page")
    assert getattr(Comparison, method)("a comparison", **kwargs) == "page"
    assert calls == [("a comparison", kwargs)]


def test_an_unregistered_output_is_named():
    with pytest.raises(LookupError, match="'pdf'"):
        output("pdf")
