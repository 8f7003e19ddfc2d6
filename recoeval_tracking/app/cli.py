"""The ``recoeval-track`` console command (also ``python -m recoeval_tracking``): a Hydra app.

Usage::

    recoeval-track                                   # the embedded default, end to end
    recoeval-track dataset=movielens_100k dataset.path=ml-100k/u.data model=popularity
    recoeval-track -m model=als model.factors=32,64 hydra/launcher=joblib   # a sweep
    recoeval-track -m tracking=server hydra/launcher=submitit_slurm ...     # on a cluster
    recoeval-track -m hydra/sweeper=optuna objective=ndcg_at_10 \\
        'model.factors=int(interval(8,64))'
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

``HYDRA_FULL_ERROR=1`` shows the full error and its traceback instead. The messages are made in
:mod:`recoeval_tracking.app.errors`.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from .errors import (
    EXIT_FAILURE,
    EXIT_USAGE,
    PROG,
    bug_message,
    error_message,
    run_error_message,
    user_error_message,
)

__all__ = [
    "main",
    "run_task",
    "config_path",
    "user_error_message",
    "run_error_message",
    "redact_logs",
    "rewrite_mapping_overrides",
    "register_search_plugin",
    "CONFIG_PACKAGE",
    "EXIT_USAGE",
    "EXIT_FAILURE",
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
        _expand_group_choices(cfg)
        plain = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
        # values taken from the environment (${oc.env:...}) are written nowhere
        add_secret_values(env_interpolated_values(OmegaConf.to_container(cfg), plain))
        settings = plain if isinstance(plain, dict) else {}
        check_model_allowed(settings.get("model"), settings.get("model_allow"))  # before import
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
        found = error_message(err)
        if found is None or multirun:
            raise  # a sweep job must fail (Hydra marks it FAILED); main() prints the message
        _single_run_error.append(found)
        return None


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


_OPTIONS_WITH_VALUE = {
    "--config-path",
    "-cp",
    "--config-name",
    "-cn",
    "--config-dir",
    "-cd",
    "--cfg",
    "-c",
    "--package",
    "-p",
    "--info",
    "-i",
    "--experimental-rerun",
}


def _chosen_options(argv: list[str]) -> dict[str, set[str]] | None:
    """The option of each group the command line runs with (the defaults of ``config.yaml``,
    then ``group=option`` overrides; a sweep may name several); None when another primary
    config is given (``--config-name``, ``--config-path``: the options are unknown)."""
    import yaml

    if any(a in ("--config-name", "-cn", "--config-path", "-cp") for a in argv):
        return None
    try:
        text = (
            (Path(config_path().removeprefix("pkg://")) / "config.yaml").read_text()
            if not config_path().startswith("pkg://")
            else _package_config_text()
        )
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
    picked = (
        options.values()
        if chosen is None or group not in chosen
        else [options[o] for o in chosen[group] if o in options]
    )
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


def register_search_plugin() -> bool:
    """Make sure Hydra knows ``hydra/sweeper=recoeval`` (the default of ``recoeval-track``:
    baselines beside the grid) and ``hydra/sweeper=optuna``, the package's plugins in
    ``hydra_plugins``. A regular install puts them where Hydra's plugin scan looks; an editable
    install (``pip install -e``) maps them through an import hook that the scan cannot list, so
    they are registered here with Hydra's public ``Plugins.register``. False when the plugins
    are not installed."""
    from hydra.core.plugins import Plugins

    try:
        from hydra_plugins.recoeval_optuna_sweeper import config  # noqa: F401 - registers it
        from hydra_plugins.recoeval_optuna_sweeper.optuna_sweeper import OptunaSweeper
        from hydra_plugins.recoeval_sweeper import config as _grid  # noqa: F401 - registers it
        from hydra_plugins.recoeval_sweeper.sweeper import RecoevalSweeper
    except ImportError:
        return False
    plugins = Plugins.instance()
    for sweeper in (RecoevalSweeper, OptunaSweeper):
        name = f"{sweeper.__module__}.{sweeper.__name__}"
        if name not in plugins.class_name_to_class:
            plugins.register(sweeper)
    return True


# ---------------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------------


def job_name_problem(argv: list[str]) -> str | None:
    """The usage error for a ``hydra.job.name`` override that would put the job's log file
    (``<name>.log``) outside the job folder: a path separator or ``..``; None when fine."""
    for arg in argv:
        key, sep, value = arg.partition("=")
        if not sep or key.lstrip("+~") != "hydra.job.name":
            continue
        name = value.strip().strip("'\"")
        if not name or "/" in name or "\\" in name or ".." in name:
            return (
                f"{_PROG}: hydra.job.name must be a plain name (it names the job's log file, "
                f"<name>.log, in the job folder); got {value!r}. Use a name without '/', "
                "'\\' or '..'."
            )
    return None


def main() -> None:
    """Console entry point of ``recoeval-track``: run the Hydra app on ``sys.argv``."""
    import hydra

    from . import schema  # noqa: F401 - registers the structured configs
    from .callbacks import SweepRefused, note_interrupted

    if any(a in ("--version", "-V") for a in sys.argv[1:]):
        from .. import __version__

        # Hydra's own --version would print Hydra's version; --hydra-help lists Hydra's flags
        print(f"{_PROG} (recoeval_tracking) {__version__}")
        return
    bad_name = job_name_problem(sys.argv[1:])
    if bad_name:
        print(bad_name, file=sys.stderr)
        sys.exit(EXIT_USAGE)
    full_error = os.environ.get("HYDRA_FULL_ERROR") == "1"
    # Let Hydra's errors reach this function (instead of Hydra printing them and exiting 1),
    # so that every error gets a one-paragraph message and its exit status.
    os.environ["HYDRA_FULL_ERROR"] = "1"
    _single_run_error.clear()
    redact_logs()
    sys.argv[1:] = rewrite_mapping_overrides(sys.argv[1:])
    register_search_plugin()
    app = hydra.main(version_base="1.3", config_path=config_path(), config_name="config")(run_task)
    try:
        app()
    except SweepRefused as refused:  # before any job: a usage error, whatever its type
        if full_error:
            raise
        print(
            (error_message(refused.error) or (EXIT_USAGE, str(refused.error)))[1], file=sys.stderr
        )
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        note_interrupted()
        print(f"{_PROG}: interrupted.", file=sys.stderr)
        sys.exit(130)
    except Exception as err:
        if full_error:
            raise
        status, message = error_message(err) or (EXIT_FAILURE, bug_message(err))
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
