"""The MLflow connection: tracking URI, client, experiment, fast-fail HTTP, clean params and tags.

Every module of :mod:`recoeval_tracking.tracking` reaches MLflow through :func:`_client`; mlflow
itself is imported only inside functions (``import mlflow`` costs about 2 s).

Secrets (rule in :mod:`recoeval_tracking.jobdir.redact`): a param or tag whose key's last dotted
component names a credential (password, token, secret, key...) is dropped; every value goes
through :func:`~recoeval_tracking.jobdir.redact.scrub_text` (URL passwords, Hydra-escaped ones
included, secret query parameters and ``key=value`` assignments). Credentials for a server come from MLflow's own environment variables
(``MLFLOW_TRACKING_USERNAME``/``MLFLOW_TRACKING_PASSWORD`` or ``MLFLOW_TRACKING_TOKEN``), which
this package never reads or logs.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._validation import artifact_path_problem, check_optional, param_error
from ..jobdir.markers import file_lock
from ..jobdir.redact import flatten_config, is_secret_key, sanitize_key, scrub_text

__all__ = [
    "DEFAULT_EXPERIMENT",
    "resolve_tracking_uri",
    "flatten_config",
    "params_from_config",
    "run_name_from_overrides",
]

DEFAULT_EXPERIMENT = "recoeval"

#: The experiment's description (MLflow's ``mlflow.note.content`` tag), shown above its runs. The
#: UI folds it to its first line, a header: that line is a sentence that reads alone, the rest
#: below it (:data:`DESCRIPTION_HEAD`).
DESCRIPTION_HEAD = (
    "Evaluations of recommenders by recoeval-track: one run per job, a sweep's jobs under its "
    "parent run."
)
EXPERIMENT_DESCRIPTION = (
    DESCRIPTION_HEAD + "\n\n"
    "Each run is one job (model x data x split). Metrics: means at K (ndcg_at_10...), curves "
    "over k (ndcg_at_k, step = k), timings; their 95% intervals are in the tag recoeval.ci95. "
    "Params: the config chosen; artifacts: per-user results, definitions.json, plots. A sweep's "
    "parent run holds its leaderboard. Compare runs with recoeval-track-report."
)

_TAG_PREFIX = "recoeval."
_MAX_PARAM_CHARS = 6000
_MAX_TAG_CHARS = 5000
_TERMINAL = ("FINISHED", "FAILED", "KILLED")
_TRACKING_KEY_PREFIXES = ("tracking.", "hydra.", "mlflow.")


# ---------------------------------------------------------------------------------------------
# URIs, clients, experiments
# ---------------------------------------------------------------------------------------------


def resolve_tracking_uri(uri: str | None = None) -> str:
    """The tracking URI to use: ``uri`` if given, else ``MLFLOW_TRACKING_URI``, else the local
    SQLite store ``sqlite:///<cwd>/mlflow.db`` (absolute, so a later ``cd`` changes nothing).

    MLflow 3 refuses its old ``./mlruns`` file store unless told otherwise and switches to it by
    itself when ``./mlruns`` holds data, so the URI is always set explicitly.
    """
    if uri is not None and not isinstance(uri, str):
        raise param_error("uri", "resolve_tracking_uri", "a str (a tracking URI) or None", uri)
    if uri:
        return uri
    env = os.environ.get("MLFLOW_TRACKING_URI", "").strip()
    if env:
        return env
    return f"sqlite:///{(Path.cwd() / 'mlflow.db').resolve()}"


def _default_artifact_location(uri: str) -> str | None:
    """Artifacts of a SQLite store live beside the database (``<db dir>/mlartifacts``)."""
    if uri.startswith("sqlite:///"):
        db = Path(uri[len("sqlite:///") :])
        if not db.is_absolute():
            db = Path.cwd() / db
        return (db.resolve().parent / "mlartifacts").as_uri()
    return None


def _sqlite_path(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` URI (None for other stores and in-memory ones)."""
    if not uri.startswith("sqlite:///"):
        return None
    text = uri[len("sqlite:///") :].split("?", 1)[0]
    if not text or text == ":memory:":
        return None
    path = Path(text)
    return path if path.is_absolute() else Path.cwd() / path


