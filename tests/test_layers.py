"""Every layer only looks down: the package's import graph, read from the source with ``ast``.

Every ``import`` and ``from ... import`` of every module counts, those inside functions included
(lazy imports are still dependencies); relative imports are resolved against the module's
package. The layers, bottom up: ``engine``; ``_validation``, ``scores``, ``data``, ``splitting``,
``models``, ``metrics``, ``stats`` (statistics on arrays: numpy, scipy, the standard library and
``_validation``'s errors only, so that any tool's per-user values can use them);
``distributed`` (the only importer of Dask; it registers its runner in the registry of
``metrics.remote``, where ``evaluate(client=...)`` finds it, so no module below imports it:
``metrics.remote`` loads it by name, from a table, when nothing is registered yet); ``jobdir``;
``tracking`` and ``reporting``; ``app``. Inside ``reporting``, the renderers
(``reporting/render/``) sit on the model and see it only through its view (``reporting/view.py``).
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = "recoeval_tracking"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE


def _module_name(path: Path) -> str:
    parts = [PACKAGE, *path.relative_to(ROOT).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_package_module(name: str) -> bool:
    """Whether ``name`` is a module or package of this source tree."""
    rel = Path(*name.split(".")[1:]) if "." in name else Path()
    return (ROOT / rel).with_suffix(".py").is_file() or (ROOT / rel / "__init__.py").is_file()


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """``(line, imported module)`` for every import in ``path``, relative ones resolved.

    ``from pkg import name`` counts as importing ``pkg.name`` when that is a module of the package,
    else ``pkg``.
    """
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if base.split(".")[0] == PACKAGE and _is_package_module(full):
                    yield node.lineno, full
                else:
                    yield node.lineno, base


def _graph() -> list[tuple[str, int, str]]:
    """``(importing module, line, imported module)`` over the whole package."""
    edges = []
    for path in sorted(ROOT.rglob("*.py")):
        module = _module_name(path)
        edges.extend((module, line, target) for line, target in _imports(path))
    return edges


@functools.cache
def _edges():
    """The graph, built once by the worker that runs this file (not at collection by each)."""
    return _graph()


def _layer(module: str) -> str:
    """The first component below the package (``tracking`` for ``recoeval_tracking.tracking.runs``,
    ``scores`` for ``recoeval_tracking.scores``), or ``""`` for the package itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _ours(target: str) -> bool:
    return target == PACKAGE or target.startswith(PACKAGE + ".")


def _top(target: str) -> str:
    return target.split(".")[0]


def _violations(importers: set[str], forbidden) -> list[str]:
    return [
        f"{module} (line {line}) imports {target}"
        for module, line, target in _edges()
        if _layer(module) in importers and forbidden(target)
    ]


def _fail_on(bad: list[str], rule: str) -> None:
    if bad:
        pytest.fail(f"{rule}:\n  " + "\n  ".join(bad), pytrace=False)


def test_the_graph_is_read():
    modules = {m for m, _, _ in _edges()}
    assert {
        "recoeval_tracking.engine.driver",
        "recoeval_tracking.jobdir.io",
        "recoeval_tracking.tracking.runs",
        "recoeval_tracking.app.cli",
    } <= modules
    # a lazy import inside a function is seen, resolved from its relative form
    assert any(
        m == "recoeval_tracking.app.pipeline" and t == "recoeval_tracking.jobdir"
        for m, _, t in _edges()
    )


def test_engine_imports_nothing_else_of_the_package():
    _fail_on(
        _violations({"engine"}, lambda t: _ours(t) and _layer(t) != "engine"),
        "engine/ imports only numpy, numba, threadpoolctl and itself",
    )


def test_jobdir_knows_nothing_of_tracking_reports_or_the_app():
    _fail_on(
        _violations(
            {"jobdir"}, lambda t: _ours(t) and _layer(t) in {"tracking", "reporting", "app"}
        ),
        "jobdir/ imports tracking/, reporting/ or app/",
    )


def test_tracking_and_reporting_do_not_import_the_app():
    _fail_on(
        _violations({"tracking", "reporting"}, lambda t: _ours(t) and _layer(t) == "app"),
        "tracking/ or reporting/ import app/",
    )


def test_core_layers_do_not_import_upper_layers():
    core = {"metrics", "data", "splitting", "models", "scores", "_validation"}
    upper = {"jobdir", "tracking", "reporting", "app"}
    _fail_on(
        _violations(core, lambda t: _ours(t) and _layer(t) in upper),
        "metrics/, data/, splitting/, models/, scores.py or _validation.py import "
        "jobdir/, tracking/, reporting/ or app/",
    )


