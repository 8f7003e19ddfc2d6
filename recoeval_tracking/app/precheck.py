"""Config checks that run before any data is loaded, worded in config keys.

A bad metric name, ``metrics.k`` below 1, ``metrics.backend=cuda`` on a machine without a GPU
or a malformed ``tracking.uri`` fail in a second with the key to change, instead of after load,
split and fit (or, for the URI, never: a job that "succeeds" with a PENDING marker no sync can
upload). ``metrics.k`` above the number of items is
checked as soon as the data is loaded (:func:`check_k_against_items`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._validation import InputError

__all__ = [
    "check_before_load",
    "check_engine_backend",
    "check_k_against_items",
    "check_tracking_uri",
    "check_experiment",
    "URI_SCHEMES",
    "kernel_cache_is_cold",
    "COMPILE_NOTICE",
    "check_objective",
    "check_launcher_store",
    "REMOTE_LAUNCHERS",
]

#: Hydra launchers that run jobs on other machines (class names): they cannot share a local
#: SQLite or file store.
REMOTE_LAUNCHERS = ("SlurmLauncher", "RayAWSLauncher", "RayLauncher", "RQLauncher")

#: Said once before the first evaluation when numba's on-disk cache holds no compiled kernels.
COMPILE_NOTICE = (
    "compiling the metric kernels once (about 7 s on 2 cores; the app begins it in a "
    "second process while the job loads and fits); cached afterwards"
)

#: Tracking URI schemes MLflow stores accept (``file:`` needs MLFLOW_ALLOW_FILE_STORE).
URI_SCHEMES = (
    "sqlite",
    "http",
    "https",
    "postgresql",
    "mysql",
    "mssql",
    "file",
    "databricks",
    "databricks-uc",
    "uc",
)
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9.\-]*)(\+[A-Za-z0-9_]+)?://")


def _error(key: str, expected: str, got: Any, fix: str | None = None) -> InputError:
    """``<key> must be <expected>; got <value>.`` (the command line adds how to change it)."""
    return InputError(f"{key} must be {expected}; got {got!r}." + (f" {fix}" if fix else ""))


def check_tracking_uri(uri: Any) -> None:
    """``tracking.uri`` is null or a URI MLflow can store runs in (``sqlite:///mlflow.db``,
    ``http://host:5000``...): a bare path or a misspelt scheme is refused."""
    if uri is None or uri == "" or uri in ("databricks", "databricks-uc", "uc"):
        return  # MLflow's own bare names of hosted stores
    if not isinstance(uri, str):
        raise _error("tracking.uri", "an MLflow tracking URI (str) or null", uri)
    m = _SCHEME.match(uri)
    if m is None:
        hint = ""
        if uri.endswith(".db") or Path(uri).suffix in (".db", ".sqlite"):
            absolute = Path(uri).expanduser().resolve()
            hint = f" For a SQLite file write tracking.uri=sqlite:///{absolute}."
        raise _error(
            "tracking.uri",
            "a URI with a scheme (sqlite:///path/mlflow.db, http://host:5000, postgresql://...)",
            uri,
            "A bare path is not a tracking store." + hint,
        )
    scheme = m.group(1).lower()
    if scheme not in URI_SCHEMES:
        raise _error(
            "tracking.uri",
            f"a URI whose scheme is one of {', '.join(URI_SCHEMES)}",
            uri,
            "Check the spelling of the scheme (sqlite:///mlflow.db).",
        )


def _check_k(k: Any) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise _error("metrics.k", "an int >= 1 (the cutoff K)", k)


def _check_names(names: Any) -> None:
    from ..metrics.registry import METRICS

    if names is None:
        return
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, (list, tuple)):
        raise _error("metrics.names", "a list of metric names, 'all' or 'standard'", names)
    if [str(n).lower() for n in names] in (["all"], ["standard"]):
        return
    unknown = [n for n in names if n not in METRICS]
    if unknown:
        raise _error(
            "metrics.names",
            f"names of registered metrics ({', '.join(METRICS)}) or [all]",
            unknown[0] if len(unknown) == 1 else unknown,
            "For example metrics.names=[ndcg,p,r].",
        )


