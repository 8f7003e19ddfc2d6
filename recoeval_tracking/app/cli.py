"""The ``recoeval-track`` console command (also ``python -m recoeval_tracking``): a Hydra app.

Usage::

    recoeval-track                                   # the embedded default, end to end
    recoeval-track dataset=movielens_100k dataset.path=ml-100k/u.data model=popularity
    recoeval-track -m model=als model.factors=32,64 hydra/launcher=joblib   # a sweep
    recoeval-track --cfg job                         # print the composed config
    recoeval-track --config-path <job dir>/.hydra --config-name config   # re-run a job

A job is re-run from the resolved config Hydra saved in its directory with ``--config-path``
(``-cp``), which replaces the app's config folder. ``--config-dir`` (``-cd``) would not do: Hydra
searches a folder given that way after the app's own configs, so the app's ``config.yaml`` wins.

The configs are found as the package ``recoeval_tracking.configs`` (``pkg://``), which is how a
regular (non-editable) install ships the top-level ``configs/`` folder; a source checkout whose
installed metadata does not map that package falls back on the folder itself.

Settings that hold a mapping (``dataset.columns``) start empty; ``dataset.columns={user:uid,
item:iid}`` and ``dataset.columns.user=uid`` are handed to Hydra as ``++dataset.columns=...``
and ``++dataset.columns.user=...``, which is how Hydra adds keys to an empty mapping.

Errors, always one paragraph on stderr and never a stack trace:

* a bad override (unknown option, misspelt key, wrong type, an integer out of the 64-bit range,
  missing ``dataset.path``) or a bad value found by the library exits with status 2 and says
  which setting to change (``metrics.block_rows: The 'block_rows' parameter of evaluate must
  be an int >= 1...``);
* a failure while running (a full disk: :class:`~recoeval_tracking.jobdir.JobDirWriteError`
  names the job directory and what was kept; an unreadable file, no memory, a lock held too
  long) exits with status 1;
* anything else is a bug: status 1 and a line that says so.

``HYDRA_FULL_ERROR=1`` shows the full error and its traceback instead.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["main", "config_path", "user_error_message", "run_error_message", "CONFIG_PACKAGE",
           "EXIT_USAGE", "EXIT_FAILURE"]

#: The package that holds the configs once installed.
CONFIG_PACKAGE = "recoeval_tracking.configs"
#: Exit status of a run stopped by a bad config value or override.
EXIT_USAGE = 2
#: Exit status of a run that failed while running (a full disk...) or on a bug.
EXIT_FAILURE = 1
_PROG = "recoeval-track"
_INT64 = (-(2 ** 63), 2 ** 63 - 1)


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
    raise RuntimeError(f"{_PROG}: the configs were not found: neither the package "
                       f"{CONFIG_PACKAGE} nor the folder {source} exists. Reinstall the package "
                       "(pip install recoeval_tracking).")


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
    elif isinstance(node, int) and not isinstance(node, bool) \
            and not _INT64[0] <= node <= _INT64[1]:
        raise InputError(f"{key}: the value {node} is out of the 64-bit integer range "
                         f"[{_INT64[0]}, {_INT64[1]}]. Give a smaller value.")


def _task(cfg: Any) -> dict[str, Any] | None:
    """The Hydra task: the resolved config as a plain dict, handed to ``run_job``."""
    from hydra.core.hydra_config import HydraConfig
    from hydra.types import RunMode
    from omegaconf import OmegaConf

    from .callbacks import read_sweep_parent
    from .pipeline import run_job

    hc = HydraConfig.get()
    multirun = hc.mode == RunMode.MULTIRUN
    try:
        plain = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
        _check_int_range(plain)
        sweep = None
        if multirun:
            sweep_dir = Path(str(hc.sweep.dir))
            if not sweep_dir.is_absolute():
                sweep_dir = Path(hc.runtime.cwd) / sweep_dir
            sweep = read_sweep_parent(sweep_dir)
        return run_job(plain, Path(hc.runtime.output_dir), overrides=list(hc.overrides.task),
                       sweep=sweep, base_dir=Path(hc.runtime.cwd))
    except Exception as err:
        found = _error_message(err)
        if found is None or multirun:
            raise  # a sweep job must fail (Hydra marks it FAILED); main() prints the message
        _single_run_error.append(found)
        return None


_OPTIONS_WITH_VALUE = {"--config-path", "-cp", "--config-name", "-cn", "--config-dir", "-cd",
                       "--cfg", "-c", "--package", "-p", "--info", "-i",
                       "--experimental-rerun"}


def _chosen_options(argv: list[str]) -> dict[str, set[str]] | None:
    """The option of each group the command line runs with (the defaults of ``config.yaml``,
    then ``group=option`` overrides; a sweep may name several); None when another primary
    config is given (``--config-name``, ``--config-path``: the options are unknown)."""
    import yaml

    if any(a in ("--config-name", "-cn", "--config-path", "-cp") for a in argv):
        return None
    try:
        text = (Path(config_path().removeprefix("pkg://")) / "config.yaml").read_text() \
            if not config_path().startswith("pkg://") else _package_config_text()
        defaults = yaml.safe_load(text).get("defaults", [])
    except Exception:  # noqa: BLE001 - unknown defaults: rewrite by the key alone
        return None
    chosen = {k: {str(v)} for d in defaults if isinstance(d, dict) for k, v in d.items()}
    for arg in argv:
        key, eq, value = arg.partition("=")
        if eq and key in chosen:
            chosen[key] = set(value.split(","))
    return chosen


def _package_config_text() -> str:
    from importlib.resources import files

    return (files(CONFIG_PACKAGE) / "config.yaml").read_text(encoding="utf-8")


def _is_mapping_setting(key: str, chosen: dict[str, set[str]] | None) -> bool:
    import dataclasses
    import typing

    from .schema import SCHEMAS

    group, _, rest = key.partition(".")
    name = rest.split(".")[0]
    options = SCHEMAS.get(group, {})
    picked = options.values() if chosen is None or group not in chosen else \
        [options[o] for o in chosen[group] if o in options]
    for node in picked:
        for f in dataclasses.fields(node):
            if f.name != name:
                continue
            args = [a for a in typing.get_args(f.type) if a is not type(None)] or [f.type]
            if any(typing.get_origin(a) in (dict, typing.Dict) or a is dict for a in args):
                return True
    return False


def rewrite_mapping_overrides(argv: list[str]) -> list[str]:
    """``argv`` with plain overrides of mapping settings of the chosen options
    (``dataset.columns={...}``, ``dataset.columns.user=uid`` with ``dataset=csv``) turned into
    Hydra's force-add form (``++...``)."""
    chosen: Any = ...
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip or arg.startswith("-"):
            skip = arg in _OPTIONS_WITH_VALUE
            out.append(arg)
            continue
        key = arg.split("=", 1)[0] if "=" in arg else ""
        if key and not key.startswith(("+", "~")) and "." in key:
            chosen = _chosen_options(argv) if chosen is ... else chosen
            if _is_mapping_setting(key, chosen):
                arg = "++" + arg
        out.append(arg)
    return out