_ready_stores: set[str] = set()


def _client(uri: str):
    """An :class:`MlflowClient` for ``uri``. A SQLite store is opened once per process under a
    lock beside the database (``mlflow.db.lock``): MLflow creates the schema of a new database
    on first use, and two processes doing it at once leave it broken for good."""
    from mlflow.tracking import MlflowClient

    if scrub_text(uri) != uri:
        # MLflow prints "View run at <tracking URI>/..." when a run ends; with a password in the
        # URI that would print it: turn those links off (unless the user chose otherwise).
        os.environ.setdefault("MLFLOW_SUPPRESS_PRINTING_URL_TO_STDOUT", "true")
    db = _sqlite_path(uri)
    if db is None or uri in _ready_stores:
        return MlflowClient(tracking_uri=uri)
    db.parent.mkdir(parents=True, exist_ok=True)
    with (
        file_lock(db.with_name(db.name + ".lock"), what=f"the MLflow store {db}"),
        quiet_store_creation(),
    ):
        client = MlflowClient(tracking_uri=uri)  # opens the store: creates a new schema
        client.search_experiments(max_results=1)
    _ready_stores.add(uri)
    return client


#: The loggers of MLflow's schema creation and migration: at INFO they print "Creating initial
#: MLflow database tables...", "Updating database tables" and alembic's steps to the terminal.
STORE_CREATION_LOGGERS = ("mlflow.store.db.utils", "alembic")


