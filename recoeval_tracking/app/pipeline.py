"""One evaluation job from a plain config dict: load, prepare, split, fit, evaluate, write, log.

This is the body of the ``recoeval-track`` command without Hydra: :func:`run_job` takes the
composed config as a plain nested dict (the shape of :class:`recoeval_tracking.app.schema.Config`)
and a job directory, so it runs and is tested without Hydra or OmegaConf.

Stages, each timed into ``metrics.json`` as ``<stage>_seconds``:

1. ``load``: :func:`recoeval_tracking.data.load_dataset` with the dataset options;
2. ``prepare``: :func:`~recoeval_tracking.data.to_implicit`,
   :func:`~recoeval_tracking.data.filter_min_interactions`, :func:`~recoeval_tracking.data.k_core`
   when configured;
3. ``split``: :func:`recoeval_tracking.splitting.make_split` (fold ``split.fold`` of a k-fold);
4. ``fit``: :func:`recoeval_tracking.models.make_model` then ``fit``;
5. ``eval``: :func:`recoeval_tracking.evaluate` with the model's score source, in this process
   (``backend.kind=cpu``) or on a Dask cluster (``backend.kind=dask``:
   :func:`recoeval_tracking.distributed.evaluate_on_dask`; the job directory is marked
   ``INCOMPLETE`` first, so a lost cluster leaves it visibly unfinished);
6. the job directory (:func:`recoeval_tracking.jobdir.write_job_dir`) and, unless
   ``tracking.enabled`` is false, one MLflow run
   (:func:`recoeval_tracking.tracking.upload_or_mark_pending`): a store that cannot be
   reached leaves the job successful and marked ``PENDING``.

A split with a validation part (``split.validation_fraction=0.1``, ``split.validation_n=1``...)
runs the protocol of a fair study (:mod:`recoeval_tracking.app.protocol`): the model fits on
train and is evaluated on validation (``eval_validation``: every item not in train ranked; its
metrics named ``val_ndcg_at_10``...), then, unless the job is a sweep's selection job
(``phase=selection``), a new model of the same config refits on train + validation
(``refit``; ``refit=false`` keeps the first fit) and is evaluated once on test (``eval``: every
item not in train or validation ranked). The job's ``objective`` is then read on validation.

Reproducibility: every random step is seeded from the config, and the per-user metrics do not
depend on ``nthreads`` (the engine and ALS are bit-identical whatever the thread count), so the
same config gives the same ``per_user.parquet``.
"""

from __future__ import annotations

import logging
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from .._heartbeat import heartbeat
from .._validation import InputError, check_int, param_error
from ..jobdir.io import VALIDATION_PREFIX
from ..options import EvalOptions
from .errors import NOTHING_EVALUATED, refuse_nothing_evaluated
from .job_tracking import track_job, tracking_uri_for
from .precheck import check_before_load, check_k_against_items
from .protocol import SEARCH_SPACE, Protocol, Validated, check_validation_users, read_protocol
from .stages import absolute_path as _absolute
from .stages import dataset_record, log_left_out, prep_steps
from .stages import timed_stage as _timed

__all__ = ["run_job", "tracking_uri_for", "progress_mode", "PROGRESS_MODES", "STAGES"]

logger = logging.getLogger(__name__)

#: Accepted values of the top-level ``progress`` setting.
PROGRESS_MODES = ("auto", "true", "false")
#: The timed stages, in order (``<stage>_seconds`` in ``metrics.json``).
STAGES = ("load", "prepare", "split", "fit", "eval_validation", "refit", "eval")

_FUNC = "run_job"
_SECTIONS = ("dataset", "split", "model", "metrics")
# Dataset keys that configure preparation, not the loader.
_PREP_KEYS = ("implicit", "min_user_interactions", "min_item_interactions", "k_core")
# Dataset keys every option has, given to loaders that take them: a label for the records, and
# the data's relevance rule (the loader's signature holds its default: MovieLens 4, binary).
_LABEL_KEYS = ("name", "relevance_level", "gains")
_RULE_KEYS = ("relevance_level", "gains")


