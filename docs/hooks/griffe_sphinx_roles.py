"""Griffe extension: the package's numpydoc docstrings use Sphinx roles (``:class:`~x.Y```,
``:func:``, ``:data:``, ``:math:``, ...), which mkdocstrings would print as they are. Each role
becomes inline code (``Y`` for ``~x.Y``, as Sphinx shows it); the docstrings themselves are left
unchanged."""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(class|func|meth|attr|data|mod|obj|exc|const|math):`(~?)([^`]+)`")


def _as_code(match: re.Match[str]) -> str:
    role, short, target = match.groups()
    if short and role != "math":
        target = target.rsplit(".", 1)[-1]
    return f"`{target}`"


def rewrite(text: str) -> str:
    """``text`` with every Sphinx role written as inline code."""
    return _ROLE.sub(_as_code, text)


class SphinxRolesAsCode(griffe.Extension):
    """Rewrite the Sphinx roles of every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = rewrite(obj.docstring.value)
