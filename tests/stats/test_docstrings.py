"""Every function of ``recoeval_tracking.stats`` says what it computes: its docstring has the
formula, a citation and an example, and every example of the package's modules runs (as
``python -m pytest --doctest-modules recoeval_tracking/stats`` runs them)."""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
import re

import pytest

from recoeval_tracking import stats

FUNCTIONS = [n for n in stats.__all__ if inspect.isfunction(getattr(stats, n))]
MODULES = ["recoeval_tracking.stats"] + [
    f"recoeval_tracking.stats.{m.name}" for m in pkgutil.iter_modules(stats.__path__)
]
#: A citation, a name and a year: "(Wilcoxon 1945)", "et al. 2017", "Bengio's (2003)",
#: "Demšar (2006,".
CITATION = re.compile(r"[A-Z][\w-]+(?:'s)?\.?,?\s+(?:\d{4}\b|\(\d{4}[,)])")
#: A formula: a math block or role, or a code span holding an operator.
FORMULA = re.compile(
    r"\.\. math::|:math:`|``[^`]*(?:=|/|±|\^|<|>|sqrt|\bsum\b|\bmin\b|\bmax\b)[^`]*``"
)


def test_the_functions_are_found():
    assert {"wilcoxon_test", "adjust_pvalues", "t_interval"} <= set(FUNCTIONS)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_a_function_gives_its_formula_a_citation_and_an_example(name):
    doc = inspect.getdoc(getattr(stats, name)) or ""
    assert FORMULA.search(doc), f"{name}: no formula"
    assert CITATION.search(doc), f"{name}: no citation"
    examples = doctest.DocTestFinder().find(getattr(stats, name), name)
    assert any(t.examples for t in examples), f"{name}: no example"


@pytest.mark.parametrize("module", MODULES)
def test_the_examples_run(module):
    result = doctest.testmod(importlib.import_module(module))
    assert result.failed == 0


def test_the_examples_are_many():
    tried = sum(doctest.testmod(importlib.import_module(m)).attempted for m in MODULES)
    assert tried >= 2 * len(FUNCTIONS)