def _section(cfg: Mapping[str, Any], name: str) -> dict[str, Any]:
    value = cfg.get(name)
    if not isinstance(value, Mapping):
        raise param_error(
            "cfg",
            _FUNC,
            f"a config dict with a '{name}' section (a dict)",
            f"{name}={value!r}",
            got_is_text=True,
        )
    return dict(value)


def progress_mode(value: Any) -> bool | None:
    """The tqdm ``disable`` flag for a ``progress`` setting: ``auto`` -> None (bars only when
    stderr is a terminal), ``true`` -> False (always), ``false`` -> True (never)."""
    text = str(value).strip().lower()
    if text not in PROGRESS_MODES:
        raise param_error("progress", _FUNC, f"one of {list(PROGRESS_MODES)}", value)
    return {"auto": None, "true": False, "false": True}[text]


# ---------------------------------------------------------------------------------------------
# stages
# ---------------------------------------------------------------------------------------------


def load_data(dataset: Mapping[str, Any], base_dir: Path | None = None):
    """Load the dataset described by a ``dataset`` config section (plain dict).

    Every key except ``kind`` and the preparation keys is passed to the loader registered as
    ``kind`` in :data:`recoeval_tracking.data.DATASETS` (the label ``name`` and the relevance
    rule, ``relevance_level`` and ``gains``, only when the loader takes them: the loaded data
    carries the rule, as in Python); its file-path parameters are taken relative to
    ``base_dir``.
    """
    from ..data import DATASETS, load_dataset
    from ._signatures import takes

    kind = dataset.get("kind")
    if not isinstance(kind, str):
        raise param_error("dataset.kind", _FUNC, "a dataset kind (str)", kind)
    params = {k: v for k, v in dataset.items() if k not in ("kind", *_PREP_KEYS)}
    loader = DATASETS.get(kind)  # an unknown kind: load_dataset's error lists the known ones
    if loader is not None:
        params = {k: v for k, v in params.items() if k not in _LABEL_KEYS or takes(loader, k)}
        params = _absolute_paths(loader, params, base_dir)
    return load_dataset(kind, **params)


def _absolute_paths(target: Any, params: dict[str, Any], base_dir: Path | None) -> dict[str, Any]:
    """``params`` with the file-path parameters of ``target`` (those annotated with a path type)
    made absolute from ``base_dir``."""
    from ._signatures import path_params

    paths = path_params(target)
    return {k: _absolute(v, base_dir) if k in paths else v for k, v in params.items()}


def prepare_data(X, dataset: Mapping[str, Any]):
    """Apply the preparation steps of a ``dataset`` config section, in the order: value
    conversion, one minimum-count pass, iterated k-core."""
    from ..data import filter_min_interactions, k_core, to_implicit

    conv = dataset.get("implicit") or {}
    if not isinstance(conv, Mapping):
        raise param_error(
            "dataset.implicit", _FUNC, "a dict (method, threshold, alpha, epsilon)", conv
        )
    method = conv.get("method")
    threshold = conv.get("threshold")
    if method is not None:
        X = to_implicit(
            X,
            method,
            threshold=threshold,
            alpha=conv.get("alpha", 1.0),
            epsilon=conv.get("epsilon", 1.0),
        )
    elif threshold is not None:
        X = _threshold_only(X, threshold)
    min_user = dataset.get("min_user_interactions") or 0
    min_item = dataset.get("min_item_interactions") or 0
    if min_user or min_item:
        X = filter_min_interactions(X, min_user, min_item)
    core = dataset.get("k_core") or 0
    if core:
        X = k_core(X, core)
    if X.nnz == 0:
        raise InputError(
            "The dataset is empty after preparation (value threshold, minimum "
            "counts or k-core removed every interaction). Lower "
            "dataset.implicit.threshold, dataset.min_user_interactions, "
            "dataset.min_item_interactions or dataset.k_core."
        )
    return X


