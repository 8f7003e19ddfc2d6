"""Results on disk: the job directory every upload is made from.

Offline first: an evaluation writes everything to a job directory (a Hydra job's output folder,
or any folder) *before* anything is sent to a tracking store, so no result is lost when the store
cannot be reached. The tracking layer (:mod:`recoeval_tracking.tracking.runs`) uploads only
what is in this directory, and reports read it back; this module knows nothing of either.

Layout of a job directory
-------------------------
``per_user.parquet``
    The per-user table of :class:`~recoeval_tracking.metrics.results.Results` (``user_id`` with
    the original ids, ``n_train``, ``n_test``, ``nan_reason``, every metric column). After a
    distributed evaluation whose workers wrote it (``per_user_dataset``), a folder of Parquet
    parts ``part-000000.parquet``... in row order: one dataset that ``pandas.read_parquet`` reads.
``per_user_validation.parquet``
    A job of a split with a validation part that was also tested (see
    :func:`write_job_dir`'s ``validation``): the per-user table of its evaluation on the
    validation part, every metric column named with the prefix :data:`VALIDATION_PREFIX`
    (``val_ndcg_at_10``). A job evaluated on validation only (the selection phase of a fair
    study, ``part="validation"``) has no such file: its own ``per_user.parquet``,
    ``metrics.json``, ``curves.csv`` and ``definitions.json`` name every metric with the prefix.
``metrics.json``
    Flat ``{key: value}`` (``null`` for NaN): the means at K (``ndcg_at_10``, ``roc_auc``), their
    95% Student-t bounds (``ndcg_at_10_ci95_low``/``_ci95_high``), the catalogue-level metrics
    (``coverage_at_10``, ``gini_at_10``, ``gauc``: one number each, no bounds), ``users_evaluated``,
    ``users_nan_<reason>``, timings as ``<stage>_seconds``, and any extra metrics. A job tested
    after a validation evaluation has the validation part's means and bounds beside them
    (``val_ndcg_at_10``, ``val_ndcg_at_10_ci95_low``...).
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
    See :mod:`recoeval_tracking.jobdir.plots`; the curves of the headline metrics and one
    histogram (the first headline metric) unless ``plots="all"`` (every curve, every metric).
``job.json``
    ``{"job_uid", "created_at", "package_version", "git_commit", "git_dirty", "files"}``
    (``files``: the size of every other file, checked before an upload), with ``label``
    (the run's display name, the config's top-level ``label``) and ``model`` (``name``,
    ``description`` such as ``CosineItemKNN(neighbours=50, shrink=10)``, ``args``: the
    constructor's arguments) when known: the uid is a new
    uuid4 at every :func:`write_job_dir` call; the tracking layer tags the run with it, which is
    how a later sync uploads each job exactly once. Written last: a directory is complete when
    it has ``job.json`` and no ``INCOMPLETE`` marker of another uid.
``INCOMPLETE`` / ``UPLOADING`` / ``PENDING`` / ``SYNCED``
    Markers (see :mod:`recoeval_tracking.jobdir.markers`): being written (or cut off while
    written), being uploaded (or cut off while uploaded), upload failed, uploaded.

Every file is written atomically (a temporary name, ``fsync``, a rename) under the job
directory's lock. When a write fails (a full disk), :class:`JobDirWriteError` says which file,
what was kept, and that the folder stays marked ``INCOMPLETE``.

The 95% interval of a mean over ``n`` users with sample standard deviation ``s`` is
``mean ± t_{0.975, n-1} · s / sqrt(n)`` (Student 1908), as computed by
:func:`recoeval_tracking.metrics.results.mean_ci95`.
"""

from __future__ import annotations

import datetime as _dt
import errno
import math
import numbers
import os
import shutil
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import param_error
from ..metrics.results import Results, headline_metrics
from .job_json import _job_meta, _json_safe, _write_job_json
from .markers import (
    FILES,
    INCOMPLETE,
    JOB_LOCK,
    PENDING,
    SYNCED,
    UPLOADING,
    atomic_write,
    file_lock,
    fsync_dir,
    remove_stale_temporaries,
    write_json_atomic,
    write_text_atomic,
)
from .plots import write_job_plots
from .read import JobDir, read_job_dir
from .redact import sanitize_key, scrub_mapping, scrub_overrides, scrub_text

