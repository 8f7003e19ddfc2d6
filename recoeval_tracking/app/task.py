"""The Hydra task of one job of the app: :func:`run_task` and what it needs.

:func:`run_task` is the task function of ``recoeval-track`` (its console entry point,
:mod:`recoeval_tracking.app.cli`, wraps it in ``hydra.main``) and the job the recoeval sweeper
(``hydra/sweeper=recoeval``) runs for the baselines of a sweep in a Hydra app of the user's own.
It turns the composed config into the plain settings ``run_job`` takes: group options named on a
re-run's command line composed (:func:`option_node`), 64-bit integers checked, relative data
paths pinned, secrets from the environment registered for redaction. Where the configs are found
(:func:`config_path`) lives here too, since composing an option reads them. Neither the entry
point nor the sweeper is imported from here, so both can import this module.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from .errors import PROG, error_message

__all__ = [
    "run_task",
    "config_path",
    "option_node",
    "redact_logs",
    "CONFIG_PACKAGE",
    "log_job_error",
]

#: The package that holds the configs once installed.
CONFIG_PACKAGE = "recoeval_tracking.configs"
_PROG = PROG
_INT64 = (-(2**63), 2**63 - 1)


def config_path() -> str:
    """Where Hydra looks for the configs: ``pkg://recoeval_tracking.configs`` when that package
    is importable (any regular install), else the ``configs/`` folder of the source tree."""
    try:
        spec = importlib.util.find_spec(CONFIG_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        return f"pkg://{CONFIG_PACKAGE}"
    source = Path(__file__).resolve().parents[2] / "configs"
    if (source / "config.yaml").is_file():
        return str(source)
    raise RuntimeError(
        f"{_PROG}: the configs were not found: neither the package "
        f"{CONFIG_PACKAGE} nor the folder {source} exists. Reinstall the package "
        "(pip install recoeval_tracking)."
    )


_single_run_error: list[tuple[int, str]] = []


def _check_int_range(node: Any, key: str = "") -> None:
    """Every integer of the composed config fits in 64 bits (OmegaConf takes any size; numpy and
    numba would fail later with a raw error)."""
    from .._validation import InputError

    if isinstance(node, dict):  # this level's own values first: `seed`, not `dataset.seed`
        for k, v in sorted(node.items(), key=lambda kv: isinstance(kv[1], (dict, list))):
            _check_int_range(v, f"{key}.{k}" if key else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _check_int_range(v, f"{key}[{i}]")
    elif (
        isinstance(node, int) and not isinstance(node, bool) and not _INT64[0] <= node <= _INT64[1]
    ):
        raise InputError(
            f"{key}: the value {node} is out of the 64-bit integer range "
            f"[{_INT64[0]}, {_INT64[1]}]. Give a smaller value."
        )


def redact_logs() -> None:
    """Pass the message of every log record of this process through
    :func:`~recoeval_tracking.jobdir.redact.scrub_text` (Hydra's launchers log each job's
    overrides, credentials included, to the terminal). Installed once per process."""
    import logging

    from ..jobdir.redact import scrub_text

    previous = logging.getLogRecordFactory()
    if getattr(previous, "recoeval_redacting", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = previous(*args, **kwargs)
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a record that cannot be formatted is left as is
            return record
        clean = scrub_text(message)
        if clean != message:
            record.msg, record.args = clean, ()
        return record

    factory.recoeval_redacting = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(factory)


def run_task(cfg: Any) -> dict[str, Any] | None:
    """The Hydra task: the resolved config as a plain dict, handed to ``run_job``. It also runs
    the baseline jobs of a sweep in a Hydra app of the user's own (``hydra/sweeper=recoeval``).
    """
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    from ..jobdir.redact import add_secret_values, env_interpolated_values
    from .callbacks import job_sweep_record
    from .job_name import check_hydra_job_name
    from .pipeline import run_job
    from .user_model import check_model_allowed

    redact_logs()  # in a joblib worker too
    hc = HydraConfig.get()
    multirun = hc.mode == RunMode.MULTIRUN
    if (
        not multirun
        and OmegaConf.select(cfg, "baselines", default=None)
        and OmegaConf.select(cfg, "baseline_rank", default=None) is None
    ):
        print(
            f"{_PROG}: baselines={list(cfg.baselines)} runs beside a sweep's grid: this "
            "single run evaluates its own model only. Add -m to run the baselines too.",
            file=sys.stderr,
            flush=True,
        )
    try:
        check_hydra_job_name()  # a run start that no callback checked (another sweeper's job)
        _expand_group_choices(cfg)
        plain = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
        # values taken from the environment (${oc.env:...}) are written nowhere
        add_secret_values(env_interpolated_values(OmegaConf.to_container(cfg), plain))
        settings = plain if isinstance(plain, dict) else {}
        # before anything is built: the text of each _target_, then the object it resolves to
        check_model_allowed(
            settings.get("model"),
            settings.get("model_allow"),
            base_dir=Path(hc.runtime.cwd),
            label=hc.runtime.choices.get("model"),
        )
        _check_int_range(plain)
        _pin_paths(cfg, plain, Path(hc.runtime.cwd), hc)
        sweep = job_sweep_record(hc)
        return run_job(
            plain,
            Path(hc.runtime.output_dir),
            overrides=list(hc.overrides.task),
            sweep=sweep,
            base_dir=Path(hc.runtime.cwd),
            model_label=hc.runtime.choices.get("model"),
        )
    except Exception as err:
        from .errors import EXIT_FAILURE

        found = error_message(err)
        log = log_job_error(Path(hc.runtime.output_dir), f"{hc.job.name}.log", err, found)
        if multirun:
            _say_job_failed(hc.job.num, err, found, log)
            raise  # a sweep job must fail (Hydra marks it FAILED); main() prints the message
        if found is None:
            raise
        if found[0] == EXIT_FAILURE:  # a usage error's message says what to change, no more
            found = (found[0], f"{found[1]} {_kept_where(log, 'Nothing was recorded in MLflow')}")
        _single_run_error.append(found)
        return None


def _kept_where(log: Path | None, head: str) -> str:
    """``head``, then where the job folder keeps the error (when it was written there)."""
    return f"{head}; {log} keeps this message." if log else f"{head}."


def log_job_error(
    job_dir: Path, log_name: str, err: BaseException, found: tuple[int, str] | None
) -> Path | None:
    """Write why a job failed into its folder's log (``recoeval.log``), so that the folder,
    opened later, says it: the message the terminal showed, the error's type and message, and
    ``file:line in function`` of the innermost frame of the user's code (for an error with no
    known cause, its whole traceback). Appended to the log files Hydra's file handlers opened
    in the folder, in their format (not to the terminal: it has its own line), else to
    ``job_dir/log_name``.
    Returns the log's path, or None when the folder does not exist or cannot be written."""
    import logging
    import traceback

    from ..jobdir.redact import scrub_text
    from ..models import ModelCodeError
    from ..models._user import raised_where
    from .errors import bug_message

    cause = err.__cause__ if isinstance(err, ModelCodeError) and err.__cause__ else err
    ours = type(cause).__module__.startswith("recoeval_tracking")  # its message says it all
    where = getattr(err, "where", "") or ("" if ours else raised_where(cause))
    if "recoeval_tracking/" in where.replace("\\", "/"):
        where = ""  # no frame of the user's code: the package's own is no help to them
    said = found[1] if found else bug_message(err)
    lines = [f"the job failed: {said.removeprefix(f'{_PROG}: ')}"]
    if not ours and f"{type(cause).__name__}:" not in said:
        lines.append(f"error: {type(cause).__name__}: {' '.join(str(cause).split())}")
    if found is None:  # a bug: the traceback the terminal leaves out
        lines.append("".join(traceback.format_exception(err)).rstrip())
    elif where:  # the user's frame as a traceback shows it, with its line of code
        frames = [
            f
            for f in traceback.extract_tb(cause.__traceback__)
            if f"{f.filename}:{f.lineno} in {f.name}" == where
        ]
        shown = traceback.format_list(frames[-1:]) if frames else [f"  at {where}\n"]
        lines.append("innermost frame of the user's code:\n" + "".join(shown).rstrip())
    text = scrub_text("\n".join(lines))
    if not job_dir.is_dir():
        return None
    folder = job_dir.resolve()
    handlers = [
        h
        for h in logging.getLogger().handlers
        if isinstance(h, logging.FileHandler) and Path(h.baseFilename).parent == folder
    ]
    record = logging.getLogger(__name__).makeRecord(
        __name__, logging.ERROR, __file__, 0, text, (), None
    )
    plain = logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s")
    # each log's own line format; written here, not by the handler, which would swallow a
    # failed write (a full disk) and print its own traceback
    logs = [(Path(h.baseFilename), h.formatter or plain) for h in handlers]
    try:
        for path, form in logs or [(folder / log_name, plain)]:
            with path.open("a", encoding="utf-8") as out:
                out.write(form.format(record) + "\n")
    except OSError:
        return None
    return logs[0][0] if logs else folder / log_name