def _threshold_only(X, threshold: Any):
    """Drop the entries whose value is below ``threshold``; keep the values of the others."""
    import numpy as np

    from ..data import PrepReport

    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float))
        or not np.isfinite(threshold)
    ):
        raise param_error("dataset.implicit.threshold", _FUNC, "a finite number or null", threshold)
    keep = np.asarray(X.matrix.data, dtype=np.float64) >= threshold
    Y = X.subset(keep)
    report = PrepReport("threshold", {"threshold": threshold}, X.nnz, Y.nnz).log()
    Y.reports.append(report)
    return Y


def split_data(X, split: Mapping[str, Any]):
    """Run the split strategy of a ``split`` config section; for k-fold strategies return fold
    ``split["fold"]``.

    Every other key is passed to the strategy, None included: its signature says what None
    means (its default, or a value of its own, as recometrics' ``max_test_users``).
    """
    from ..splitting import make_split

    name = split.get("name")
    if not isinstance(name, str):
        raise param_error("split.name", _FUNC, "a split strategy name (str)", name)
    params = {k: v for k, v in split.items() if k not in ("name", "fold")}
    out = make_split(name, X, **params)
    if isinstance(out, list):
        fold = check_int(split.get("fold", 0), "split.fold", _FUNC, minimum=0, maximum=len(out) - 1)
        return out[fold]
    if split.get("fold") not in (None, 0):
        raise param_error(
            "split.fold",
            _FUNC,
            f"0 or null for the '{name}' strategy (it makes one split)",
            split.get("fold"),
        )
    return out


def build_model(
    model: Mapping[str, Any],
    progress: bool | None,
    base_dir: Path | None = None,
    label: str | None = None,
):
    """Build the model of a ``model`` config section: the user's own class when the section
    has ``_target_`` (:func:`~recoeval_tracking.app.user_model.instantiate_model`, ``label``
    naming it), else a baseline (:func:`recoeval_tracking.models.make_model`).

    Every key except ``name`` and ``search_space`` (what a sweep tunes a baseline over) is
    passed to the model's class; its file-path parameters are
    taken relative to ``base_dir``. ``progress`` is the tqdm ``disable`` flag; models with a
    ``progress`` parameter (a progress bar) get it there.
    """
    from ..models import MODELS, make_model
    from ._signatures import takes
    from .user_model import instantiate_model, is_user_model_config, no_target_error

    model = {k: v for k, v in model.items() if k != SEARCH_SPACE}  # the sweep's, not the model's
    if is_user_model_config(model):
        return instantiate_model(model, label, base_dir)
    name = model.get("name")
    if name is None:
        raise no_target_error(model, label)
    if not isinstance(name, str):
        raise param_error("model.name", _FUNC, "a model name (str)", name)
    params = {k: v for k, v in model.items() if k != "name"}
    cls = MODELS.get(name)  # an unknown name: make_model's error lists the known ones
    if cls is not None:
        params = _absolute_paths(cls, params, base_dir)
        if takes(cls, "progress"):
            params["progress"] = progress is not True
    return make_model(name, **params)


def _eval_progress(total: int, disable: bool | None) -> tuple[Callable[[int], None], Any]:
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc="eval", unit="user", disable=disable, file=sys.stderr, leave=False)
    return bar.update, bar


# ---------------------------------------------------------------------------------------------
# the job
# ---------------------------------------------------------------------------------------------