__all__ = [
    "VALIDATION_PREFIX",
    "PARTS",
    "validation_metrics",
    "JobDir",
    "JobDirWriteError",
    "write_job_dir",
    "begin_job_dir",
    "read_job_dir",
    "job_metrics",
    "curves_table",
    "FILES",
    "PENDING",
    "SYNCED",
    "UPLOADING",
    "INCOMPLETE",
]

#: The prefix of every metric evaluated on a split's validation part (``val_ndcg_at_10``), in
#: ``metrics.json``, the per-user tables, ``curves.csv`` and MLflow.
VALIDATION_PREFIX = "val_"
#: What a job directory's results were evaluated on (``definitions.json``'s ``evaluated_on``).
PARTS = ("test", "validation")


class JobDirWriteError(OSError):
    """A job directory could not be written (a full disk, no permission): the message names
    the folder, the file, what was kept, and what to do.

    Attributes
    ----------
    path : Path
        The job directory.
    file : str
        The file being written.
    kept : list of str
        The files written completely before the failure.
    """

    def __init__(self, path: Path, file: str, cause: OSError, kept: list[str]):
        self.path, self.file, self.kept = path, file, list(kept)
        reason = cause.strerror or str(cause) or type(cause).__name__
        code = errno.errorcode.get(cause.errno or 0)
        kept_text = ", ".join(kept) if kept else "no new file"
        hint = (
            "Free some space"
            if cause.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
            else "Fix the cause"
        )
        message = (
            f"could not write the job directory {path}: {reason}"
            f"{f' ({code})' if code else ''} while writing {file}. Kept: {kept_text}. "
            f"The folder stays marked {INCOMPLETE}, so it is neither read as a result nor "
            f"uploaded. {hint} and run the job again."
        )
        super().__init__(cause.errno, message)
        self.strerror = message

    def __str__(self) -> str:
        return self.strerror


def _num(value: Any) -> float | None:
    """JSON value for a float: None for NaN or infinity."""
    v = float(value)
    return v if math.isfinite(v) else None


