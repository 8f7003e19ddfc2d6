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

import contextlib
import os
import sys
from collections.abc import Iterator
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
from .task import (  # the job itself; its names stay importable from here
    CONFIG_PACKAGE,
    _single_run_error,
    config_path,
    option_node,  # noqa: F401
    redact_logs,
    run_task,
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

_PROG = PROG

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


def _the_store_itself(store: Any, memo: dict) -> Any:
    return store


def share_config_store() -> None:
    """Let Hydra's compositions read the process's config store rather than a copy of it.

    Every composition and every listing of a group's options (``--help`` makes 115 of them)
    starts by deep-copying Hydra's config repository, and with it the ``ConfigStore``: every
    structured-config node stored, our schema's included, 6-13 ms a copy (a second of CPU for
    ``--help``). The copy only reads the store (``ConfigStore.load`` hands out a copy of each
    node it loads), and a repository made afresh refers to the store itself
    (``ConfigStore.instance()``): the store now deep-copies to itself, in this command's
    process (a user's own Hydra app keeps Hydra's behaviour)."""
    from hydra.core.config_store import ConfigStore

    if "__deepcopy__" not in vars(ConfigStore):
        setattr(ConfigStore, "__deepcopy__", _the_store_itself)  # noqa: B010 - not a method of it


#: Options that bring config files other than the app's own (one of theirs may set hydra.mode).
_OTHER_CONFIGS = {"--config-path", "-cp", "--config-name", "-cn", "--config-dir", "-cd"}


def mode_is_the_command_lines(argv: list[str]) -> bool:
    """Whether ``argv``'s run mode (a single run or a sweep) is the command line's alone: only
    the app's config files compose, none of which sets ``hydra.mode``, and no override sets it
    or adds a config search path."""
    for arg in argv:
        key = arg.split("=", 1)[0]
        if key in _OTHER_CONFIGS or key.lstrip("+~").startswith(("hydra.mode", "hydra.searchpath")):
            return False
    return True


@contextlib.contextmanager
def mode_from_command_line(argv: list[str]) -> Iterator[None]:
    """While Hydra starts the command: when :func:`mode_is_the_command_lines`, Hydra's
    ``get_mode`` answers that no config sets the mode, which is what it finds by composing the
    whole config once more before the run's or the sweep's own composition (0.07-0.3 s of
    every command); ``-m`` then makes a sweep and its absence a single run, as before."""
    from hydra._internal.hydra import Hydra

    original = vars(Hydra).get("get_mode")
    if original is None or not mode_is_the_command_lines(argv):
        yield
        return
    setattr(Hydra, "get_mode", _no_mode_in_configs)  # noqa: B010
    try:
        yield
    finally:
        setattr(Hydra, "get_mode", original)  # noqa: B010


def _no_mode_in_configs(self: Any, *args: Any, **kwargs: Any) -> None:
    return None


# ---------------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------------


def job_name_problem(argv: list[str]) -> str | None:
    """The usage error for a ``hydra.job.name`` override that would put the job's log file
    (``<name>.log``) outside the job folder: a path separator or ``..``; None when fine. A name
    set in a config file is checked when the run starts (:mod:`.job_name`)."""
    from .job_name import name_problem

    for arg in argv:
        key, sep, value = arg.partition("=")
        if not sep or key.lstrip("+~") != "hydra.job.name":
            continue
        name = value.strip().strip("'\"")
        if name_problem(name) is not None:
            return (
                f"{_PROG}: hydra.job.name must be a plain name (it names the job's log file, "
                f"<name>.log, in the job folder); got {value!r}. Use a name without '/', "
                "'\\' or '..'."
            )
    return None


#: Hydra's options that run no job (``--info`` may take no value: nothing is added after it).
_NO_RUN = {
    "--help",
    "-h",
    "--hydra-help",
    "--cfg",
    "-c",
    "--info",
    "-i",
    "--shell-completion",
    "-sc",
    "--experimental-rerun",
}


def _first_override(argv: list[str]) -> int:
    """Where the overrides of ``argv`` start (its length when there are none): Hydra's parser
    takes them as one run of arguments, so an override added there keeps them one run."""
    skip = False
    for i, arg in enumerate(argv):
        if skip or arg.startswith("-"):
            skip = not skip and arg in _OPTIONS_WITH_VALUE
            continue
        return i
    return len(argv)


def _is_multirun(argv: list[str]) -> bool:
    """Whether ``argv`` asks for a sweep (``-m``, or Hydra's mode set on the command line)."""
    return any(
        a in ("-m", "--multirun") or a.replace(" ", "").lstrip("+") == "hydra.mode=MULTIRUN"
        for a in argv
    )


def main() -> None:
    """Console entry point of ``recoeval-track``: run the Hydra app on ``sys.argv``.

    A run's first line comes before Hydra, numpy or scipy is imported (:mod:`.startup`), and a
    line follows every few seconds until the job or the sweep says something of its own. A
    single run on a cold kernel cache starts its warm-up child at once, too."""
    from . import startup

    argv = sys.argv[1:]
    if any(a in ("--version", "-V") for a in argv):
        from .._version import __version__

        # Hydra's own --version would print Hydra's version; --hydra-help lists Hydra's flags
        print(f"{_PROG} (recoeval_tracking) {__version__}")
        return
    runs = not _NO_RUN.intersection(a.split("=", 1)[0] for a in argv)
    if runs:
        sweep = _is_multirun(argv)
        startup.begin(_PROG, "starting the sweep" if sweep else "starting the job")
        if not sweep:  # on a cold cache: the kernels' compile starts its imports now
            if not startup.prestart_warm_up():  # on a warm one: MLflow's import and store
                startup.prestart_uploader(argv)
    try:
        _main(runs)
    finally:
        startup.end()
        startup.stop_warm_up()
        startup.stop_uploader()


def _main(runs: bool) -> None:
    import hydra

    from .stages import quick_exit
    from .startup import end as end_startup

    quick_exit()

    from . import schema  # noqa: F401 - registers the structured configs
    from .callbacks import note_interrupted
    from .job_name import CALLBACK_OVERRIDE as JOB_NAME_CHECK
    from .job_name import StartRefused

    bad_name = job_name_problem(sys.argv[1:])
    if bad_name:
        end_startup()
        print(bad_name, file=sys.stderr)
        sys.exit(EXIT_USAGE)
    full_error = os.environ.get("HYDRA_FULL_ERROR") == "1"
    # Let Hydra's errors reach this function (instead of Hydra printing them and exiting 1),
    # so that every error gets a one-paragraph message and its exit status.
    os.environ["HYDRA_FULL_ERROR"] = "1"
    _single_run_error.clear()
    redact_logs()
    sys.argv[1:] = rewrite_mapping_overrides(sys.argv[1:])
    if runs:
        # a name from any config file, checked before Hydra opens the job's log
        sys.argv.insert(1 + _first_override(sys.argv[1:]), JOB_NAME_CHECK)
    register_search_plugin()
    share_config_store()
    app = hydra.main(version_base="1.3", config_path=config_path(), config_name="config")(run_task)
    try:
        with mode_from_command_line(sys.argv[1:]):
            app()
    except StartRefused as refused:  # before any job: a usage error, whatever its type
        end_startup()
        if full_error:
            raise
        print(
            (error_message(refused.error) or (EXIT_USAGE, str(refused.error)))[1], file=sys.stderr
        )
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        end_startup()
        note_interrupted()
        print(f"{_PROG}: interrupted.", file=sys.stderr)
        sys.exit(130)
    except Exception as err:
        end_startup()
        if full_error:
            raise
        status, message = error_message(err) or (EXIT_FAILURE, bug_message(err))
        print(message, file=sys.stderr)
        sys.exit(status)
    finally:
        if not full_error:
            os.environ.pop("HYDRA_FULL_ERROR", None)
    end_startup()
    if _single_run_error:
        status, message = _single_run_error[0]
        print(message, file=sys.stderr)
        sys.exit(status)


if __name__ == "__main__":
    main()