def _say_job_failed(
    num: Any, err: BaseException, found: tuple[int, str] | None, log: Path | None = None
) -> None:
    """Say at once that a job of a sweep failed and why, in one paragraph: the sweep's own
    failure comes only once its launched jobs have run, and the jobs after this one would
    otherwise hide it. ``log``: where the job's folder keeps the message."""
    from ..jobdir.redact import scrub_text

    why = found[1].removeprefix(f"{_PROG}: ") if found else f"{type(err).__name__}: {err}"
    why = " ".join(why.split())
    why = why if len(why) <= 600 else why[:599].rstrip() + "…"
    print(
        scrub_text(
            f"{_PROG}: job #{num} of the sweep failed: {why} "
            + _kept_where(log, "Nothing of this job was recorded in MLflow")
            + " The sweep goes on, and fails once the jobs launched with it have run."
        ),
        file=sys.stderr,
        flush=True,
    )


def option_node(group: str, option: str) -> Any:
    """The config node of ``option`` in ``group`` as Hydra composes it (the structured schema its
    YAML extends, then the YAML's own keys), or None when there is no such option. Every option
    YAML has the form ``defaults: [/schema/<group>/<schema>@_here_, _self_]`` then its keys."""
    import yaml
    from omegaconf import OmegaConf

    from .schema import SCHEMAS

    try:
        if config_path().startswith("pkg://"):
            from importlib.resources import files

            text = (files(CONFIG_PACKAGE) / group / f"{option}.yaml").read_text(encoding="utf-8")
        else:
            text = (Path(config_path()) / group / f"{option}.yaml").read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None
    body = yaml.safe_load(text) or {}
    schema = None
    for entry in body.pop("defaults", []) or []:
        name = str(entry).split("@", 1)[0].strip("/").split("/")
        if len(name) == 3 and name[0] == "schema" and name[1] == group:
            schema = SCHEMAS.get(group, {}).get(name[2])
    base = OmegaConf.structured(schema) if schema is not None else OmegaConf.create({})
    return OmegaConf.merge(base, body)