def run_job(
    cfg: Mapping[str, Any],
    job_dir: str | Path,
    *,
    overrides: list[str] | None = None,
    sweep: Mapping[str, Any] | None = None,
    base_dir: str | Path | None = None,
    tracking_uri: str | None = None,
    echo: bool = True,
    model_label: str | None = None,
    fitted: Any = None,
    data: Any = None,
    run_id: str | None = None,
) -> dict[str, Any]:
    """Run one evaluation job described by the plain config ``cfg`` and write it to ``job_dir``.

    Parameters
    ----------
    cfg : dict
        The resolved config (sections ``dataset``, ``split``, ``model``, ``metrics``, optional
        ``tracking``; top-level ``seed``, ``nthreads``, ``progress``, ``plots``), as
        :class:`recoeval_tracking.app.schema.Config` describes it.
    job_dir : str or Path
        Where ``per_user.parquet``, ``metrics.json``, ``curves.csv``, ``plots/``,
        ``dataset.json``, ``config.yaml``... are written (created if needed).
    overrides : list of str, optional
        The Hydra overrides of the job (kept in ``overrides.yaml`` and as the run name).
    sweep : dict, optional
        ``{"parent_run_id": ..., "sweep_id": ...}`` of the sweep's parent run: the job's run
        becomes its child.
    base_dir : str or Path, optional
        Directory that relative file paths of the config are taken from (default: the current
        directory).
    tracking_uri : str, optional
        The MLflow store (default: ``tracking.uri``, else ``sqlite:///<base_dir>/mlflow.db``).
    echo : bool
        Log the summary table (through :mod:`logging`, which Hydra sends to the terminal and the
        job's log file).
    model_label : str, optional
        The model's name when ``model`` has none (the option of a ``_target_`` model: ``ease``).
    fitted, data : optional
        A model the caller fitted on ``data`` (a :class:`~recoeval_tracking.app.plugin.JobData`;
        :func:`recoeval_tracking.app.evaluate_job`); ``model`` is then only logged.
    run_id : str, optional
        Log into this existing MLflow run (the one the caller has open) instead of a new one.

    Returns
    -------
    dict
        ``job_dir``, ``metrics`` (means at K), ``timings`` (seconds per stage), ``run_id`` (None
        when tracking is off or the store could not be reached), ``dataset`` (statistics),
        ``objective`` (the value of the configured ``objective``, None when unset).

    Raises
    ------
    InputError
        A bad config value; the message names the setting and what to change.
    """
    from ..jobdir import begin_job_dir, write_job_dir
    from .user_model import model_record

    if not isinstance(cfg, Mapping):
        raise param_error("cfg", _FUNC, "a plain dict (the resolved config)", cfg)
    if not isinstance(job_dir, (str, Path)):
        raise param_error("job_dir", _FUNC, "a str or pathlib.Path", job_dir)
    check_before_load(cfg)
    sections = {name: _section(cfg, name) for name in _SECTIONS}
    nthreads = check_int(cfg.get("nthreads", -1), "nthreads", _FUNC, minimum=-1)
    if nthreads == 0:
        raise param_error("nthreads", _FUNC, "an int >= 1, or -1 for every core", nthreads)
    options = _with_section_relevance(
        EvalOptions.from_config(sections["metrics"], nthreads=nthreads), sections["dataset"]
    )
    disable = progress_mode(cfg.get("progress", "auto"))
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    out = Path(job_dir)
    backend = _backend(cfg)
    if backend["kind"] == "dask":
        begin_job_dir(out)
    t_start = time.perf_counter()
    tracking = dict(cfg.get("tracking") or {})
    uri = (tracking_uri or tracking_uri_for(tracking, base)) if tracking.get("enabled") else None
    plots = bool(cfg.get("plots", True))
    own_run = uri if run_id is None else None  # the store this job makes its run in, if any
    preload = partial(_preload, own_run, plots)
    _open_store_early(own_run)
    wanted = read_protocol(cfg)
    X, split, model, results, timings, validation = _run_stages(
        sections, options, disable, base, backend, out, model_label, fitted, data, preload, wanted
    )
    timings["total"] = time.perf_counter() - t_start
    done = wanted.applied(split, validation, fitted is None)
    dataset_info = {**dataset_record(X, split, sections["dataset"], base), **done.record()}
    extra = {f"{stage}_seconds": sec for stage, sec in timings.items() if stage != "eval"}
    if validation is not None and done.part == "test":
        extra.update(validation.extra)
    if echo and dataset_info.get("leakage"):  # data with timestamps
        from ..splitting import leakage_line

        logger.info("%s", leakage_line(dataset_info["leakage"]))
    logger.info("writing the job directory (tables%s)...", ", plots" if plots else "")
    written: dict[str, float] = {}
    with heartbeat("writing the job directory", logger.info):
        write_job_dir(
            results,
            out,
            config_yaml=dict(cfg),
            overrides=list(overrides or []),
            dataset=dataset_info,
            extra_metrics=extra,
            plots=plots,
            model=model_record(model),
            part=done.part,
            validation=validation.results if validation and done.part == "test" else None,
            timings=written,
        )
    if echo:
        _echo_results(model, results, validation, done, timings, written, plots, out)
    run_id = track_job(cfg, out, base, tracking_uri, sweep, overrides, model.name, run_id)
    means = {} if done.part == "validation" else dict(results.means)
    val_means = dict(validation.results.means) if validation is not None else {}
    return {
        "job_dir": str(out),
        "metrics": means,
        "validation_metrics": val_means,
        "part": done.part,
        "timings": timings,
        "run_id": run_id,
        "dataset": dataset_info,
        "objective": _objective(
            cfg.get("objective"), means, val_means, extra, validation is not None
        ),
    }