# ---------------------------------------------------------------------------------------------
# error messages
# ---------------------------------------------------------------------------------------------

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
        fields_of = {opt: {f.name for f in dataclasses.fields(node)}
                     for opt, node in SCHEMAS[group].items()}
        having = [opt for opt, names in fields_of.items() if leaf in names]
        if having and len(SCHEMAS[group]) > 1:
            return (f"It belongs to {group}={' / '.join(having)}: pick that option "
                    f"({group}={having[0]} {key}=...). {_SEE_CFG}")
        known = sorted(set().union(*fields_of.values()))
        close = difflib.get_close_matches(leaf, known, n=3)
        if close:
            return f"Did you mean {', '.join(f'{group}.{c}' for c in close)}? {_SEE_CFG}"
        return f"Check the spelling. {_SEE_CFG}"
    known = [f.name for f in dataclasses.fields(Config)]
    close = difflib.get_close_matches(key, known, n=3)
    if close:
        return f"Did you mean {', '.join(close)}? {_SEE_CFG}"
    return f"Check the spelling. {_SEE_CFG}"


def user_error_message(err: BaseException) -> str | None:
    """A one-paragraph message for an error the user can fix by changing the command line, or
    None for any other error (a bug, which keeps its traceback).

    Parameters
    ----------
    err : BaseException
        What Hydra, OmegaConf or the library raised.
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

    prefix = f"{_PROG}: "
    if isinstance(err, MissingConfigException):
        text = str(err)
        m = re.search(r"Could not find '([^']+)'", text)
        options = re.findall(r"^\t(\S+)$", text.split("Config search path:")[0], flags=re.MULTILINE)
        options = [o for o in options if not o.startswith("schema")]
        if m and "/" in m.group(1):
            group, _, option = m.group(1).rpartition("/")
            avail = f" Available options: {', '.join(options)}." if options else ""
            return (f"{prefix}there is no option '{option}' in the config group '{group}'. "
                    f"Pick one of the group's options on the command line, e.g. "
                    f"{group}={options[0] if options else '<option>'}.{avail}")
        return prefix + _one_line(text.split("Config search path:")[0]) + \
            " Check the config name and --config-dir."
    if isinstance(err, OverrideParseException):
        return (f"{prefix}could not parse the command line: {_one_line(err)}. Write overrides "
                "as key=value (e.g. model.factors=32), options as group=option (model=als), "
                "and quote values with spaces or special characters.")
    if isinstance(err, SearchPathException):
        return prefix + _one_line(err) + ". Give an existing folder to --config-dir."
    if isinstance(err, ConfigCompositionException):
        cause = err.__cause__
        text = _one_line(err)
        m = re.search(r"override (\S+)", text) or re.search(r"override '([^']+)'", text)
        override = m.group(1).rstrip(".") if m else None
        if isinstance(cause, (ConfigAttributeError, ConfigKeyError)):
            key = _full_key(str(cause)) or override or "?"
            return f"{prefix}'{key}' is not a setting of the chosen config. {_key_hint(key)}"
        if isinstance(cause, ValidationError):
            key = _full_key(str(cause)) or override or "?"
            reason = _one_line(str(cause).split("full_key:")[0])
            return (f"{prefix}the value given to '{key}' has the wrong type: {reason}. "
                    f"Give a value of the type the setting expects. {_SEE_CFG}")
        if isinstance(cause, OmegaConfBaseException):
            return (f"{prefix}{text}: {_one_line(str(cause).split('full_key:')[0])}. "
                    f"Check the override. {_SEE_CFG}")
        return f"{prefix}{text}. Check the overrides on the command line. {_SEE_CFG}"
    if isinstance(err, MissingMandatoryValue):
        key = _full_key(str(err)) or "a setting"
        hint = f" e.g. {key}=/path/to/file" if key.endswith("path") else f" e.g. {key}=<value>"
        return (f"{prefix}'{key}' is required by the chosen options but was not given. Add it "
                f"on the command line,{hint}.")
    if isinstance(err, ValidationError):
        key = _full_key(str(err)) or "a setting"
        reason = _one_line(str(err).split("full_key:")[0])
        return f"{prefix}the value of '{key}' is not valid: {reason}. {_SEE_CFG}"
    if _raised_by_config_library(err):
        return (f"{prefix}could not apply the command line: {_one_line(err)}. Check the "
                f"overrides (key=value, group=option). {_SEE_CFG}")
    if isinstance(err, InputError):
        text = _one_line(err)
        key = _config_key(text)
        if key:
            return (f"{prefix}{key}: {text} Change it on the command line ({key}=...); "
                    f"{_SEE_CFG}")
        return f"{prefix}{text} Change the matching setting on the command line; {_SEE_CFG}"
    return None


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

    out = {"evaluate": "metrics", "EvalOptions.from_config": "metrics",
           "apply_profile": "metrics", "load_dataset": "dataset", "make_synthetic": "dataset",
           "make_split": "split", "make_model": "model", "to_implicit": "dataset.implicit"}
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
    from ..jobdir import JobDirWriteError
    from ..jobdir.markers import LockTimeout
    from ..jobdir.redact import scrub_text

    prefix = f"{_PROG}: "
    if isinstance(err, (JobDirWriteError, LockTimeout)):
        return prefix + scrub_text(_one_line(err))
    if isinstance(err, MemoryError):
        return (f"{prefix}out of memory ({_one_line(err) or 'MemoryError'}). Lower "
                "metrics.block_rows, or evaluate a smaller dataset.")
    if isinstance(err, OSError):
        where = f" ({err.filename})" if getattr(err, "filename", None) else ""
        reason = err.strerror or _one_line(err) or type(err).__name__
        return scrub_text(f"{prefix}{reason}{where}. Check the path, its permissions and the "
                          "free disk space, then run again.")
    return None


def _error_message(err: BaseException) -> tuple[int, str] | None:
    """The exit status and message of an error with a known cause, or None."""
    message = user_error_message(err)
    if message is not None:
        return EXIT_USAGE, message
    message = run_error_message(err)
    if message is not None:
        return EXIT_FAILURE, message
    return None


def _bug_message(err: BaseException) -> str:
    from ..jobdir.redact import scrub_text

    first = (str(err).strip().splitlines() or [""])[0][:300]
    return scrub_text(f"{_PROG}: internal error ({type(err).__name__}: {first}). This is a bug: "
                      "please report it with the command line; run it again with "
                      "HYDRA_FULL_ERROR=1 to see the traceback.")


# ---------------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------------

def main() -> None:
    """Console entry point of ``recoeval-track``: run the Hydra app on ``sys.argv``."""
    import hydra

    from . import schema  # noqa: F401 - registers the structured configs
    from .callbacks import note_interrupted

    full_error = os.environ.get("HYDRA_FULL_ERROR") == "1"
    # Let Hydra's errors reach this function (instead of Hydra printing them and exiting 1),
    # so that every error gets a one-paragraph message and its exit status.
    os.environ["HYDRA_FULL_ERROR"] = "1"
    _single_run_error.clear()
    sys.argv[1:] = rewrite_mapping_overrides(sys.argv[1:])
    app = hydra.main(version_base="1.3", config_path=config_path(), config_name="config")(_task)
    try:
        app()
    except KeyboardInterrupt:
        note_interrupted()
        print(f"{_PROG}: interrupted.", file=sys.stderr)
        sys.exit(130)
    except Exception as err:
        if full_error:
            raise
        status, message = _error_message(err) or (EXIT_FAILURE, _bug_message(err))
        print(message, file=sys.stderr)
        sys.exit(status)
    finally:
        if not full_error:
            os.environ.pop("HYDRA_FULL_ERROR", None)
    if _single_run_error:
        status, message = _single_run_error[0]
        print(message, file=sys.stderr)
        sys.exit(status)


if __name__ == "__main__":
    main()