def _expand_group_choices(cfg: Any) -> None:
    """A group option named on the command line of a re-run (``tracking=none`` with
    ``--config-path <job>/.hydra``) replaced by that option's config node.

    The saved config of a job is fully composed, with no defaults list: Hydra then takes
    ``tracking=none`` for a plain value and the section becomes the text ``"none"``. Every
    section of a config group is a mapping, so a text there is an option's name: it is
    composed here as Hydra would have composed it. An unknown name fails naming the setting.
    """
    from omegaconf import OmegaConf, open_dict

    from .._validation import InputError
    from .schema import SCHEMAS

    for group in SCHEMAS:
        if group not in cfg:
            continue
        value = OmegaConf.select(cfg, group, throw_on_missing=False)
        if not isinstance(value, str):
            continue
        node = option_node(group, value)
        if node is None:
            raise InputError(
                f"{group}: no option {value!r} in the config group {group!r}. "
                f"Run {_PROG} --help for the options of each group."
            )
        with open_dict(cfg):
            cfg[group] = node


def _pin_paths(cfg: Any, plain: dict[str, Any], base: Path, hc: Any) -> None:
    """Relative file paths of the data and model sections (``dataset.path``...) made absolute
    from the start directory, in the job's config and in the saved ``.hydra/config.yaml``, so
    that the documented re-run (``--config-path <job>/.hydra``) works from any directory."""
    from omegaconf import OmegaConf, open_dict

    changed = False
    for section in ("dataset", "model"):
        part = plain.get(section)
        if not isinstance(part, dict):
            continue
        for key, value in part.items():
            if (
                (key == "path" or key.endswith("_path"))
                and isinstance(value, str)
                and value
                and "://" not in value
                and not Path(value).expanduser().is_absolute()
            ):
                part[key] = str((base / value).resolve())
                with open_dict(cfg):
                    cfg[section][key] = part[key]
                changed = True
    subdir = OmegaConf.select(hc, "output_subdir")
    saved = Path(hc.runtime.output_dir) / str(subdir) / "config.yaml" if subdir else None
    if changed and saved is not None and saved.is_file():
        OmegaConf.save(cfg, saved)