def _echo_results(
    model: Any,
    results: Any,
    validation: Validated | None,
    done: Any,
    timings: Mapping[str, float],
    written: Mapping[str, float],
    plots: bool,
    out: Path,
) -> None:
    """The job's summary on the terminal: the headline table (on validation too, with a
    validation part), the seconds of each stage and of writing the job directory, and where
    it is."""
    timing_text = (
        ", ".join(f"{s} {timings[s]:.2f} s" for s in (*STAGES, "total") if s in timings)
        + f"; job directory written in {written['total']:.2f} s"
        + (f" (plots {written['plots']:.2f} s)" if plots else "")
    )
    if validation is not None:
        logger.info(
            "%s on validation (fitted on train), K=%d, mean over users [95%% interval]:\n%s",
            model.name,
            validation.results.k,
            validation.results.summary("headline"),
        )
    if done.part == "validation":
        logger.info(
            "selection job: evaluated on validation only; the sweep tests the configuration it "
            "chooses\ntimings: %s\njob directory: %s",
            timing_text,
            out,
        )
        return
    logger.info(
        "%s%s at K=%d, mean over users [95%% interval]:\n%s\ntimings: %s\njob directory: %s",
        model.name,
        ""
        if validation is None
        else (
            " on test (refit on train + validation)"
            if done.refit
            else " on test (fitted on train; train and validation items not ranked)"
        ),
        results.k,
        results.summary("headline"),
        timing_text,
        out,
    )


def _with_section_relevance(options: EvalOptions, dataset: Mapping[str, Any]) -> EvalOptions:
    """``options`` with the dataset section's ``relevance_level`` and ``gains`` where the
    metrics section left them unset, for a dataset kind whose loader does not take them (a
    stored split: its manifest holds the rule, which these override). Other kinds' loaders
    attach the rule to the data, and the evaluation takes it from there."""
    from ..data import DATASETS
    from ._signatures import takes

    loader = DATASETS.get(str(dataset.get("kind")))
    if loader is None or all(takes(loader, key) for key in _RULE_KEYS):
        return options
    changes = {}
    for key in ("relevance_level", "gains"):
        if getattr(options, key) is None and dataset.get(key) is not None:
            changes[key] = dataset[key]
    return replace(options, **changes) if changes else options


def _objective(
    name: Any,
    means: Mapping[str, float],
    val_means: Mapping[str, float],
    extra: Mapping[str, float],
    on_validation: bool,
) -> float | None:
    """The value of the configured ``objective`` among the job's results (None when unset):
    read on validation when the job evaluated a validation part (``objective=ndcg_at_10`` is
    then ``val_ndcg_at_10``: a search never sees a test number), else on test."""
    if name is None:
        return None
    key = str(name)
    if on_validation:
        key = key if key.startswith(VALIDATION_PREFIX) else VALIDATION_PREFIX + key
        values = {VALIDATION_PREFIX + k: v for k, v in val_means.items()}
    else:
        values = {**means, **extra}
    if key not in values:
        shown = ", ".join(sorted(values)[:12])
        raise InputError(
            f"objective must be one of the job's results ({shown}, ...); got "
            f"{name!r}. Pick a metric the job computes (metrics.names) at "
            "metrics.k, e.g. objective=ndcg_at_10."
        )
    return float(values[key])


