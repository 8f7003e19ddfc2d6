"""``recoeval-track-report``: a report comparing tracked runs, from its own config
(``report_conf/report.yaml``, typed by :mod:`recoeval_tracking.app.report_config`).

The Hydra layer stops here: :func:`main` composes the config and hands a plain dict to
:func:`run_report`, which selects the runs (from MLflow through
:mod:`recoeval_tracking.tracking.search`, or from local job directories), builds the report with
:func:`recoeval_tracking.reporting.compare.compare` (the object behind ``rt.compare``), writes
the HTML, the Markdown and the LaTeX table and logs them as artifacts of the sweep's parent run
(or of a new report run). A selection that spans several datasets gets the rank statistics
over datasets (Friedman, Nemenyi, a critical-difference diagram).
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from .._validation import InputError, artifact_path_problem, param_error, resolve_under

__all__ = ["main", "run_report", "load_runs", "check_settings"]

_PROG = "recoeval-track-report"
logger = logging.getLogger(__name__)


class StoreUnreachable(RuntimeError):
    """The tracking server did not answer within the one timeout of every command that talks
    to a server (:func:`~recoeval_tracking.tracking.client._fast_fail_http`)."""


@contextlib.contextmanager
def _server_calls(uri: str | None) -> Iterator[None]:
    """MLflow calls under the common timeout; a server that does not answer becomes
    :class:`StoreUnreachable` (one paragraph, exit 1), never a hang or an internal error."""
    from ..tracking.client import _fast_fail_http

    with _fast_fail_http():
        try:
            yield
        except (InputError, StoreUnreachable):
            raise
        except Exception as err:
            text = " ".join(str(err).split())
            if "API request to" not in text and not isinstance(
                err, (ConnectionError, TimeoutError)
            ):
                raise
            from ..jobdir.redact import scrub_text

            raise StoreUnreachable(
                scrub_text(
                    f"could not reach the tracking store {uri or 'of tracking.uri'} "
                    f"({type(err).__name__}: {text[:300]}). Nothing was written. Start the server, "
                    "or name a running one with tracking.uri=URI."
                )
            ) from None


def _selection(cfg: Mapping[str, Any]) -> dict[str, Any]:
    sel = dict(cfg.get("select") or {})
    return {
        "sweep_id": sel.get("sweep_id") or None,
        "experiment": sel.get("experiment") or None,
        "run_ids": list(sel.get("run_ids") or []),
        "filter": sel.get("filter") or None,
        "job_dirs": [str(p) for p in (sel.get("job_dirs") or [])],
        "files": [str(p) for p in (sel.get("files") or [])],
        "format": sel.get("format") or None,
    }


def load_runs(
    cfg: Mapping[str, Any],
    workdir: str | Path,
    base_dir: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list, str | None]:
    """The selected runs as :class:`~recoeval_tracking.reporting.report.RunData`, and the
    tracking URI used (None for job directories and per-user files).

    MLflow runs are downloaded into ``workdir`` (one folder per run). ``progress`` is told
    what was left out (a fair study's selection runs); without it, the log is.
    """
    from ..reporting.runs import RunData

    sel = _selection(cfg)
    base = Path(base_dir) if base_dir else Path.cwd()
    if sel["job_dirs"] or sel["files"]:
        runs = []
        for p in sel["job_dirs"]:
            path = Path(p) if Path(p).is_absolute() else base / p
            runs.append(RunData.from_job_dir(path))
        from ..reporting.per_user_files import read_per_user_files

        runs += read_per_user_files(sel["files"], sel["format"], base, _PROG)
        return runs, None
    from ..tracking.client import _sqlite_path, resolve_tracking_uri
    from ..tracking.search import download_job_artifacts, search_runs_for_report, sweep_study

    tracking = dict(cfg.get("tracking") or {})
    uri = resolve_tracking_uri(tracking.get("uri") or None)
    if not (sel["sweep_id"] or sel["experiment"] or sel["run_ids"] or sel["filter"]):
        raise param_error(
            "select",
            _PROG,
            "one of select.sweep_id, select.experiment, "
            "select.run_ids, select.filter, select.job_dirs or select.files",
            None,
            "Say which runs to compare, e.g. select.sweep_id=<id>.",
        )
    # looked at before searching: opening a missing SQLite store creates an empty one
    db = _sqlite_path(uri)
    if db is not None and not db.is_file():
        given = {k: v for k, v in sel.items() if v}
        raise InputError(
            f"select: no run matches {given}: there is no MLflow store at {db} "
            "(nothing was written). Run the command from the folder the sweep "
            "logged to, or name its store with tracking.uri=sqlite:///<path>/"
            "mlflow.db (or set MLFLOW_TRACKING_URI)."
        )
    found = search_runs_for_report(
        tracking_uri=uri,
        experiment=sel["experiment"],
        sweep_id=sel["sweep_id"],
        run_ids=sel["run_ids"] or None,
        filter_string=sel["filter"],
    )
    if not found:
        given = {k: v for k, v in sel.items() if v}
        raise InputError(
            f"select: no run matches {given} in {uri}. A sweep's id is in its "
            "folder's recoeval_sweep.json and on its runs as the tag "
            "recoeval.sweep_id; tracking.uri must name the store it was logged to."
        )
    # a report run (tag recoeval.report=true, written by this command) holds no job
    found = [info for info in found if (info.get("tags") or {}).get("recoeval.report") != "true"]
    if not found:
        raise InputError(
            f"select: no run matches {sel} in {uri} but report runs; select the "
            "runs of a sweep or an experiment."
        )
    # a fair study's selection runs were evaluated on validation only: the report compares
    # the configurations each system chose, tested once
    chosen = [i for i in found if (i.get("tags") or {}).get("recoeval.phase") != "selection"]
    if len(chosen) < len(found):
        left, kept = len(found) - len(chosen), len(chosen)
        (progress or logger.info)(
            f"left out {left} selection run{'s' if left != 1 else ''} (evaluated on validation "
            f"only); comparing the {kept} configuration{'s' if kept != 1 else ''} chosen on "
            "validation and tested once"
        )
    found = chosen
    sweep = sweep_study(found, tracking_uri=uri)
    runs = []
    for info in found:
        folder = download_job_artifacts(
            info["run_id"], Path(workdir) / info["run_id"], tracking_uri=uri
        )
        runs.append(
            RunData.from_job_dir(
                folder,
                run_id=info["run_id"],
                name=info["run_name"] or info["run_id"],
                params=info["params"],
                tags=info["tags"],
                source=f"mlflow run {info['run_id']}",
            )
        )
        if sweep:
            runs[-1].study["sweep"] = sweep
    return runs, uri


def _popularity_features(runs: list, head: float):
    """Rebuild the runs' split from the first run's config to get each user's share of popular
    test items; the rebuilt split must have the runs' split fingerprint."""
    from ..reporting.slices import user_popularity_share
    from .pipeline import load_data, prepare_data, split_data

    first = runs[0]
    config = first.config
    if not config or "dataset" not in config or "split" not in config:
        raise InputError(
            f"{_PROG}: the popularity slice needs the runs' dataset and split "
            f"config (config.yaml of run {first.name}); it has none. Remove the "
            "popularity slice or select runs logged by recoeval-track."
        )
    X = prepare_data(load_data(config["dataset"]), config["dataset"])
    split = split_data(X, config["split"])
    if isinstance(split, list):
        fold = int(config["split"].get("fold", 0) or 0)
        split = split[fold]
    expected = first.fingerprints.get("split")
    if expected and split.fingerprint != expected:
        raise InputError(
            f"{_PROG}: the split rebuilt for the popularity slice has fingerprint "
            f"{split.fingerprint}, the runs were evaluated on {expected}; the "
            "data has changed. Remove the popularity slice."
        )
    return user_popularity_share(split.train, split.test, head=head)


def _replicates(cfg: Mapping[str, Any]) -> tuple[str | None, list[str] | None]:
    """``replicate_key`` (``auto``: seeds or folds that changed the split, detected per dataset
    by :func:`~recoeval_tracking.reporting.report.detect_replicate_key`; ``null``/empty: none)
    and ``group_by`` from the report config."""
    key = cfg.get("replicate_key", "auto")
    if key is not None and not isinstance(key, str):
        raise param_error("replicate_key", _PROG, "a param name, 'auto' or null", key)
    group_by = [str(g) for g in (cfg.get("group_by") or [])] or None
    return key or None, group_by


def _labels(value: Any) -> dict[str, str] | None:
    """The ``labels`` setting as ``{run name or id: label}`` (YAML may read a label as a
    number: it is shown as written); None when not given."""
    if value is None or value == {}:
        return None
    if not isinstance(value, Mapping):
        raise InputError(
            f"labels: expected a mapping {{<run name or id>: <label>}}, e.g. "
            f"'labels={{popularity: Most popular}}'; got {value!r}."
        )
    return {str(k): str(v) for k, v in value.items()}


def _rope(value: Any) -> Any:
    """The ``rope`` setting as :func:`~recoeval_tracking.reporting.compare.compare` takes it."""
    if isinstance(value, Mapping):
        return {str(k): v for k, v in value.items()}
    return value


def _check_rope_keys(value: Any, metrics: list[str]) -> None:
    """A per-metric ``rope`` naming no metric the report compares (``rope={nope_at_10:0.01}``)
    is refused: the rope it meant would be 0."""
    from ..reporting.equivalence import rope_metrics_text, unknown_rope_metrics

    unknown, close, known = unknown_rope_metrics(_rope(value), metrics)
    if unknown:
        raise InputError(
            "rope: expected a number, a percentage or a mapping whose keys are metrics the "
            f"report compares; got {', '.join(map(repr, unknown))}. The "
            + rope_metrics_text(unknown, close, known)
        )


def check_settings(cfg: Mapping[str, Any]) -> None:
    """The statistical settings checked before any run is read, each error naming its key."""
    from ..reporting.posthoc import POSTHOCS
    from ..reporting.report import TESTS
    from ..reporting.stats import FAMILIES
    from ..stats import CORRECTIONS, resolve_rope

    rope = _rope(cfg.get("rope"))
    for width in rope.values() if isinstance(rope, Mapping) else [] if rope is None else [rope]:
        try:
            resolve_rope(width, 1.0)
        except InputError:
            raise InputError(
                "rope: expected a number >= 0 (e.g. rope=0.01), a percentage of the baseline's "
                f"mean (rope=5%) or a dict metric -> either; got {rope!r}."
            ) from None
    checks = (
        ("correction", CORRECTIONS),
        ("test", TESTS),
        ("family", FAMILIES),
        ("posthoc", POSTHOCS),
    )
    for key, allowed in checks:
        if key in cfg and cfg[key] not in allowed:
            raise InputError(f"{key}: expected one of {', '.join(allowed)}; got {cfg[key]!r}.")
    n_perm = cfg.get("n_permutations", "auto")
    if n_perm != "auto" and (isinstance(n_perm, bool) or not isinstance(n_perm, int) or n_perm < 1):
        raise InputError(f"n_permutations: expected 'auto' or an integer >= 1; got {n_perm!r}.")
    for key in ("alpha", "confidence"):
        value = cfg.get(key, 0.5)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise InputError(f"{key}: expected a number strictly between 0 and 1; got {value!r}.")


def _say(progress: Callable[[str], None] | None, text: str) -> None:
    if progress is not None:
        progress(text)


def _step(progress: Callable[[str], None] | None, text: str, doing: str) -> Any:
    """Say ``text`` and, while the step runs, that it is still ``doing`` every 1.5 s."""
    from .._heartbeat import heartbeat

    _say(progress, text)
    return heartbeat(doing, progress) if progress is not None else contextlib.nullcontext()


def _refuse_links_out(out_dir: Path, path: Path, *, what: str) -> None:
    """Refuse ``path`` when it, or a folder between ``out_dir`` and it, is a symbolic link
    whose target lies outside ``out_dir`` (the report writes nothing outside ``output.dir``).

    Raises
    ------
    InputError
        Naming the link, where it points and the setting ``what``.
    """
    root = out_dir.resolve()
    chain = [path, *path.parents]
    for link in chain:
        if link == out_dir or link == root or not link.is_relative_to(out_dir):
            break
        if link.is_symlink():
            target = link.resolve()
            if not target.is_relative_to(root):
                raise InputError(
                    f"{what}: {link} is a symbolic link to {target}, outside output.dir "
                    f"({root}); the report writes nothing through it. Remove the link, or "
                    "choose another output.dir."
                )


def _refuse_figure_links_out(out_dir: Path, markdown: Path | None) -> None:
    """Refuse to write the Markdown page's figures (into ``<stem>_figures/`` beside it) when
    that folder, or a file in it, is a symbolic link leaving ``out_dir``: the figures would be
    written through it, outside ``output.dir``.

    Raises
    ------
    InputError
        Naming the link (``output.markdown`` decides where the figures go).
    """
    if markdown is None:
        return
    figures = markdown.parent / f"{markdown.stem}_figures"
    _refuse_links_out(out_dir, figures, what="output.markdown (its figures folder)")
    if figures.is_dir():
        for entry in sorted(figures.iterdir()):
            _refuse_links_out(out_dir, entry, what="output.markdown (a figure)")


def run_report(
    cfg: Mapping[str, Any],
    base_dir: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Build, write and log a report from a plain config (the layout of ``report.yaml``).

    Parameters
    ----------
    cfg : dict
        The report config as plain data.
    base_dir : str or Path, optional
        Relative paths (job directories, output) are taken from here (default: the cwd).
    progress : callable, optional
        Called with one line at each step (reading the runs, the statistics, the figures).

    Returns
    -------
    dict
        ``comparison`` (the :class:`~recoeval_tracking.reporting.compare.Comparison` the pages
        are built from, as :func:`recoeval_tracking.compare` returns it), ``report`` (its
        :class:`~recoeval_tracking.reporting.report.Report` over one dataset; the first
        dataset's over several), ``paths`` (html, markdown, figures, latex),
        ``logged_run_id`` (None when not logged).
    """
    from ..reporting.compare import compare
    from ..reporting.render import write_report
    from .precheck import check_tracking_uri

    if not isinstance(cfg, Mapping):
        raise param_error("cfg", "run_report", "a plain dict (the report config)", cfg)
    check_settings(cfg)
    base = Path(base_dir) if base_dir else Path.cwd()
    out_cfg = dict(cfg.get("output") or {})
    out_dir = Path(out_cfg.get("dir") or ".")
    out_dir = out_dir if out_dir.is_absolute() else base / out_dir
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(
            f"output.dir must be a folder (the report's pages are written into it); got "
            f"{str(out_cfg.get('dir'))!r}, which is a file ({out_dir}). Name a folder, new or "
            "existing."
        )
    targets: dict[str, Path | None] = {}
    for key in ("html", "markdown", "latex"):  # the pages stay inside output.dir
        name = out_cfg.get(key)
        targets[key] = None
        if name:
            _refuse_links_out(out_dir, out_dir / name, what=f"output.{key}")
            resolve_under(out_dir, name, what=f"output.{key}")
            targets[key] = out_dir / name
    _refuse_figure_links_out(out_dir, targets["markdown"])
    artifact_path = out_cfg.get("artifact_path")
    problem = artifact_path_problem(artifact_path) if artifact_path else None
    if problem:
        raise InputError(
            "output.artifact_path: expected a folder inside the run's MLflow artifacts (e.g. "
            f"report, the default); got {str(artifact_path)!r}: {problem}. Give a relative "
            "name without '..', or output.log_to_mlflow=false to log nothing."
        )
    check_tracking_uri((dict(cfg.get("tracking") or {})).get("uri"))  # before MLflow reads it
    uri_given = (dict(cfg.get("tracking") or {})).get("uri") or os.environ.get(
        "MLFLOW_TRACKING_URI"
    )
    with tempfile.TemporaryDirectory(prefix="recoeval-report-") as tmp, _server_calls(uri_given):
        with _step(progress, "reading the selected runs...", "reading the runs"):
            runs, uri = load_runs(cfg, tmp, base, progress)
        with _step(
            progress,
            f"{len(runs)} runs read; computing intervals and paired tests...",
            "computing the statistics",
        ):
            slices = [dict(s) for s in (cfg.get("slices") or [])]
            features = None
            if any(s.get("kind") == "popularity" for s in slices):
                features = _popularity_features(runs, float(cfg.get("popularity_head", 0.2)))
            replicate_key, group_by = _replicates(cfg)
            dataset_key = cfg.get("dataset_key", "auto")
            comparison = compare(
                runs,
                cfg.get("baseline") or None,
                metrics=list(cfg.get("metrics") or []) or None,
                slices=slices,
                correction=str(cfg.get("correction", "holm")),
                test=str(cfg.get("test", "t")),
                n_permutations=cfg.get("n_permutations", "auto"),
                family=str(cfg.get("family", "metric")),
                n_bootstrap=int(cfg.get("n_bootstrap", 1000)),
                seed=int(cfg.get("seed", 0)),
                confidence=float(cfg.get("confidence", 0.95)),
                alpha=float(cfg.get("alpha", 0.05)),
                allow_mismatch=bool(cfg.get("allow_mismatch", False)),
                user_features=features,
                lower_is_better=tuple(cfg.get("lower_is_better") or ()),
                labels=_labels(cfg.get("labels")),
                config={k: v for k, v in cfg.items() if k != "hydra"},
                replicate_key=replicate_key,
                group_by=group_by,
                dataset_key=str(dataset_key) if dataset_key else None,
                rope=_rope(cfg.get("rope")),
                posthoc=str(cfg.get("posthoc", "wilcoxon")),
            )
    _check_rope_keys(cfg.get("rope"), comparison.metrics)
    report = next(iter(comparison.reports.values()))
    _refuse_figure_links_out(out_dir, targets["markdown"])  # again: the statistics took a while
    with _step(progress, "drawing the figures and writing the pages...", "writing the pages"):
        paths = write_report(
            comparison,
            targets["html"],
            targets["markdown"],
            latex_path=targets["latex"],
            title=str(out_cfg.get("title") or "Run comparison"),
        )
    logged = None
    if uri is not None and out_cfg.get("log_to_mlflow", True):
        _say(progress, "logging the report to MLflow...")
        from ..tracking.search import find_sweep_parent, log_report_artifacts

        sweep_id = _selection(cfg)["sweep_id"]
        with _server_calls(uri):
            parent = find_sweep_parent(sweep_id, tracking_uri=uri) if sweep_id else None
        tracking = dict(cfg.get("tracking") or {})
        with _server_calls(uri):
            logged = log_report_artifacts(
                list(paths.values()),
                run_id=parent,
                tracking_uri=uri,
                experiment=str(tracking.get("experiment") or "recoeval"),
                run_name=f"report-{sweep_id}" if sweep_id else "report",
                artifact_path=out_cfg.get("artifact_path") or None,
                tags={
                    "recoeval.report_baseline": report.baseline,
                    "recoeval.report_runs": ",".join(
                        r.run_id for rep in comparison.reports.values() for r in rep.runs
                    ),
                },
            )
    return {"comparison": comparison, "report": report, "paths": paths, "logged_run_id": logged}


_failed: list[BaseException] = []


def _task(cfg: Any) -> None:
    """The Hydra task; an error is kept for :func:`main` to report (raised out of the task,
    Hydra would log its own "Error executing job" line first)."""
    try:
        _report_task(cfg)
    except Exception as err:
        if os.environ.get("RECOEVAL_REPORT_FULL_ERROR") == "1":
            raise
        _failed.append(err)


def _report_task(cfg: Any) -> None:
    from hydra.core.hydra_config import HydraConfig
    from omegaconf import OmegaConf

    plain = OmegaConf.to_container(cfg, resolve=True)
    base = Path(HydraConfig.get().runtime.cwd)
    result = run_report(
        plain, base, progress=lambda text: print(f"{_PROG}: {text}", file=sys.stderr, flush=True)
    )
    for kind, path in result["paths"].items():
        print(f"{_PROG}: {kind}: {path}")
    if result["logged_run_id"]:
        print(f"{_PROG}: logged as artifacts of run {result['logged_run_id']}")
    for line in _left_out_lines(result["comparison"]):
        print(f"{_PROG}: {line}", file=sys.stderr)


def _left_out_lines(comparison: Any) -> list[str]:
    """The terminal's lines on what the report left out: runs that are not comparable, then
    :func:`~recoeval_tracking.reporting.left_out.left_out_lines` (the metrics compared
    for no run in one line, as the page's intro says them; each other left-out once)."""
    from ..reporting.left_out import left_out_lines

    lines = []
    for ds, report in comparison.reports.items():
        where = f" (dataset {ds})" if ds else ""
        if report.mismatches:
            lines.append(f"WARNING: runs not comparable{where}: {'; '.join(report.mismatches)}")
        lines += left_out_lines(report, where)
    return lines


def main() -> None:
    """Console entry point of ``recoeval-track-report``."""
    import hydra

    from .stages import quick_exit

    quick_exit()

    from .errors import EXIT_FAILURE, bug_message, run_error_message, user_error_message
    from .report_config import (
        CONFIG_DIR,
        register_report_schema,
        report_input_key,
        report_key_hint,
    )

    full_error = os.environ.get("HYDRA_FULL_ERROR") == "1"
    os.environ["HYDRA_FULL_ERROR"] = "1"
    if full_error:
        os.environ["RECOEVAL_REPORT_FULL_ERROR"] = "1"
    register_report_schema()
    _failed.clear()
    app = hydra.main(version_base="1.3", config_path=str(CONFIG_DIR), config_name="report")(_task)
    try:
        app()
        if _failed:
            raise _failed[0]
    except Exception as err:
        if full_error:
            raise
        if isinstance(err, StoreUnreachable):
            print(f"{_PROG}: {err}", file=sys.stderr)
            sys.exit(EXIT_FAILURE)
        message = user_error_message(err, _PROG, report_key_hint)
        if message is None and isinstance(err, OSError):  # writing the pages: disk, permission
            failed = run_error_message(err) or str(err)
            print(failed.replace("recoeval-track:", f"{_PROG}:", 1), file=sys.stderr)
            sys.exit(EXIT_FAILURE)
        key = report_input_key(str(err)) if isinstance(err, InputError) else None
        if key is not None:  # the library's parameter is this setting of the report
            message = (
                f"{_PROG}: {key}: {' '.join(str(err).split())} Change {key}=... on the command "
                f"line; `{_PROG} --cfg job` prints the composed config with every setting."
            )
        if message is None:
            print(bug_message(err).replace("recoeval-track:", f"{_PROG}:", 1), file=sys.stderr)
            sys.exit(EXIT_FAILURE)
        print(message, file=sys.stderr)
        sys.exit(2)
    finally:
        if not full_error:
            os.environ.pop("HYDRA_FULL_ERROR", None)


if __name__ == "__main__":
    main()
