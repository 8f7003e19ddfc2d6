"""The comparison's outputs, registered by the modules that write them.

The comparison (:mod:`.compare`, :mod:`.verdicts`) is the model; the renderers (:mod:`.latex`,
:mod:`.render`, :mod:`.figures`) depend on it and never the other way. So that
:meth:`Comparison.to_latex`, :meth:`~Comparison.to_html`, :meth:`~Comparison.to_markdown`,
:meth:`~Comparison.write`, :meth:`~Comparison.effects_to_latex`, :meth:`~Comparison.plot` and
:meth:`~Comparison.cd_diagram` stay methods, each renderer module registers its function here
under a name when it is imported (``register_output("latex", comparison_latex)``), and the
method calls :func:`output` with that name. The package (``recoeval_tracking.reporting``)
imports the renderer modules, and Python runs it before any of its modules, so the outputs are
registered whenever a comparison exists.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["OUTPUTS", "register_output", "output"]

#: The renderer of each output by name: ``latex``, ``effects_latex`` (from :mod:`.latex`),
#: ``html``, ``markdown`` and ``write`` (from :mod:`.render`), ``plot`` and ``cd_figure`` (from
#: :mod:`.figures`).
OUTPUTS: dict[str, Callable[..., Any]] = {}


def register_output(name: str, func: Callable[..., Any]) -> None:
    """Register ``func`` as the renderer of the output ``name`` (the last registration wins)."""
    OUTPUTS[name] = func


def output(name: str) -> Callable[..., Any]:
    """The renderer registered as ``name``; a clear error when no module registered one."""
    try:
        return OUTPUTS[name]
    except KeyError:
        raise LookupError(
            f"no renderer registered for the output {name!r} (registered: {sorted(OUTPUTS)}); "
            "import recoeval_tracking.reporting, whose renderer modules register them"
        ) from None