def job_metrics(
    results: Results, extra_metrics: Mapping[str, Any] | None = None
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


def _write_json(path: Path, obj: Any) -> None:
    write_json_atomic(path, obj)


def write_job_dir(
    results: Results,
    path: str | Path,
    *,
    config_yaml: str | Mapping | None = None,
    overrides: list[str] | None = None,
    dataset: Mapping[str, Any] | None = None,
    extra_metrics: Mapping[str, Any] | None = None,
    plots: bool | str = True,
    model: Mapping[str, Any] | None = None,
    part: str = "test",
    validation: Results | None = None,
    timings: dict[str, float] | None = None,
) -> Path:
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
    plots : bool or "all"
        Write ``plots/``: True (default) writes ``curves.png``, the @1..K curves of the headline
        metrics (:func:`recoeval_tracking.metrics.results.headline_metrics`: NDCG, P, R, AP,
        hit rate, RR, in one panel), and the per-user histogram of the first of them
        (``per_user_ndcg_at_10.png``); ``"all"`` the curves of every metric (one panel per six
        curves of one scale) and a histogram of every metric (one PNG each, about 0.08 s
        apiece); False nothing. ``curves.csv`` holds every curve either way.
    model : mapping, optional
        What the model was: ``name``, ``description`` (its repr), ``args`` (its constructor's
        arguments), recorded in ``job.json`` (secrets redacted).
    part : {"test", "validation"}
        What ``results`` were evaluated on. ``"validation"`` (the selection phase of a fair
        study) names every metric with :data:`VALIDATION_PREFIX` in every file, so that no
        validation number is ever read as a test one.
    validation : Results, optional
        The same job's evaluation on the validation part, beside ``results`` on test: its means
        and bounds join ``metrics.json`` under the prefix, and its per-user table is written to
        ``per_user_validation.parquet``.
    timings : dict, optional
        Filled with the seconds spent: ``plots`` (drawing and saving them) and ``total`` (the
        whole call).

    Returns
    -------
    Path
        The job directory.

    Raises
    ------
    JobDirWriteError
        A file could not be written (a full disk): the folder is left marked ``INCOMPLETE``.

    Notes
    -----
    Every call writes a fresh ``job.json`` with a new ``job_uid`` and removes stale
    ``PENDING`` / ``UPLOADING`` / ``SYNCED`` markers: rewritten results are a new job for the
    tracking store. The folder is locked meanwhile (an upload of the old job waits).
    """
    _check_write_args(results, path, config_yaml, overrides, dataset, extra_metrics)
    if model is not None and not isinstance(model, Mapping):
        raise param_error(
            "model", "write_job_dir", "a dict (name, description, args) or None", model
        )
    meta = _job_meta(config_yaml, model)
    if part not in PARTS:
        raise param_error("part", "write_job_dir", f"one of {list(PARTS)}", part)
    if validation is not None and (part != "test" or not isinstance(validation, Results)):
        raise param_error(
            "validation",
            "write_job_dir",
            "a Results evaluated on the validation part, beside results on test (part='test')",
            validation,
        )
    if validation is not None:
        extra_metrics = {**validation_metrics(validation), **dict(extra_metrics or {})}
    if not isinstance(plots, bool) and plots != "all":
        raise param_error("plots", "write_job_dir", "True, False or 'all'", plots)
    out = Path(path)
    t_start = time.perf_counter()
    seconds = timings if timings is not None else {}
    seconds["plots"] = 0.0
    writer = _Writer(out)
    writer.step("the folder", lambda: out.mkdir(parents=True, exist_ok=True), keep=False)
    uid = uuid.uuid4().hex
    with file_lock(out / JOB_LOCK, what=f"the job directory {out}"):
        writer.step(INCOMPLETE, lambda: _begin(out, uid), keep=False)
        prefix = VALIDATION_PREFIX if part == "validation" else ""
        curves, metric_columns = _write_results(results, writer, extra_metrics, prefix)
        if validation is not None:
            writer.step(
                FILES["per_user_validation"],
                lambda: _write_table(
                    _prefixed_table(validation, VALIDATION_PREFIX),
                    out / FILES["per_user_validation"],
                ),
            )
        else:
            (out / FILES["per_user_validation"]).unlink(missing_ok=True)
        _write_context(writer, config_yaml, overrides, dataset)
        if plots:
            t_plots = time.perf_counter()
            writer.step(
                FILES["plots"],
                lambda: _write_plots(results, metric_columns, curves, plots, out / FILES["plots"]),
            )
            seconds["plots"] = time.perf_counter() - t_plots
        writer.step(FILES["job"], lambda: _write_job_json(out, uid, meta))
        writer.step(INCOMPLETE, lambda: _finish(out), keep=False)
    seconds["total"] = time.perf_counter() - t_start
    return out


def _write_plots(
    results: Results,
    metric_columns: list[str],
    curves: pd.DataFrame,
    plots: bool | str,
    folder: Path,
) -> None:
    """The job's plots (see :func:`write_job_dir`'s ``plots``): with ``plots="all"``, the
    curves of every metric and a histogram of each; else the curves of the headline metrics
    (:func:`~recoeval_tracking.metrics.results.headline_metrics`: one panel instead of one per
    six curves, most of a job's plotting time) and the histogram of the first of them.
    ``metric_columns``: the names the files use (prefixed for a validation part)."""
    named = dict(zip(results.metric_columns, metric_columns))
    shown = metric_columns if len(results.per_user) else []  # a table left on the workers
    table = curves if len(curves) else None
    if plots != "all":
        shown = headline_metrics(shown, results.k, limit=1) if shown else []
        table = _headline_curves(table, metric_columns, results.k)
    per_user = results.per_user[[c for c, n in named.items() if n in shown]].rename(columns=named)
    write_job_plots(per_user, shown, table, folder)


def _headline_curves(
    curves: pd.DataFrame | None, metric_columns: list[str], k: int
) -> pd.DataFrame | None:
    """``curves`` (the layout of ``curves.csv``) cut to the curves of the headline metrics,
    with their bounds; the first six curves when no headline metric has one."""
    if curves is None:
        return None
    names = [c for c in curves.columns if c != "k" and not c.endswith(("_ci95_low", "_ci95_high"))]
    wanted = [
        curve
        for metric in headline_metrics(metric_columns, k)
        if (curve := metric.rpartition("_at_")[0] + "_at_k") in names
    ] or names[:6]
    kept = [c for n in wanted for c in (n, f"{n}_ci95_low", f"{n}_ci95_high") if c in curves]
    return curves[["k", *kept]]


class _Writer:
    """Runs the writes of a job directory, keeping the names of those done; an ``OSError``
    becomes a :class:`JobDirWriteError` naming the file and what was kept."""

    def __init__(self, out: Path):
        self.out = out
        self.kept: list[str] = []

    def step(self, name: str, write: Any, *, keep: bool = True) -> Any:
        try:
            value = write()
        except JobDirWriteError:
            raise
        except OSError as err:
            raise JobDirWriteError(self.out, name, err, self.kept) from err
        if keep:
            self.kept.append(name)
        return value


def _begin(out: Path, uid: str) -> None:
    """Mark the folder ``INCOMPLETE`` (with the new uid), then drop what belongs to its previous
    job: ``job.json``, markers, temporary files of a writer that died."""
    write_json_atomic(
        out / INCOMPLETE,
        {
            "job_uid": uid,
            "pid": os.getpid(),
            "started_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        },
    )
    for name in (FILES["job"], PENDING, UPLOADING, SYNCED):
        (out / name).unlink(missing_ok=True)
    remove_stale_temporaries(out)


def begin_job_dir(path: str | Path) -> Path:
    """Mark ``path`` ``INCOMPLETE`` (created if needed) before anything of the job is written
    into it by other processes (the per-user parts of a distributed evaluation), and drop the
    per-user table of a previous job. A job that dies before :func:`write_job_dir` finishes
    leaves the folder visibly incomplete."""
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    with file_lock(out / JOB_LOCK, what=f"the job directory {out}"):
        _begin(out, uuid.uuid4().hex)
        _remove(out / FILES["per_user"])
    return out


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


def _place_parts(source: Path, target: Path) -> None:
    """Put the per-user parts written by the workers at ``target`` (nothing to do when they
    were written there); elsewhere they are copied beside it, then renamed over it."""
    if not any(source.glob("part-*.parquet")):
        raise FileNotFoundError(errno.ENOENT, f"no per-user parts in {source}")
    if source.resolve() == target.resolve():
        return
    tmp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.recoeval-tmp")
    shutil.copytree(source, tmp)
    _remove(target)
    os.replace(tmp, target)


def _write_table(per_user: pd.DataFrame, target: Path) -> None:
    if target.is_dir():  # the parts of a previous, distributed job
        shutil.rmtree(target)
    atomic_write(target, lambda tmp: per_user.to_parquet(tmp, index=False))


def _finish(out: Path) -> None:
    (out / INCOMPLETE).unlink(missing_ok=True)
    fsync_dir(out)


def _check_write_args(
    results: Any, path: Any, config_yaml: Any, overrides: Any, dataset: Any, extra_metrics: Any
) -> None:
    func = "write_job_dir"
    if not isinstance(results, Results):
        raise param_error("results", func, "a recoeval_tracking Results object", results)
    if not isinstance(path, (str, Path)):
        raise param_error("path", func, "a str or pathlib.Path", path)
    if config_yaml is not None and not isinstance(config_yaml, (str, Mapping)):
        raise param_error("config_yaml", func, "YAML text, a plain dict or None", config_yaml)
    if overrides is not None and (
        isinstance(overrides, str) or not all(isinstance(o, str) for o in overrides)
    ):
        raise param_error("overrides", func, "a list of str (Hydra overrides) or None", overrides)
    if dataset is not None and not isinstance(dataset, Mapping):
        raise param_error("dataset", func, "a dict of statistics and fingerprints or None", dataset)
    if extra_metrics is not None:
        if not isinstance(extra_metrics, Mapping):
            raise param_error(
                "extra_metrics", func, "a dict of str to numbers or None", extra_metrics
            )
        for key, value in extra_metrics.items():
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise param_error(
                    "extra_metrics",
                    func,
                    "a dict of str to numbers",
                    f"{key!r}: {value!r}",
                    got_is_text=True,
                )


def _prefixed_metrics(results: Results, prefix: str) -> dict[str, float]:
    """:func:`job_metrics` of ``results`` with every metric key named with ``prefix``; the
    timings (``<stage>_seconds``) as they are."""
    stages = {sanitize_key(str(s)) for s in (results.timings or {})}
    stages |= {f"{s}_seconds" for s in stages}
    return {(k if k in stages else prefix + k): v for k, v in job_metrics(results).items()}


def validation_metrics(results: Results) -> dict[str, float]:
    """The means, bounds and catalogue-level metrics of an evaluation on the validation part,
    each key with :data:`VALIDATION_PREFIX` (``val_ndcg_at_10``, ``val_ndcg_at_10_ci95_low``,
    ``val_users_evaluated``); no timings."""
    named = _prefixed_metrics(results, VALIDATION_PREFIX)
    return {k: v for k, v in named.items() if k.startswith(VALIDATION_PREFIX)}


def _prefixed_table(results: Results, prefix: str) -> pd.DataFrame:
    """The per-user table of ``results`` with every metric and curve column prefixed."""
    names = [*results.metric_columns, *results.curves_per_user]
    table = results.per_user
    renames = {c: prefix + sanitize_key(c) for c in table.columns if c in names}
    if prefix and "n_test" in table.columns:  # the entries evaluated: the validation part's
        renames["n_test"] = "n_validation"
    return table.rename(columns=renames) if prefix else table


def _write_results(
    results: Results,
    writer: _Writer,
    extra_metrics: Mapping[str, Any] | None,
    prefix: str = "",
) -> tuple[pd.DataFrame, list[str]]:
    """``metrics.json``, ``definitions.json``, ``curves.csv`` and ``per_user.parquet``, every
    metric named with ``prefix`` (``val_`` for an evaluation on the validation part); returns
    the curves table and the sanitised metric columns."""
    from ..metrics.evaluate import metric_fingerprints  # the engine: not for a reader of folders

    out = writer.out
    metrics = _prefixed_metrics(results, prefix)
    metrics.update({sanitize_key(str(k)): float(v) for k, v in (extra_metrics or {}).items()})
    writer.step(
        FILES["metrics"],
        lambda: _write_json(out / FILES["metrics"], {k: _num(v) for k, v in metrics.items()}),
    )

    metric_columns = [prefix + sanitize_key(c) for c in results.metric_columns]
    writer.step(
        FILES["definitions"],
        lambda: _write_json(
            out / FILES["definitions"],
            _json_safe(
                {
                    "fingerprint": results.fingerprint,
                    "k": int(results.k),
                    "topk_only": bool(results.topk_only),
                    "metric_columns": metric_columns,
                    "curves": [prefix + sanitize_key(c) for c in results.curves_per_user],
                    "evaluated_on": "validation" if prefix else "test",
                    "definitions": results.definitions,
                    "metric_fingerprints": {
                        prefix + sanitize_key(c): fp
                        for c, fp in metric_fingerprints(
                            results.definitions, [*results.metric_columns, *results.aggregates]
                        ).items()
                    },
                }
            ),
        ),
    )

    curves = curves_table(results)
    if prefix:
        curves = curves.rename(columns={c: prefix + c for c in curves.columns if c != "k"})
    curves_path = out / FILES["curves"]
    if len(curves):
        writer.step(
            FILES["curves"],
            lambda: atomic_write(
                curves_path, lambda tmp: curves.to_csv(tmp, index=False, float_format="%.17g")
            ),
        )
    else:
        curves_path.unlink(missing_ok=True)
    target = out / FILES["per_user"]
    parts = getattr(results, "per_user_dataset", None)
    if parts is not None:
        writer.step(FILES["per_user"], lambda: _place_parts(Path(parts), target))
    else:
        table = _prefixed_table(results, prefix)
        writer.step(FILES["per_user"], lambda: _write_table(table, target))
    return curves, metric_columns


def _write_context(
    writer: _Writer,
    config_yaml: str | Mapping | None,
    overrides: list[str] | None,
    dataset: Mapping[str, Any] | None,
) -> None:
    """``dataset.json``, ``config.yaml`` and ``overrides.yaml`` (those given), redacted; files of
    a previous job that this one does not have are removed."""
    import yaml

    out = writer.out
    for name, given in (("dataset", dataset), ("config", config_yaml), ("overrides", overrides)):
        if given is None:
            (out / FILES[name]).unlink(missing_ok=True)
    if dataset is not None:
        writer.step(
            FILES["dataset"],
            lambda: _write_json(out / FILES["dataset"], _json_safe(scrub_mapping(dict(dataset)))),
        )
    if config_yaml is not None:
        writer.step(
            FILES["config"],
            lambda: write_text_atomic(out / FILES["config"], _scrubbed_yaml(config_yaml)),
        )
    if overrides is not None:
        text = yaml.safe_dump(scrub_overrides(list(overrides)), sort_keys=False)
        writer.step(FILES["overrides"], lambda: write_text_atomic(out / FILES["overrides"], text))


def _scrubbed_yaml(config: str | Mapping) -> str:
    import yaml

    if isinstance(config, Mapping):
        data: Any = dict(config)
    else:
        try:
            data = yaml.safe_load(config)
        except yaml.YAMLError:
            # Not parseable: keep the text, with URL passwords and secret assignments removed.
            return scrub_text(config)
    if not isinstance(data, (Mapping, list)):
        return scrub_text(config) if isinstance(config, str) else yaml.safe_dump(data)
    return yaml.safe_dump(scrub_mapping(data), sort_keys=False, allow_unicode=True)