#: What ``recoeval_tracking.stats`` may import besides the standard library: numpy, scipy, itself
#: and the package's error vocabulary (``_validation``: numpy and scipy.sparse only).
STATS_MAY_IMPORT = {"numpy", "scipy"}
STATS_MAY_IMPORT_OF_OURS = {"stats", "_validation"}


def _stats_may_import(target: str) -> bool:
    if _ours(target):
        return _layer(target) in STATS_MAY_IMPORT_OF_OURS
    return _top(target) in STATS_MAY_IMPORT or _top(target) in sys.stdlib_module_names


def test_stats_imports_only_numpy_scipy_and_the_standard_library():
    _fail_on(
        _violations({"stats"}, lambda t: not _stats_may_import(t)),
        "stats/ imports only numpy, scipy, the standard library, itself and _validation",
    )
    # the rule sees what it should: stats has modules, and pandas or reporting would break it
    assert any(_layer(m) == "stats" for m, _, _ in _edges())
    assert not _stats_may_import("pandas") and not _stats_may_import("matplotlib.pyplot")
    assert not _stats_may_import("recoeval_tracking.reporting.runs")
    assert _stats_may_import("scipy.stats") and _stats_may_import("__future__")


#: What the renderers (``reporting/render/``) may import of ``reporting/``: the model's read-only
#: view (``view.py``), the outputs' registry, one another, and the agreement section's items
#: (``agreement.py``, which imports nothing of the model).
RENDER_MAY_IMPORT = {"view", "outputs", "render", "agreement"}
#: The modules of ``reporting/`` that may import a renderer: the package (its public names), the
#: agreement page (a page of its own, drawn with the report's template).
MAY_IMPORT_RENDER = {"", "render", "agreement_page"}


def _reporting_module(module: str) -> str | None:
    """The module of ``reporting/`` (``compare`` for ``recoeval_tracking.reporting.compare``,
    ``render`` for anything under ``reporting/render/``, ``""`` for the package), else None."""
    parts = module.split(".")
    if parts[:2] != [PACKAGE, "reporting"]:
        return None
    return parts[2] if len(parts) > 2 else ""


def _render_violations(edges: list[tuple[str, int, str]]) -> list[str]:
    """A renderer importing the model other than through its view, or the model importing a
    renderer."""
    bad = []
    for module, line, target in edges:
        importer, imported = _reporting_module(module), _reporting_module(target)
        if importer is None or imported is None:
            continue
        if importer == "render" and imported not in RENDER_MAY_IMPORT:
            bad.append(f"{module} (line {line}) imports {target}: a renderer reads the view")
        elif imported == "render" and importer not in MAY_IMPORT_RENDER:
            bad.append(f"{module} (line {line}) imports {target}: the model imports a renderer")
    return bad


def test_the_renderers_see_the_model_only_through_its_view():
    _fail_on(
        _render_violations(_edges()),
        "reporting/render/ imports of reporting/ only view, outputs and agreement; the model "
        "never imports reporting/render/",
    )
    # the rule sees what it should: the renderers are there, and read the view
    assert any(
        m.startswith(f"{PACKAGE}.reporting.render.") and t == f"{PACKAGE}.reporting.view"
        for m, _, t in _edges()
    )
    # a renderer importing a model module, or the package, is found; so is the model importing a
    # renderer; a lower layer, the view, a renderer beside it are not
    R = f"{PACKAGE}.reporting"
    caught = _render_violations(
        [
            (f"{R}.render.html", 1, f"{R}.compare"),
            (f"{R}.render.latex", 2, f"{R}.report"),
            (f"{R}.render.figures", 3, R),
            (f"{R}.verdicts", 4, f"{R}.render.latex"),
            (f"{R}.render.html", 5, f"{R}.view"),
            (f"{R}.render.html", 6, f"{R}.render.sections"),
            (f"{R}.render.html", 7, f"{PACKAGE}.jobdir.redact"),
            (f"{R}.render.write", 8, f"{R}.outputs"),
        ]
    )
    assert [c.split(" (line ")[1][0] for c in caught] == ["1", "2", "3", "4"]


def _attribute_writes(source: str, name: str) -> list[str]:
    """Where the module ``name`` (its ``source``) sets an attribute (``x.a = ...``,
    ``x.a += ...``, ``del x.a``, ``setattr(...)``)."""
    found = []
    for node in ast.walk(ast.parse(source, filename=name)):
        targets = (
            node.targets
            if isinstance(node, ast.Assign | ast.Delete)
            else [node.target]
            if isinstance(node, ast.AugAssign | ast.AnnAssign)
            else []
        )
        calls = isinstance(node, ast.Call) and getattr(node.func, "id", "") == "setattr"
        if calls or any(isinstance(t, ast.Attribute) for t in targets):
            found.append(f"{name} (line {node.lineno})")
    return found