def check_objective(objective: Any, k: Any = None) -> None:
    """``objective`` (what a search optimises) is null or a key a job reports: a registered
    metric at K (``ndcg_at_10``, with K = ``metrics.k`` when given), a metric without a cutoff
    (``roc_auc``) or a stage time (``fit_seconds``)."""
    from ..metrics.registry import spec_for_key

    if objective is None:
        return
    example = f"objective=ndcg_at_{k if isinstance(k, int) and k > 0 else 10}"
    if not isinstance(objective, str) or not objective:
        raise _error(
            "objective",
            "the key of a metric the job reports (str) or null",
            objective,
            f"For example {example}.",
        )
    if objective.endswith("_seconds"):
        return
    if spec_for_key(objective) is None or objective.endswith("_at_k"):
        raise _error(
            "objective",
            "the key of a metric the job reports: a registered metric "
            "at K (ndcg_at_10, r_at_10, mpr...) or a stage time (fit_seconds)",
            objective,
            f"For example {example}.",
        )
    head, sep, tail = objective.rpartition("_at_")
    if sep and isinstance(k, int) and not isinstance(k, bool) and int(tail) != k:
        raise _error(
            "objective",
            f"a metric at the configured cutoff metrics.k={k} ({head}_at_{k})",
            objective,
            f"Set metrics.k={int(tail)} or objective={head}_at_{k}.",
        )


def check_launcher_store(launcher_target: Any, uri: str) -> None:
    """A launcher that runs jobs on other machines (:data:`REMOTE_LAUNCHERS`: SLURM through
    ``hydra/launcher=submitit_slurm``...) needs a tracking server: a local SQLite or file store
    is refused (the jobs could not reach it, or would corrupt it over a network file system)."""
    name = str(launcher_target or "").rsplit(".", 1)[-1]
    if name not in REMOTE_LAUNCHERS:
        return
    m = _SCHEME.match(uri or "")
    scheme = m.group(1).lower() if m else "file"
    if scheme not in ("sqlite", "file"):
        return
    raise InputError(
        f"tracking.uri: the launcher {name} runs the jobs on other machines, which cannot "
        f"share the local tracking store {uri}. Log a cluster sweep to a tracking server: "
        "tracking=server with MLFLOW_TRACKING_URI=http://<host>:5000 (or tracking.uri=...), "
        "or keep results in the job folders with tracking=none."
    )


def check_engine_backend(name: Any) -> None:
    """``metrics.backend`` names an engine backend that can run on this machine: ``cuda``
    without a GPU, its driver, numba-cuda or CuPy fails here, before the data is loaded and the
    model fitted, naming what is missing and ``pip install "recoeval_tracking[cuda]"``."""
    from ..engine.backends import BACKENDS, unavailable

    if name is None:
        return
    if not isinstance(name, str) or name not in BACKENDS:
        raise _error("metrics.backend", f"one of {', '.join(BACKENDS)}", name)
    missing = unavailable(name)
    if missing is not None:
        raise _error(
            "metrics.backend",
            "an engine backend that can run on this machine",
            name,
            f"{missing} Or run on the CPU: metrics.backend=cpu.",
        )


def check_before_load(cfg: Mapping[str, Any]) -> None:
    """Every check that needs no data: ``metrics.k``, ``metrics.names``, ``metrics.backend``,
    ``tracking.uri``, ``objective``, then the metric options as
    :meth:`~recoeval_tracking.options.EvalOptions.checked` checks them at evaluation (a bad
    ``metrics.negatives`` fails before the data is loaded and the model fitted)."""
    from ..options import EvalOptions

    metrics = cfg.get("metrics") or {}
    if isinstance(metrics, Mapping):
        if "k" in metrics:
            _check_k(metrics["k"])
        _check_names(metrics.get("names"))
        check_engine_backend(metrics.get("backend"))
        check_objective(cfg.get("objective"), metrics.get("k"))
        EvalOptions.from_config(dict(metrics)).checked()
    tracking = cfg.get("tracking") or {}
    if isinstance(tracking, Mapping) and tracking.get("enabled", False):
        check_tracking_uri(tracking.get("uri"))
        check_experiment(tracking.get("experiment"))


def check_experiment(name: Any) -> None:
    """``tracking.experiment`` is null (the default experiment) or a name that is not blank: an
    empty name was replaced by the default experiment without a word."""
    if name is None:
        return
    if not isinstance(name, str) or not name.strip():
        raise _error(
            "tracking.experiment",
            "an MLflow experiment name (a text that is not blank) or null for the default",
            name,
            "Name the experiment (tracking.experiment=my_study), or leave it out.",
        )


def check_k_against_items(k: int, n_items: int, dataset_key: str = "dataset") -> None:
    """``metrics.k`` at most the number of items of the loaded data."""
    if k > n_items:
        raise InputError(
            f"metrics.k must be at most the number of items of the data "
            f"({n_items} after {dataset_key} preparation); got {k}. Lower it "
            f"(metrics.k={min(10, n_items)}) or load more items."
        )


def kernel_cache_is_cold() -> bool:
    """True when numba's on-disk cache holds no index of the engine's kernels (a first run, a
    fresh install or a cleared ``NUMBA_CACHE_DIR``): the first evaluation compiles them. Only
    looks for the index files; never imports or compiles anything
    (:func:`recoeval_tracking._numba_cache.engine_cache_is_cold`)."""
    from .._numba_cache import engine_cache_is_cold

    return engine_cache_is_cold()
