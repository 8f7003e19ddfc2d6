"""Results on disk: the job directory every upload is made from.

Offline first: an evaluation writes everything to a job directory (a Hydra job's output folder,
or any folder) *before* anything is sent to a tracking store, so no result is lost when the store
cannot be reached. The tracking layer (:mod:`recoeval_tracking.tracking.runs`) uploads only
what is in this directory, and reports read it back; this module knows nothing of either.

Layout of a job directory
-------------------------
``per_user.parquet``
    The per-user table of :class:`~recoeval_tracking.metrics.results.Results` (``user_id`` with
    the original ids, ``n_train``, ``n_test``, ``nan_reason``, every metric column).
``metrics.json``
    Flat ``{key: value}`` (``null`` for NaN): the means at K (``ndcg_at_10``, ``roc_auc``), their
    95% Student-t bounds (``ndcg_at_10_ci95_low``/``_ci95_high``), the catalogue-level metrics
    (``coverage_at_10``, ``gini_at_10``, ``gauc``: one number each, no bounds), ``users_evaluated``,
    ``users_nan_<reason>``, timings as ``<stage>_seconds``, and any extra metrics.
``curves.csv``
    Column ``k`` (1..K), one column per curve of means (``ndcg_at_k``) and its bounds
    (``ndcg_at_k_ci95_low``, ``ndcg_at_k_ci95_high``). Only when curves were computed.
``definitions.json``
    ``{"fingerprint", "k", "topk_only", "metric_columns", "curves", "definitions"}``.
``dataset.json``
    The dataset description given by the caller (statistics, ``data_fingerprint``,
    ``split_fingerprint``, ...), secrets scrubbed. Only when given.
``config.yaml``, ``overrides.yaml``
    The resolved config and the Hydra overrides, secrets redacted. Only when given.
``plots/curves.png``, ``plots/per_user_<metric>.png``
    See :mod:`recoeval_tracking.jobdir.plots`.
``job.json``
    ``{"job_uid", "created_at", "package_version", "git_commit", "git_dirty"}``: the uid is a new
    uuid4 at every :func:`write_job_dir` call; the tracking layer tags the run with it, which is
    how a later sync uploads each job exactly once.
``PENDING`` / ``SYNCED``
    Markers written by the tracking layer (upload pending, or done with the run id).

The 95% interval of a mean over ``n`` users with sample standard deviation ``s`` is
``mean ± t_{0.975, n-1} · s / sqrt(n)`` (Student 1908), as computed by
:func:`recoeval_tracking.metrics.results.mean_ci95`.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import numbers
import subprocess
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import param_error
from ..metrics.results import Results
from .plots import write_job_plots
from .redact import sanitize_key, scrub_mapping, scrub_overrides, scrub_url

__all__ = ["JobDir", "write_job_dir", "read_job_dir", "job_metrics", "curves_table",
           "FILES", "PENDING", "SYNCED"]

FORMAT_VERSION = 1

#: Names of the files of a job directory (see the module docstring).
FILES = {
    "per_user": "per_user.parquet",
    "metrics": "metrics.json",
    "curves": "curves.csv",
    "definitions": "definitions.json",
    "dataset": "dataset.json",
    "config": "config.yaml",
    "overrides": "overrides.yaml",
    "plots": "plots",
    "job": "job.json",
}
#: Marker of a job directory whose upload failed (JSON: the upload arguments, URI, error).
PENDING = "PENDING"
#: Marker of a job directory uploaded (JSON: run id, URI, time).
SYNCED = "SYNCED"


@dataclass
class JobDir:
    """A job directory read back by :func:`read_job_dir`.

    Attributes
    ----------
    path : Path
    metrics : dict of str to float
        Everything in ``metrics.json`` (NaN for ``null``).
    metric_columns : list of str
        The per-user metric columns (their means are ``metrics[c]``).
    curves : pandas.DataFrame
        ``curves.csv`` (empty frame when the job has no curves).
    k : int
    topk_only : bool
    fingerprint : str
        Fingerprint of the metric definitions.
    definitions : dict
    job : dict
        ``job.json`` (``job_uid``, ``created_at``, ``package_version``, ``git_commit``...).
    per_user : pandas.DataFrame or None
        ``per_user.parquet`` (None when read with ``per_user=False``).
    dataset, config : dict or None
    config_yaml : str or None
        The text of ``config.yaml``.
    overrides : list of str or None
    """

    path: Path
    metrics: dict[str, float]
    metric_columns: list[str]
    curves: pd.DataFrame
    k: int
    topk_only: bool
    fingerprint: str
    definitions: dict[str, Any]
    job: dict[str, Any]
    per_user: pd.DataFrame | None = None
    dataset: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    config_yaml: str | None = None
    overrides: list[str] | None = None
    plots: list[Path] = field(default_factory=list)

    @property
    def job_uid(self) -> str:
        """The uid written at creation (empty string for directories written by hand)."""
        return str(self.job.get("job_uid", ""))

    @property
    def means(self) -> dict[str, float]:
        """Means at K of each metric column."""
        return {c: self.metrics.get(c, math.nan) for c in self.metric_columns}

    @property
    def curve_names(self) -> list[str]:
        """Curves of means (``ndcg_at_k``...), without their CI columns."""
        return [c for c in self.curves.columns if c != "k" and not c.endswith("_ci95_low")
                and not c.endswith("_ci95_high")]


def _num(value: Any) -> float | None:
    """JSON value for a float: None for NaN or infinity."""
    v = float(value)
    return v if math.isfinite(v) else None


def job_metrics(results: Results, extra_metrics: Mapping[str, Any] | None = None
                ) -> dict[str, float]:
    """The flat metric dict of ``metrics.json`` for ``results`` (see the module docstring).

    Parameters
    ----------
    results : Results
    extra_metrics : mapping of str to number, optional
        Added as they are (keys sanitised: ``@`` -> ``_at_``); they win over computed keys.

    Returns
    -------
    dict of str to float
    """
    out: dict[str, float] = {}
    ci = results.mean_ci()
    for metric, row in ci.iterrows():
        key = sanitize_key(str(metric))
        out[key] = float(row["mean"])
        out[f"{key}_ci95_low"] = float(row["ci95_low"])
        out[f"{key}_ci95_high"] = float(row["ci95_high"])
    for key, value in (results.aggregates or {}).items():
        out[sanitize_key(str(key))] = float(value)
    out["users_evaluated"] = float(results.n_users_evaluated)
    for reason, count in results.nan_counts.items():
        out[sanitize_key(f"users_nan_{reason}")] = float(count)
    for stage, seconds in (results.timings or {}).items():
        stage = sanitize_key(str(stage))
        key = stage if stage.endswith("_seconds") else f"{stage}_seconds"
        out[key] = float(seconds)
    for key, value in (extra_metrics or {}).items():
        out[sanitize_key(str(key))] = float(value)
    return out


def curves_table(results: Results) -> pd.DataFrame:
    """Wide table of curve means and 95% bounds: ``k``, ``<curve>``, ``<curve>_ci95_low/high``.

    Empty (no rows, column ``k`` only) when ``results`` has no curves.
    """
    if not results.curves_per_user:
        return pd.DataFrame({"k": np.array([], dtype=np.int64)})
    long = results.curves_ci()
    data: dict[str, Any] = {"k": np.arange(1, results.k + 1, dtype=np.int64)}
    for name in results.curves_per_user:
        part = long[long["curve"] == name].sort_values("k")
        key = sanitize_key(name)
        data[key] = part["mean"].to_numpy(dtype=np.float64)
        data[f"{key}_ci95_low"] = part["ci95_low"].to_numpy(dtype=np.float64)
        data[f"{key}_ci95_high"] = part["ci95_high"].to_numpy(dtype=np.float64)
    return pd.DataFrame(data)


def _git_commit(cwd: Path) -> tuple[str | None, bool | None]:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True,
                              text=True, timeout=5)
        if head.returncode != 0:
            return None, None
        status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                cwd=cwd, capture_output=True, text=True, timeout=5)
        dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
        return head.stdout.strip() or None, dirty
    except (OSError, subprocess.SubprocessError):
        return None, None


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("recoeval_tracking")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        from .. import __version__

        return __version__


def _write_json(path: Path, obj: Any) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=False, default=str, allow_nan=False)
                    + "\n", encoding="utf-8")


def _json_safe(obj: Any) -> Any:
    """Replace non-finite floats by None and numpy scalars by Python ones, recursively."""
    if isinstance(obj, Mapping):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_json_safe(v) for v in obj]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def write_job_dir(results: Results, path: str | Path, *, config_yaml: str | Mapping | None = None,
                  overrides: list[str] | None = None, dataset: Mapping[str, Any] | None = None,
                  extra_metrics: Mapping[str, Any] | None = None, plots: bool = True) -> Path:
    """Write ``results`` and their context to the job directory ``path`` (created if needed).

    Parameters
    ----------
    results : Results
        What the evaluator returned.
    path : str or Path
        The job directory (a Hydra job's output directory, or any folder).
    config_yaml : str or mapping, optional
        The resolved config as YAML text (or as a plain nested dict). Values of secret keys are
        replaced by ``<redacted>`` (rule: :mod:`recoeval_tracking.jobdir.redact`).
    overrides : list of str, optional
        The Hydra overrides of the job (``model.factors=64``), secrets redacted likewise.
    dataset : mapping, optional
        Statistics and fingerprints of the data (``name``, ``n_users``, ``n_items``, ``nnz``,
        ``density``, ``data_fingerprint``, ``split_fingerprint``, ``source``...).
    extra_metrics : mapping of str to number, optional
        More metrics for ``metrics.json`` (e.g. ``fit_seconds`` measured by the caller).
    plots : bool
        Write ``plots/`` (default True).

    Returns
    -------
    Path
        The job directory.

    Notes
    -----
    Every call writes a fresh ``job.json`` with a new ``job_uid`` and removes stale ``PENDING`` /
    ``SYNCED`` markers: rewritten results are a new job for the tracking store.
    """
    _check_write_args(results, path, config_yaml, overrides, dataset, extra_metrics)
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    for marker in (PENDING, SYNCED):
        (out / marker).unlink(missing_ok=True)
    curves, metric_columns = _write_results(results, out, extra_metrics)
    _write_context(out, config_yaml, overrides, dataset)
    if plots:
        per_user = results.per_user.rename(columns=dict(zip(results.metric_columns,
                                                            metric_columns)))
        write_job_plots(per_user, metric_columns, curves if len(curves) else None,
                        out / FILES["plots"])
    _write_job_json(out)
    return out


def _check_write_args(results: Any, path: Any, config_yaml: Any, overrides: Any, dataset: Any,
                      extra_metrics: Any) -> None:
    func = "write_job_dir"
    if not isinstance(results, Results):
        raise param_error("results", func, "a recoeval_tracking Results object", results)
    if not isinstance(path, (str, Path)):
        raise param_error("path", func, "a str or pathlib.Path", path)
    if config_yaml is not None and not isinstance(config_yaml, (str, Mapping)):
        raise param_error("config_yaml", func, "YAML text, a plain dict or None", config_yaml)
    if overrides is not None and (isinstance(overrides, str) or not all(
            isinstance(o, str) for o in overrides)):
        raise param_error("overrides", func, "a list of str (Hydra overrides) or None", overrides)
    if dataset is not None and not isinstance(dataset, Mapping):
        raise param_error("dataset", func, "a dict of statistics and fingerprints or None", dataset)
    if extra_metrics is not None:
        if not isinstance(extra_metrics, Mapping):
            raise param_error("extra_metrics", func, "a dict of str to numbers or None",
                              extra_metrics)
        for key, value in extra_metrics.items():
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise param_error("extra_metrics", func, "a dict of str to numbers",
                                  f"{key!r}: {value!r}", got_is_text=True)


def _write_results(results: Results, out: Path, extra_metrics: Mapping[str, Any] | None
                   ) -> tuple[pd.DataFrame, list[str]]:
    """``per_user.parquet``, ``metrics.json``, ``curves.csv`` and ``definitions.json``; returns
    the curves table and the sanitised metric columns."""
    results.per_user.to_parquet(out / FILES["per_user"], index=False)

    metrics = job_metrics(results, extra_metrics)
    _write_json(out / FILES["metrics"], {k: _num(v) for k, v in metrics.items()})

    curves = curves_table(results)
    curves_path = out / FILES["curves"]
    if len(curves):
        curves.to_csv(curves_path, index=False, float_format="%.17g")
    else:
        curves_path.unlink(missing_ok=True)

    metric_columns = [sanitize_key(c) for c in results.metric_columns]
    _write_json(out / FILES["definitions"], _json_safe({
        "fingerprint": results.fingerprint,
        "k": int(results.k),
        "topk_only": bool(results.topk_only),
        "metric_columns": metric_columns,
        "curves": [sanitize_key(c) for c in results.curves_per_user],
        "definitions": results.definitions,
    }))
    return curves, metric_columns


def _write_context(out: Path, config_yaml: str | Mapping | None, overrides: list[str] | None,
                   dataset: Mapping[str, Any] | None) -> None:
    """``dataset.json``, ``config.yaml`` and ``overrides.yaml`` (those given), redacted."""
    if dataset is not None:
        _write_json(out / FILES["dataset"], _json_safe(scrub_mapping(dict(dataset))))

    if config_yaml is not None:
        (out / FILES["config"]).write_text(_scrubbed_yaml(config_yaml), encoding="utf-8")
    if overrides is not None:
        import yaml

        (out / FILES["overrides"]).write_text(
            yaml.safe_dump(scrub_overrides(list(overrides)), sort_keys=False), encoding="utf-8")


def _write_job_json(out: Path) -> None:
    commit, dirty = _git_commit(Path.cwd())
    _write_json(out / FILES["job"], {
        "format_version": FORMAT_VERSION,
        "job_uid": uuid.uuid4().hex,
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "package_version": _package_version(),
        "git_commit": commit,
        "git_dirty": dirty,
    })


def _scrubbed_yaml(config: str | Mapping) -> str:
    import yaml

    if isinstance(config, Mapping):
        data: Any = dict(config)
    else:
        try:
            data = yaml.safe_load(config)
        except yaml.YAMLError:
            # Not parseable: keep the text, with URL passwords removed.
            return scrub_url(config)
    if not isinstance(data, (Mapping, list)):
        return scrub_url(config) if isinstance(config, str) else yaml.safe_dump(data)
    return yaml.safe_dump(scrub_mapping(data), sort_keys=False, allow_unicode=True)


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def read_job_dir(path: str | Path, *, per_user: bool = True) -> JobDir:
    """Read a job directory written by :func:`write_job_dir`.

    Parameters
    ----------
    path : str or Path
    per_user : bool
        Also read ``per_user.parquet`` (default True; the tracking layer skips it, it uploads
        the file as it is).

    Returns
    -------
    JobDir
    """
    func = "read_job_dir"
    if not isinstance(path, (str, Path)):
        raise param_error("path", func, "a str or pathlib.Path", path)
    root = Path(path)
    missing = [FILES[n] for n in ("metrics", "definitions") if not (root / FILES[n]).is_file()]
    if missing:
        raise param_error("path", func, "a job directory written by write_job_dir (with "
                          f"{', '.join(missing)})", str(root), "Write it with "
                          "recoeval_tracking.jobdir.write_job_dir(results, path).")
    metrics = {k: (math.nan if v is None else float(v))
               for k, v in _read_json(root / FILES["metrics"]).items()}
    definitions_file = _read_json(root / FILES["definitions"])
    curves_path = root / FILES["curves"]
    curves = (pd.read_csv(curves_path) if curves_path.is_file()
              else pd.DataFrame({"k": np.array([], dtype=np.int64)}))
    job_path = root / FILES["job"]
    job = _read_json(job_path) if job_path.is_file() else {}
    dataset_path = root / FILES["dataset"]
    config_path = root / FILES["config"]
    overrides_path = root / FILES["overrides"]
    config_yaml = config_path.read_text(encoding="utf-8") if config_path.is_file() else None
    config = None
    overrides = None
    if config_yaml is not None or overrides_path.is_file():
        import yaml

        if config_yaml is not None:
            loaded = yaml.safe_load(config_yaml)
            config = loaded if isinstance(loaded, dict) else None
        if overrides_path.is_file():
            overrides = [str(o) for o in
                         (yaml.safe_load(overrides_path.read_text(encoding="utf-8")) or [])]
    plots_dir = root / FILES["plots"]
    return JobDir(
        path=root,
        metrics=metrics,
        metric_columns=list(definitions_file.get("metric_columns", [])),
        curves=curves,
        k=int(definitions_file.get("k", 0)),
        topk_only=bool(definitions_file.get("topk_only", False)),
        fingerprint=str(definitions_file.get("fingerprint", "")),
        definitions=definitions_file.get("definitions", {}) or {},
        job=job,
        per_user=pd.read_parquet(root / FILES["per_user"]) if per_user else None,
        dataset=_read_json(dataset_path) if dataset_path.is_file() else None,
        config=config,
        config_yaml=config_yaml,
        overrides=overrides,
        plots=sorted(plots_dir.glob("*.png")) if plots_dir.is_dir() else [],
    )
