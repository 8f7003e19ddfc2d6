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

A bad override (unknown option, misspelt key, wrong type, missing ``dataset.path``) or a bad
value found by the library exits with status 2 and a one-paragraph message that says what to
change, without a stack trace. ``HYDRA_FULL_ERROR=1`` shows Hydra's full error instead.
"""

from __future__ import annotations

import importlib.util
import os
import re
import sys
from pathlib import Path
from typing import Any

__all__ = ["main", "config_path", "user_error_message", "CONFIG_PACKAGE", "EXIT_USAGE"]

#: The package that holds the configs once installed.
CONFIG_PACKAGE = "recoeval_tracking.configs"
#: Exit status of a run stopped by a bad config value or override.
EXIT_USAGE = 2
_PROG = "recoeval-track"


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


class _StoppedByUser(Exception):
    """A job of a single run stopped by a user error (message already prepared)."""


_single_run_error: list[str] = []


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
        sweep = None
        if multirun:
            sweep_dir = Path(str(hc.sweep.dir))
            if not sweep_dir.is_absolute():
                sweep_dir = Path(hc.runtime.cwd) / sweep_dir
            sweep = read_sweep_parent(sweep_dir)
        return run_job(plain, Path(hc.runtime.output_dir), overrides=list(hc.overrides.task),
                       sweep=sweep, base_dir=Path(hc.runtime.cwd))
    except Exception as err:
        message = user_error_message(err)
        if message is None or multirun:
            raise  # a sweep job must fail (Hydra marks it FAILED); main() prints the message
        _single_run_error.append(message)
        return None


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
    if isinstance(err, InputError):
        return (f"{prefix}{_one_line(err)} Change the matching setting on the command line; "
                f"{_SEE_CFG}")
    return None


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
    # so that user errors get a one-paragraph message and exit status 2.
    os.environ["HYDRA_FULL_ERROR"] = "1"
    _single_run_error.clear()
    app = hydra.main(version_base="1.3", config_path=config_path(), config_name="config")(_task)
    try:
        app()
    except KeyboardInterrupt:
        note_interrupted()
        print(f"{_PROG}: interrupted.", file=sys.stderr)
        sys.exit(130)
    except Exception as err:
        message = None if full_error else user_error_message(err)
        if message is None:
            raise
        print(message, file=sys.stderr)
        sys.exit(EXIT_USAGE)
    finally:
        if not full_error:
            os.environ.pop("HYDRA_FULL_ERROR", None)
    if _single_run_error:
        print(_single_run_error[0], file=sys.stderr)
        sys.exit(EXIT_USAGE)


if __name__ == "__main__":
    main()