@contextlib.contextmanager
def quiet_store_creation() -> Iterator[None]:
    """While a store is opened (a new SQLite one gets its schema): MLflow's and alembic's INFO
    lines of the schema's creation silenced (their loggers at WARNING, so their warnings and
    errors still show; this package's own loggers untouched), their levels restored after."""
    import logging

    loggers = [logging.getLogger(name) for name in STORE_CREATION_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        if lg.getEffectiveLevel() < logging.WARNING:
            lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _experiment_id(client, name: str, artifact_location: str | None, uri: str) -> str:
    from mlflow.exceptions import MlflowException

    exp = client.get_experiment_by_name(name)
    if exp is None:
        location = artifact_location or _default_artifact_location(uri)
        try:
            return client.create_experiment(
                name,
                artifact_location=location,
                tags={
                    "mlflow.experimentKind": "custom_model_development",
                    "mlflow.note.content": EXPERIMENT_DESCRIPTION,
                },
            )
        except MlflowException as err:  # created meanwhile by a parallel job
            exp = client.get_experiment_by_name(name)
            if exp is None:
                raise err
    if exp.tags.get("mlflow.experimentKind") != "custom_model_development":
        client.set_experiment_tag(
            exp.experiment_id, "mlflow.experimentKind", "custom_model_development"
        )
    if "mlflow.note.content" not in exp.tags:
        client.set_experiment_tag(exp.experiment_id, "mlflow.note.content", EXPERIMENT_DESCRIPTION)
    return exp.experiment_id


def _run_exists(client, run_id: str) -> bool:
    """Whether the store holds ``run_id`` (connection errors propagate)."""
    from mlflow.exceptions import MlflowException
    from mlflow.protos.databricks_pb2 import (
        INVALID_PARAMETER_VALUE,
        RESOURCE_DOES_NOT_EXIST,
        ErrorCode,
    )

    try:
        client.get_run(run_id)
        return True
    except MlflowException as err:
        if err.error_code in (
            ErrorCode.Name(RESOURCE_DOES_NOT_EXIST),
            ErrorCode.Name(INVALID_PARAMETER_VALUE),
        ):
            return False
        raise


def _check_texts(func: str, **values: Any) -> None:
    """Each of ``values`` (the argument's name -> its value) is a str or None, else an
    :class:`~recoeval_tracking.InputError` naming the argument and ``func``."""
    for name, value in values.items():
        check_optional(value, str, name, func)


def _check_destination(
    func: str,
    run_id: str | None,
    tracking_uri: str | None,
    run_name: str | None,
    artifact_path: str | None,
) -> None:
    """The arguments that say where files are logged (an existing run or a new one, and the
    folder of its artifacts): texts or None, and ``artifact_path`` a folder inside the run's
    artifacts (MLflow refuses an absolute one or one with ``..`` only after the run exists)."""
    _check_texts(
        func,
        run_id=run_id,
        tracking_uri=tracking_uri,
        run_name=run_name,
        artifact_path=artifact_path,
    )
    problem = artifact_path_problem(artifact_path) if artifact_path else None
    if problem:
        raise param_error(
            "artifact_path",
            func,
            "a folder inside the run's artifacts (a relative name such as 'report')",
            f"{artifact_path!r} ({problem})",
            got_is_text=True,
        )


def _now_ms() -> int:
    return int(time.time() * 1000)


@contextlib.contextmanager
def _fast_fail_http(
    max_retries: int = 1, timeout: int = 10, backoff_factor: int = 1
) -> Iterator[None]:
    """Lower MLflow's HTTP retries and timeout during an attempt (unless the user set them), so a
    dead server fails in seconds, not minutes (defaults: 7 retries with backoff, 120 s timeout).
    """
    wanted = {
        "MLFLOW_HTTP_REQUEST_MAX_RETRIES": str(max_retries),
        "MLFLOW_HTTP_REQUEST_TIMEOUT": str(timeout),
        "MLFLOW_HTTP_REQUEST_BACKOFF_FACTOR": str(backoff_factor),
    }
    saved = {}
    for key, value in wanted.items():
        if key not in os.environ:
            saved[key] = None
            os.environ[key] = value
    try:
        yield
    finally:
        for key in saved:
            os.environ.pop(key, None)


def _first_line(err: BaseException) -> str:
    """``<Type>: <first line of the message>``, URL passwords removed, at most 500 characters."""
    text = str(err).strip().splitlines()
    msg = text[0] if text else ""
    return scrub_text(f"{type(err).__name__}: {msg}")[:500]


# ---------------------------------------------------------------------------------------------
# Arguments, params, tags, names
# ---------------------------------------------------------------------------------------------


def _clean_params(params: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for key, value in params.items():
        if is_secret_key(str(key)):
            continue
        text = scrub_text(str(value))
        if len(text) > _MAX_PARAM_CHARS:
            text = text[: _MAX_PARAM_CHARS - 15] + "...[truncated]"
        out[sanitize_key(str(key))] = text
    return out


def _clean_tags(tags: Mapping[str, Any]) -> dict[str, str]:
    out = {}
    for key, value in tags.items():
        if value is None or is_secret_key(str(key)):
            continue
        text = scrub_text(str(value))
        out[sanitize_key(str(key))] = text[:_MAX_TAG_CHARS]
    return out


def params_from_config(
    config: Mapping[str, Any] | None, params: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """MLflow params for a run: ``config`` flattened to dotted keys, then ``params`` (flattened
    too, winning on clashes); secret keys dropped, URL passwords removed, values truncated to
    6000 characters (MLflow's limit).

    Examples
    --------
    >>> params_from_config({"tracking": {"uri": "http://u:pw@h", "password": "x"},
    ...                     "metrics": {"k": 10}})
    {'tracking.uri': 'http://u:<redacted>@h', 'metrics.k': '10'}
    """
    flat: dict[str, Any] = {}
    if config:
        flat.update(flatten_config(config))
    if params:
        if not isinstance(params, Mapping):
            raise param_error("params", "params_from_config", "a mapping or None", params)
        flat.update(flatten_config(params))
    return _clean_params(flat)


def run_name_from_overrides(
    overrides: Sequence[str] | None, exclude_prefixes: Sequence[str] = _TRACKING_KEY_PREFIXES
) -> str | None:
    """A run name from Hydra overrides, leaving tracking keys and secrets out.

    ``["model=als", "model.factors=64", "tracking.uri=http://..."]`` -> ``"model=als,
    model.factors=64"``. Returns None when nothing is left.
    """
    if not overrides:
        return None
    parts = []
    for item in overrides:
        text = str(item)
        key = text.split("=", 1)[0].lstrip("+~")
        if key.startswith(tuple(exclude_prefixes)) or key in {
            p.rstrip(".") for p in exclude_prefixes
        }:
            continue
        if is_secret_key(key):
            continue
        parts.append(scrub_text(text))
    return ",".join(parts)[:250] or None