def test_the_renderers_set_no_attribute():
    """The view is read-only by rule: what a renderer receives stays as the model made it."""
    paths = sorted((ROOT / "reporting" / "render").glob("*.py"))
    assert paths
    writes = [
        w for p in paths for w in _attribute_writes(p.read_text(encoding="utf-8"), _module_name(p))
    ]
    _fail_on(writes, "reporting/render/ sets an attribute")
    # the rule sees a write, an augmented write, a deletion and setattr; an item of a local
    # dict is no attribute
    probe = "r.metrics = []\nc.rope += 1\ndel c.n\nsetattr(c, 'n', 0)\nfigures['a'] = b''\n"
    assert _attribute_writes(probe, "m") == [f"m (line {i})" for i in (1, 2, 3, 4)]


def test_only_tracking_imports_mlflow():
    bad = [
        f"{m} (line {line}) imports {t}"
        for m, line, t in _edges()
        if _top(t) == "mlflow" and _layer(m) != "tracking"
    ]
    _fail_on(bad, "only tracking/ imports mlflow")


def test_only_the_app_imports_hydra_and_omegaconf():
    bad = [
        f"{m} (line {line}) imports {t}"
        for m, line, t in _edges()
        if _top(t) in {"hydra", "omegaconf"} and _layer(m) != "app"
    ]
    _fail_on(bad, "only app/ imports hydra and omegaconf")


def test_options_and_validation_sit_below_the_metrics():
    # EvalOptions is read by metrics/ and app/; it may use the engine's vocabulary and the
    # validation helpers, nothing above them (the profile is applied in metrics/)
    allowed = {"engine", "_validation", "options"}
    _fail_on(
        _violations({"options", "_validation"}, lambda t: _ours(t) and _layer(t) not in allowed),
        "options.py or _validation.py import above the engine",
    )


PLUGIN_ROOT = ROOT.parent / "hydra_plugins"
#: What the package's Hydra plugins (``hydra_plugins.recoeval_optuna_sweeper``) may use of it:
#: the app's checks, the tracking layer's sweep records, the metric registry, the errors.
PLUGIN_MAY_IMPORT = {"app", "tracking", "metrics", "_validation"}


def test_the_hydra_plugins_sit_beside_the_app():
    """The plugins are the other place that imports hydra; like the app they never import
    mlflow (the tracking layer does), and they use the package only through the layers above."""
    paths = sorted(p for p in PLUGIN_ROOT.rglob("*.py") if "__pycache__" not in p.parts)
    assert paths, "hydra_plugins/ holds no plugin"
    assert not (PLUGIN_ROOT / "__init__.py").exists(), (
        "hydra_plugins is a namespace package shared with other plugins: no __init__.py"
    )
    bad = []
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )
            for name in names:
                where = f"{path.relative_to(ROOT.parent)} (line {node.lineno}) imports {name}"
                if _top(name) == "mlflow":
                    bad.append(where)
                elif _ours(name) and _layer(name) not in PLUGIN_MAY_IMPORT:
                    bad.append(where)
    _fail_on(bad, "hydra_plugins/ imports mlflow, or the package below app/tracking/metrics")


def test_distributed_sits_on_the_metrics_and_alone_imports_dask():
    _fail_on(
        _violations(
            {"distributed"},
            lambda t: _ours(t) and _layer(t) in {"jobdir", "tracking", "reporting", "app"},
        ),
        "distributed/ imports jobdir/, tracking/, reporting/ or app/",
    )
    bad = [
        f"{m} (line {line}) imports {t}"
        for m, line, t in _edges()
        if _top(t) in {"dask", "distributed"} and _layer(m) != "distributed"
    ]
    _fail_on(bad, "only distributed/ imports dask")
    # no edge up from the core: evaluate(client=...) finds distributed/'s runner in the
    # registry of metrics/remote.py, which distributed/ fills when imported
    up = [
        f"{m} (line {line}) imports {t}"
        for m, line, t in _edges()
        if _layer(m)
        in {"metrics", "data", "splitting", "models", "scores", "_validation", "engine", "options"}
        and _ours(t)
        and _layer(t) == "distributed"
    ]
    _fail_on(up, "the core (metrics/ and below) imports distributed/")