def _backend(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """The ``backend`` section (``kind=cpu`` when there is none), its kind checked."""
    backend = {"kind": "cpu", **dict(cfg.get("backend") or {})}
    if backend["kind"] not in ("cpu", "dask"):
        raise param_error(
            "backend.kind", _FUNC, "'cpu' or 'dask' (backend=cpu or backend=dask)", backend["kind"]
        )
    return backend


def _evaluate(
    split: Any,
    model: Any,
    options: EvalOptions,
    progress: Callable[[int], None],
    backend: Mapping[str, Any],
    out: Path,
    warm: Any = None,
    preload: Callable[[], Any] | None = None,
    beat: bool = False,
) -> Any:
    """The ``eval`` stage, in this process or on the Dask cluster of ``backend``; first waits
    for ``warm`` (:mod:`recoeval_tracking.metrics.warm`) when it compiles this model's dtype,
    running ``preload`` meanwhile; with ``beat``, a line every few seconds while it
    evaluates."""
    from ..metrics.inputs import with_data_relevance

    options = with_data_relevance(options, split.train, split.test)  # unless metrics.* say
    inputs = model.eval_inputs(options.k, split.test_users)
    if warm is not None:
        warm.wait_for(inputs, meanwhile=preload)
    # without a progress bar, a first evaluation compiling its kernels here is otherwise silent
    with heartbeat("evaluating", logger.info) if beat else nullcontext():
        return _evaluate_now(split, inputs, options, progress, backend, out)


def _evaluate_now(
    split: Any,
    inputs: dict[str, Any],
    options: EvalOptions,
    progress: Callable[[int], None],
    backend: Mapping[str, Any],
    out: Path,
) -> Any:
    from ..metrics import evaluate

    if backend["kind"] == "cpu":
        with warnings.catch_warnings():  # the job fails with that message instead
            warnings.filterwarnings("ignore", message=NOTHING_EVALUATED)
            return evaluate(split.train, split.test, **inputs, options=options, progress=progress)
    from ..distributed import cluster_client, evaluate_on_dask
    from ..jobdir import FILES

    parts = out / FILES["per_user"] if backend.get("per_user_parts") else None
    with (
        _quiet("distributed"),
        cluster_client(
            backend.get("address"),
            n_workers=backend.get("n_workers", 2),
            threads_per_worker=backend.get("threads_per_worker", 1),
            timeout=float(backend.get("timeout", 30.0)),
        ) as client,
    ):
        return evaluate_on_dask(
            client,
            split.train,
            split.test,
            options,
            **inputs,
            shards=backend.get("shards"),
            per_user_dir=parts,
        )


def _open_store_early(uri: str | None) -> None:
    """Name the job's store to the upload child, when the command started one
    (:func:`~recoeval_tracking.app.startup.prestart_uploader`): it opens the store while the
    job runs; a job that logs nothing (``uri`` None: its config turns tracking off) ends it."""
    from .startup import stop_uploader, uploader

    proc = uploader()
    if proc is None:
        return
    if uri is None:
        stop_uploader()
        return
    from .._uploader_child import open_store

    open_store(proc, uri)


def _preload(uri: str | None, plots: bool) -> None:
    """Import what the job's end needs (seconds on a first run: matplotlib for the plots,
    MLflow and its store at ``uri`` unless None), while the job waits for the kernels
    compiling in its warm-up child."""
    if plots:
        from matplotlib.figure import Figure  # noqa: F401
    if uri is not None:
        from ..tracking.pending import preload

        preload(uri)


def _warm_up(
    options: EvalOptions, model_section: Mapping[str, Any], backend: Mapping[str, Any]
) -> Any:
    """A child process compiling the kernels while the job loads, splits and fits, when the
    kernel cache is cold and the job evaluates here (:mod:`recoeval_tracking.metrics.warm`;
    ``RECOEVAL_WARM_UP=0`` turns it off)."""
    import os

    from .startup import stop_warm_up, take_warm_up

    if backend["kind"] != "cpu" or os.environ.get("RECOEVAL_WARM_UP") == "0":
        stop_warm_up()
        return None
    started = take_warm_up()  # the command's, begun before its imports (cold cache)
    if started is None:
        from ..engine import kernels  # noqa: F401  (drops a stale cache before it is looked at)
        from .precheck import kernel_cache_is_cold

        if not kernel_cache_is_cold():
            return None
    from ..metrics import warm

    _compile_notice()
    # the dtype the model will score in is known after its fit: the baselines score in
    # float32 (ALS), a user's own class most often in numpy's float64
    from .user_model import is_user_model_config

    guess = "float64" if is_user_model_config(model_section) else "float32"
    dtype = str(model_section.get("dtype") or guess)
    return (
        warm.start(options, dtype) if started is None else warm.start(options, dtype, proc=started)
    )


@contextmanager
def _quiet(name: str) -> Iterator[None]:
    """Records of the logger ``name`` (and its children) below WARNING dropped by the root
    handlers meanwhile: Dask logs some thirty INFO lines a job (its loggers set their levels)."""

    def keep(record: logging.LogRecord) -> bool:
        return record.levelno >= logging.WARNING or not (
            record.name == name or record.name.startswith(name + ".")
        )

    handlers = list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(keep)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(keep)


def _run_stages(
    sections: dict[str, dict[str, Any]],
    options: EvalOptions,
    disable: bool | None,
    base: Path,
    backend: Mapping[str, Any],
    out: Path,
    label: str | None = None,
    fitted: Any = None,
    data: Any = None,
    preload: Callable[[], Any] | None = None,
    wanted: Protocol | None = None,
) -> tuple[Any, Any, Any, Any, dict[str, float], Validated | None]:
    """Build the model (before any data is read), load, prepare, split, fit and evaluate,
    each timed; returns the data, the split, the fitted model, the results, the seconds per
    stage and the evaluation on the validation part (None without one). With ``fitted`` and
    ``data`` (the caller's), only the evaluations run. ``preload`` runs while the job waits
    for the kernels compiling in the warm-up child, if it does. ``wanted``: the job's phase
    and refit setting (:func:`~recoeval_tracking.app.protocol.read_protocol`)."""
    wanted = wanted or Protocol()
    from ..engine.driver import thread_limits

    timings: dict[str, float] = {}
    warm = _warm_up(options, sections["model"], backend) if fitted is None else None
    with thread_limits(options.nthreads):
        model = (
            fitted if fitted is not None else build_model(sections["model"], disable, base, label)
        )
        if (
            data is None
            and fitted is None
            and sections["dataset"].get("kind") == "parquet_partitioned"
        ):  # a stored split
            from .stored import run_stored_stages

            X, split, results, stored_times = run_stored_stages(
                sections["dataset"],
                model,
                options,
                dict(backend),
                out,
                base,
                lambda s, m: _evaluate(s, m, options, lambda n: None, backend, out),
            )
            log_left_out(results)
            refuse_nothing_evaluated(results)
            wanted.check_split(split)
            return X, split, model, results, {**timings, **stored_times}, None
        if data is None:
            X, split = _load_and_split(sections, base, options, timings)
        else:
            X, split = data.data, data.split
            check_k_against_items(options.k, X.n_items)
        wanted.check_split(split)
        validation: Validated | None = None
        unseen = check_validation_users(split) if split.has_validation else 0
        if backend["kind"] != "dask":  # from here a failure (the model's fit...) is marked
            from ..jobdir import begin_job_dir

            begin_job_dir(out)
        if fitted is None:
            with _timed(timings, "fit", model):
                model.fit(
                    split.train.matrix, user_ids=split.train.user_ids, item_ids=split.train.item_ids
                )
            logger.info("model: %r fitted in %.2f s", model, timings["fit"])
        _compile_notice()
        first = split.validation_split() if split.has_validation else split
        update, bar = _eval_progress(first.train.n_users, disable)
        try:
            with (
                _timed(timings, "eval_validation", "on validation", quiet=True)
                if (split.has_validation)
                else nullcontext()
            ):
                results = _evaluate(
                    first, model, options, update, backend, out, warm, preload, bar.disable
                )
        finally:
            bar.close()
            if warm is not None:
                warm.stop()
        if split.has_validation:
            validation = Validated(results, {"val_users_without_validation": float(unseen)})
            if wanted.phase == "selection":
                log_left_out(results)
                refuse_nothing_evaluated(results)
                timings["eval"] = timings.pop("eval_validation")
                return X, split, model, results, timings, validation
            model, results = _test_phase(
                split,
                model,
                results,
                wanted,
                timings,
                fitted is None,
                options,
                backend,
                out,
                lambda: build_model(sections["model"], disable, base, label),
                disable,
            )
    log_left_out(results)
    refuse_nothing_evaluated(results)
    # the wait for the kernels compiling in the child is part of the first evaluation's time
    # (eval_validation's, when there is a validation part)
    waited = warm.waited if warm and validation is None else 0.0
    timings["eval"] = float(results.timings.get("eval", 0.0)) + waited
    return X, split, model, results, timings, validation


def _load_and_split(
    sections: dict[str, dict[str, Any]], base: Path, options: EvalOptions, timings: dict[str, float]
) -> tuple[Any, Any]:
    """The ``load``, ``prepare`` and ``split`` stages, each timed; returns the data and the
    split."""
    name = sections["dataset"].get("name") or sections["dataset"].get("kind")
    with _timed(timings, "load", f"dataset {name!r}"):
        X = load_data(sections["dataset"], base)
    steps = prep_steps(sections["dataset"])
    with _timed(timings, "prepare", ", ".join(steps), quiet=not steps):
        X = prepare_data(X, sections["dataset"])
    logger.info(
        "data: %s (%d users x %d items, %d interactions)",
        X.name or sections["dataset"].get("kind"),
        X.n_users,
        X.n_items,
        X.nnz,
    )
    check_k_against_items(options.k, X.n_items)
    with _timed(timings, "split", f"with {sections['split'].get('name')!r}"):
        split = split_data(X, sections["split"])
    logger.info("split: %r", split)
    return X, split


def _test_phase(
    split: Any,
    model: Any,
    validated: Any,
    wanted: Protocol,
    timings: dict[str, float],
    can_refit: bool,
    options: EvalOptions,
    backend: Mapping[str, Any],
    out: Path,
    new_model: Callable[[], Any],
    disable: bool | None,
) -> tuple[Any, Any]:
    """After the evaluation on validation (``validated``: its results, checked here): a new
    model of the same config refit on train + validation (unless ``refit=false`` or the
    caller fitted the model) and evaluated once on test; returns the model and the results."""
    log_left_out(validated)
    refuse_nothing_evaluated(validated)
    test = split.test_split(refit=wanted.refit)
    if wanted.refit and can_refit:
        model = new_model()
        with _timed(timings, "refit", "on train + validation"):
            model.fit(test.train.matrix, user_ids=test.train.user_ids, item_ids=test.train.item_ids)
    update, bar = _eval_progress(test.train.n_users, disable)
    try:
        return model, _evaluate(test, model, options, update, backend, out, beat=bar.disable)
    finally:
        bar.close()


_NOTICE_GIVEN: list[bool] = []


def _compile_notice() -> None:
    """One line before the first evaluation of a process whose kernel cache is cold."""
    from .precheck import COMPILE_NOTICE, kernel_cache_is_cold

    if not _NOTICE_GIVEN and kernel_cache_is_cold():
        _NOTICE_GIVEN.append(True)
        print(f"recoeval-track: {COMPILE_NOTICE}", file=sys.stderr, flush=True)
