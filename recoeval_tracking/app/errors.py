"""The error path of ``recoeval-track``: one paragraph for every error, and its exit status.

:func:`error_message` sorts an error into a usage error (exit 2: a bad override, a bad value the
library refuses; :func:`user_error_message` names the config key to change) or a failure while
running (exit 1: a full disk, an unreadable file, no memory, a lock held too long;
:func:`run_error_message`); anything else is a bug, reported in one line by
:func:`bug_message`. No message holds a traceback; ``HYDRA_FULL_ERROR=1`` shows it instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "user_error_message",
    "run_error_message",
    "error_message",
    "bug_message",
    "SweepJobError",
    "SweepJobsFailed",
    "composition_key",
    "EXIT_USAGE",
    "EXIT_FAILURE",
    "PROG",
    "NothingEvaluated",
    "refuse_nothing_evaluated",
    "NOTHING_EVALUATED",
]

#: Exit status of a run stopped by a bad config value or override.
EXIT_USAGE = 2
#: Exit status of a run that failed while running (a full disk...) or on a bug.
EXIT_FAILURE = 1
PROG = _PROG = "recoeval-track"
#: The start of the Python API's warning that no user was evaluated (the app raises instead).
NOTHING_EVALUATED = r"evaluate evaluated no"


class NothingEvaluated(RuntimeError):
    """The evaluation gave no user a defined metric: every mean is NaN. The job fails (exit 1)
    instead of recording a table of NaN; the message counts the users by NaN reason."""


def refuse_nothing_evaluated(results: object) -> None:
    """Raise :class:`NothingEvaluated` when no user of ``results`` was evaluated
    (:func:`recoeval_tracking.metrics.results.nothing_evaluated`)."""
    from ..metrics.results import nothing_evaluated

    message = nothing_evaluated(results, "the evaluation")
    if message is not None:
        raise NothingEvaluated(
            message.replace("the evaluation evaluated", "The evaluation evaluated", 1)
        )  # what was recorded is said once, by the job's failure (app.task)


def _one_line(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).strip()


def _full_key(text: str) -> str | None:
    m = re.search(r"full_key:\s*(\S+)", str(text))
    return m.group(1) if m else None


_SEE_CFG = f"`{_PROG} --cfg job` prints the composed config with every setting."


def _key_hint(key: str) -> str:
    """What to change for an unknown key: the group options that have it, or close spellings."""
    import dataclasses
    import difflib

    from .schema import SCHEMAS, Config

    group, _, leaf = key.partition(".")
    if group in SCHEMAS and leaf:
        fields_of = {
            opt: {f.name for f in dataclasses.fields(node)} for opt, node in SCHEMAS[group].items()
        }
        having = [opt for opt, names in fields_of.items() if leaf in names]
        having += [o for o in _own_options_having(group, leaf) if o not in having]
        if having and len(SCHEMAS[group]) > 1:
            return (
                f"It belongs to {group}={' / '.join(having)}: pick that option "
                f"({group}={having[0]} {key}=...). {_SEE_CFG}"
            )
        known = sorted(set().union(*fields_of.values()))
        close = difflib.get_close_matches(leaf, known, n=3)
        own = (
            f" A model config of your own (with _target_) takes the keys its file lists; "
            f"add a new one with +{key}=<value>."
            if group == "model"
            else ""
        )
        if close:
            return f"Did you mean {', '.join(f'{group}.{c}' for c in close)}?{own} {_SEE_CFG}"
        return f"Check the spelling.{own} {_SEE_CFG}"
    known = [f.name for f in dataclasses.fields(Config)]
    close = difflib.get_close_matches(key, known, n=3)
    if close:
        return f"Did you mean {', '.join(close)}? {_SEE_CFG}"
    return f"Check the spelling. {_SEE_CFG}"


def _own_options_having(group: str, leaf: str) -> list[str]:
    """The options of ``group`` in the user's ``--config-dir`` folders (``-cd``) whose YAML
    sets ``leaf`` at its top level (``cosknn`` for ``model.neighbours``)."""
    import sys

    import yaml

    argv, folders = sys.argv[1:], []
    for i, arg in enumerate(argv):
        if arg in ("--config-dir", "-cd") and i + 1 < len(argv):
            folders.append(argv[i + 1])
        elif arg.startswith("--config-dir="):
            folders.append(arg.split("=", 1)[1])
    out = []
    for folder in folders:
        for path in sorted(Path(folder).glob(f"{group}/*.yaml")):
            try:
                body = yaml.safe_load(path.read_text(encoding="utf-8"))
            except (OSError, yaml.YAMLError):
                continue
            if isinstance(body, dict) and leaf in body:
                out.append(path.stem)
    return out


def user_error_message(
    err: BaseException, prog: str = PROG, key_hint: Callable[[str], str] | None = None
) -> str | None:
    """A one-paragraph message for an error the user can fix by changing the command line, or
    None for any other error (a bug, which keeps its traceback).

    Parameters
    ----------
    err : BaseException
        What Hydra, OmegaConf or the library raised.
    prog : str
        The command named in the message (``recoeval-track-report`` for the report).
    key_hint : callable, optional
        ``key -> text``: what to change for an unknown key (default: the hint for
        ``recoeval-track``'s own config groups).
    """
    from hydra.errors import (
        ConfigCompositionException,
        MissingConfigException,
        OverrideParseException,
        SearchPathException,
    )
    from omegaconf.errors import (
        ConfigAttributeError,
        ConfigKeyError,
        MissingMandatoryValue,
        OmegaConfBaseException,
        ValidationError,
    )

    from .._validation import InputError
    from .job_name import JobNameError

    prefix = f"{prog}: "
    see_cfg = _SEE_CFG.replace(_PROG, prog, 1)
    key_hint = key_hint or _key_hint
    if isinstance(err, JobNameError):  # names the key, its value and where it was set
        return prefix + _one_line(err)
    if isinstance(err, MissingConfigException):
        text = str(err)
        m = re.search(r"Could not find '([^']+)'", text)
        options = re.findall(r"^\t(\S+)$", text.split("Config search path:")[0], flags=re.MULTILINE)
        options = [o for o in options if not o.startswith("schema")]
        if m and "/" in m.group(1):
            group, _, option = m.group(1).rpartition("/")
            avail = f" Available options: {', '.join(options)}." if options else ""
            return (
                f"{prefix}there is no option '{option}' in the config group '{group}'. "
                f"Pick one of the group's options on the command line, e.g. "
                f"{group}={options[0] if options else '<option>'}.{avail}"
            )
        return (
            prefix
            + _one_line(text.split("Config search path:")[0])
            + " Check the config name and --config-dir."
        )
    if isinstance(err, OverrideParseException):
        return (
            f"{prefix}could not parse the command line: {_one_line(err)}. Write overrides "
            "as key=value (e.g. model.factors=32), options as group=option (model=als), "
            "and quote values with spaces or special characters."
        )
    if isinstance(err, SearchPathException):
        return prefix + _one_line(err) + ". Give an existing folder to --config-dir."
    if isinstance(err, ConfigCompositionException):
        cause = err.__cause__
        text = _one_line(err)
        m = re.search(r"override (\S+)", text) or re.search(r"override '([^']+)'", text)
        override = m.group(1).rstrip(".") if m else None
        if isinstance(cause, (ConfigAttributeError, ConfigKeyError)):
            key = _full_key(str(cause)) or override or "?"
            return f"{prefix}'{key}' is not a setting of the chosen config. {key_hint(key)}"
        if isinstance(cause, ValidationError):
            key = _full_key(str(cause)) or override or "?"
            reason = _one_line(str(cause).split("full_key:")[0])
            return (
                f"{prefix}the value given to '{key}' has the wrong type: {reason}. "
                f"Give a value of the type the setting expects. {see_cfg}"
            )
        if isinstance(cause, OmegaConfBaseException):
            return (
                f"{prefix}{text}: {_one_line(str(cause).split('full_key:')[0])}. "
                f"Check the override. {see_cfg}"
            )
        return f"{prefix}{text}. Check the overrides on the command line. {see_cfg}"
    if isinstance(err, MissingMandatoryValue):
        key = _full_key(str(err)) or "a setting"
        hint = f" e.g. {key}=/path/to/file" if key.endswith("path") else f" e.g. {key}=<value>"
        return (
            f"{prefix}'{key}' is required by the chosen options but was not given. Add it "
            f"on the command line,{hint}."
        )
    if isinstance(err, ValidationError):
        key = _full_key(str(err)) or "a setting"
        reason = _one_line(str(err).split("full_key:")[0])
        return f"{prefix}the value of '{key}' is not valid: {reason}. {see_cfg}"
    if _raised_by_config_library(err):
        return (
            f"{prefix}could not apply the command line: {_one_line(err)}. Check the "
            f"overrides (key=value, group=option). {see_cfg}"
        )
    if isinstance(err, InputError):
        text = _one_line(err)
        key = _config_key(text)
        if key:
            return f"{prefix}{key}: {text} Change it on the command line ({key}=...); {see_cfg}"
        return f"{prefix}{text} Change the matching setting on the command line; {see_cfg}"
    return None


def composition_key(err: BaseException) -> str | None:
    """The config key a composition error is about, when it is an unknown key
    (``model.neighbours`` given to ``model=popularity``); else None."""
    from hydra.errors import ConfigCompositionException
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError

    if not isinstance(err, ConfigCompositionException) or not isinstance(
        err.__cause__, (ConfigAttributeError, ConfigKeyError)
    ):
        return None
    m = re.search(r"override '([^']+)'", str(err)) or re.search(r"override (\S+)", str(err))
    return _full_key(str(err.__cause__)) or (m.group(1).rstrip(".").lstrip("+~") if m else None)


class SweepJobsFailed(Exception):
    """Jobs of a sweep that failed as they ran (the ``recoeval`` and ``optuna`` sweepers raise
    it once every launched job has run). Each job said why when it failed
    (``recoeval-track: job #N of the sweep failed: ...``); this names them all, without saying
    the first one's reason again, and the command exits with the first one's status.

    Parameters
    ----------
    failures : list of (int or str, list of str, BaseException)
        Each failed job: its number in the sweep, its overrides, its error (the cause of this
        one is the first's).
    total : int
        The number of jobs the sweep launched.
    after : str, optional
        What the sweep did then (default: the other jobs ran, or, when every job failed, that
        the sweep has no results).
    """

    def __init__(
        self,
        failures: list[tuple[Any, list[str], BaseException]],
        total: int,
        after: str | None = None,
    ) -> None:
        self.failures, self.total = failures, total
        named = ", ".join(
            f"#{num} ({' '.join(ov)})" if ov else f"#{num}" for num, ov, _ in failures
        )
        n = len(failures)
        if after is None:
            after = (
                "The other jobs ran and their results are recorded."
                if n < total
                else "No job of the sweep ran to the end: it has no results."
            )
        super().__init__(
            f"{PROG}: {n} of {total} job{'s' if total != 1 else ''} of the sweep failed: "
            f"{named}; each said why when it failed, above, and its job folder's log keeps "
            f"it. {after}"
        )


class SweepJobError(Exception):
    """Jobs of a sweep whose overrides do not compose, found before any job ran (by the
    ``recoeval`` sweeper). The message names the first such job by its number and overrides
    and, for an unknown key, the options of its config group that declare the key.

    Parameters
    ----------
    failures : list of (int, list of str, Exception)
        Each failing job: its number in the sweep, its overrides, the composition error.
    total : int
        The number of jobs of the sweep (grid and baselines).
    key : str, optional
        The unknown key of the first failure.
    owners : list of str, optional
        The options of ``key``'s group that declare it (the sweep's own first).
    prog : str
        The command named in the message.
    """

    def __init__(
        self,
        failures: list[tuple[int, list[str], BaseException]],
        total: int,
        *,
        key: str | None = None,
        owners: list[str] | None = None,
        prog: str = PROG,
    ) -> None:
        self.failures, self.total, self.key, self.owners = failures, total, key, owners
        super().__init__(_sweep_job_text(failures, total, key, owners, prog))


def _sweep_job_text(
    failures: list[tuple[int, list[str], BaseException]],
    total: int,
    key: str | None,
    owners: list[str] | None,
    prog: str,
) -> str:
    index, overrides, err = failures[0]
    head = f"{prog}: job #{index} of the sweep's {total} ({' '.join(overrides)}) cannot be composed"
    if key:
        group = key.split(".", 1)[0]
        chosen = next(
            (o.split("=", 1)[1] for o in overrides if o.split("=", 1)[0].lstrip("+~") == group),
            None,
        )
        text = f"{head}: '{key}' is not a setting of {f'{group}={chosen}' if chosen else 'its config'}."
        if owners:
            text += (
                f" It is a setting of {' and '.join(f'{group}={o}' for o in owners)}. "
                f"Sweep {key} only with the {group} options that take it"
                + (
                    f", and run {group}={chosen} as a baseline beside them: -m "
                    f"{group}={owners[0]} {key}=... 'baselines=[{chosen}]'."
                    if chosen and group == "model"
                    else "."
                )
            )
        elif owners is not None:
            text += f" No option of the config group '{group}' declares it: check the spelling."
    else:
        detail = user_error_message(err, prog) or _one_line(err)
        text = f"{head}: {detail.removeprefix(f'{prog}: ')}"
    if len(failures) > 1:
        more = [f"#{i} ({' '.join(o)})" for i, o, _ in failures[1:4]]
        text += (
            f" {len(failures) - 1} more job(s) cannot be composed either: "
            f"{', '.join(more)}{', ...' if len(failures) > 4 else ''}."
        )
    return text + " No job was run and nothing was logged."


def _raised_by_config_library(err: BaseException) -> bool:
    """A plain error (``ValueError``...) raised inside Hydra or OmegaConf while composing the
    config: the command line, not this package, is at fault."""
    if not isinstance(err, (ValueError, TypeError, KeyError, AttributeError, IndexError)):
        return False
    tb = err.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    parts = Path(last or "").parts
    return "site-packages" in parts and any(p in ("hydra", "omegaconf") for p in parts)


def _func_groups() -> dict[str, str]:
    """The config group whose settings each library function takes as parameters."""
    from ..data import DATASETS
    from ..models import MODELS
    from ..splitting import SPLITS

    out = {
        "evaluate": "metrics",
        "EvalOptions.from_config": "metrics",
        "apply_profile": "metrics",
        "load_dataset": "dataset",
        "make_synthetic": "dataset",
        "make_split": "split",
        "make_model": "model",
        "to_implicit": "dataset.implicit",
    }
    for registry, group in ((DATASETS, "dataset"), (SPLITS, "split"), (MODELS, "model")):
        for target in registry.values():
            out[getattr(target, "__name__", "")] = group
    return out


def _config_key(message: str) -> str | None:
    """The config key of a library error (``The 'block_rows' parameter of evaluate...`` ->
    ``metrics.block_rows``), when the parameter is a setting of that group."""
    import dataclasses

    from ..options import config_fields
    from .schema import SCHEMAS

    unknown = re.match(
        r"The parameters of make_model\('[^']*'\) must be among .*? Got '(\w+)'", message
    )
    if unknown:  # a key the model does not take (+model.bogus=1)
        return f"model.{unknown.group(1)}"
    m = re.match(r"The '([\w.]+)' parameter of ([\w.]+) ", message)
    if not m:
        return None
    name, func = m.groups()
    if "." in name:
        return name  # already a config key (run_job names them so)
    group = _func_groups().get(func)
    if group == "metrics":
        keys = {f.name: key for f, key in config_fields()}
        return f"metrics.{keys[name]}" if name in keys else None
    if group is None:
        return name if func == "run_job" else None
    top = group.split(".")[0]
    fields = {f.name for node in SCHEMAS.get(top, {}).values() for f in dataclasses.fields(node)}
    if group != top or name in fields or name in ("kind", "name"):
        return f"{group}.{name}"
    return None


def run_error_message(err: BaseException) -> str | None:
    """A one-paragraph message for a failure while running that is not a usage error (a full
    disk, an unreadable file, no memory, a lock held too long), or None."""
    from ..distributed import DistributedError
    from ..jobdir import JobDirWriteError
    from ..jobdir.markers import LockTimeout
    from ..jobdir.redact import scrub_text
    from ..models import ModelCodeError

    prefix = f"{_PROG}: "
    if isinstance(err, (ModelCodeError, NothingEvaluated)):  # the user's code, or NaN for all
        return prefix + scrub_text(_one_line(err))
    if isinstance(err, (JobDirWriteError, LockTimeout, DistributedError)):
        return prefix + scrub_text(_one_line(err))
    if isinstance(err, MemoryError):
        return (
            f"{prefix}out of memory ({_one_line(err) or 'MemoryError'}). Lower "
            "metrics.block_rows, or evaluate a smaller dataset."
        )
    if isinstance(err, OSError):
        where = f" ({err.filename})" if getattr(err, "filename", None) else ""
        reason = err.strerror or _one_line(err) or type(err).__name__
        return scrub_text(
            f"{prefix}{reason}{where}. Check the path, its permissions and the "
            "free disk space, then run again."
        )
    return None


def error_message(err: BaseException) -> tuple[int, str] | None:
    """The exit status and message of an error with a known cause, or None."""
    from ..models import ModelProtocolError

    if isinstance(err, ModelProtocolError):  # the user's model class or its config
        return EXIT_USAGE, f"{_PROG}: {_one_line(err)}"
    if isinstance(err, SweepJobError):
        return EXIT_USAGE, str(err)
    if isinstance(err, SweepJobsFailed):
        first = error_message(err.failures[0][2]) if err.failures else None
        return (first[0] if first else EXIT_FAILURE), str(err)
    message = user_error_message(err)
    if message is not None:
        return EXIT_USAGE, message
    message = run_error_message(err)
    if message is not None:
        return EXIT_FAILURE, message
    return None


def bug_message(err: BaseException) -> str:
    from ..jobdir.redact import scrub_text

    first = (str(err).strip().splitlines() or [""])[0][:300]
    return scrub_text(
        f"{_PROG}: internal error ({type(err).__name__}: {first}). This is a bug: "
        "please report it with the command line; run it again with "
        "HYDRA_FULL_ERROR=1 to see the traceback."
    )
