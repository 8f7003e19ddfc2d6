"""Every ``recoeval-track`` command shown in README.md and docs/ composes, so a reader who copies
one gets a job, not a config error.

The commands are taken from the shell blocks (any fence not tagged ``python``, ``text`` or
``yaml``) and from inline code spans. Each is composed in this process as the app composes it:
the app's rewrite of mapping settings (:func:`~recoeval_tracking.app.cli.rewrite_mapping_overrides`),
Hydra's compose API on the app's configs (every job of a ``-m`` sweep; an Optuna search's
parameter specs are the sweeper's, so only the rest is composed), then what the app checks before
any data is read: every value resolved, ``check_before_load`` and the metrics options
(:meth:`EvalOptions.checked <recoeval_tracking.options.EvalOptions.checked>`). Files are not
opened, so placeholder paths compose. A command that cannot compose here is listed in
:data:`SKIP` with its reason.
"""

from __future__ import annotations

import copy
import re
import shlex
from pathlib import Path

import pytest

from recoeval_tracking.app import schema  # noqa: F401 - registers the structured configs
from recoeval_tracking.app.cli import (
    CONFIG_PACKAGE,
    config_path,
    register_search_plugin,
    rewrite_mapping_overrides,
)

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
PROG = "recoeval-track"

#: Commands that cannot be composed here, by a fragment of their text, with the reason.
SKIP = {
    "--config-dir": "needs the reader's own config folder (my_configs/model/ease.yaml and the "
    "class it names)",
    "--config-path": "re-runs a job folder the reader has (its .hydra/config.yaml)",
    "--help": "prints the help; composes nothing",
}

_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
_INLINE = re.compile(r"`([^`\n]+)`")
_NOT_SHELL = ("python", "text", "yaml")


def _command_text(line: str) -> str | None:
    """The ``recoeval-track ...`` command of a shell line (after ``&&``), comment dropped."""
    for part in line.split("&&"):
        part = part.strip()
        if re.match(rf"{PROG}(\s|$)", part):
            return shlex.join(shlex.split(part, comments=True))
    return None


def doc_commands() -> list[tuple[str, str]]:
    """``(page, command)`` for every ``recoeval-track`` command of the docs."""
    found: list[tuple[str, str]] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        name = page.relative_to(ROOT).as_posix()
        for tag, body in _FENCE.findall(text):
            if tag.strip().split(" ")[0] in _NOT_SHELL:
                continue
            for line in body.replace("\\\n", " ").splitlines():
                command = _command_text(line)
                if command:
                    found.append((name, command))
        prose = _FENCE.sub("", text)
        for span in _INLINE.findall(prose):
            command = _command_text(span)
            if command:
                found.append((name, command))
    return sorted(set(found))


COMMANDS = doc_commands()


def _skip_reason(command: str) -> str | None:
    return next((why for part, why in SKIP.items() if part in command), None)


def _jobs(args: list[str]) -> list[list[str]]:
    """The override lists of the jobs a command runs: one, or each job of a ``-m`` sweep
    (Hydra's basic sweeper splits them); an Optuna search's parameter specs are left to it."""
    from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
    from hydra.core.override_parser.overrides_parser import OverridesParser

    multirun = any(a in ("-m", "--multirun") for a in args)
    overrides = [a for a in args if a not in ("-m", "--multirun", "--cfg", "job")]
    if not multirun:
        return [overrides]
    parsed = OverridesParser.create().parse_overrides(overrides)
    if "hydra/sweeper=optuna" in overrides:
        return [[o.input_line for o in parsed if not o.is_sweep_override()]]
    batches = BasicSweeper.split_arguments(parsed, None)
    return [list(job) for batch in batches for job in batch]


#: The outcome of each override list composed so far (its config, or what it raised): a job
#: that several commands share (a command shown on two pages, the same job in two sweeps) is
#: composed once; composing is deterministic, so the outcome would be the same again.
_COMPOSED: dict[tuple[str, ...], dict | Exception] = {}


def compose_job(overrides: list[str]) -> dict:
    """The resolved job config of ``overrides``, checked as the app checks it before loading
    any data. Raises what the app would report. The config returned is a copy of the memo's."""
    key = tuple(overrides)
    if key not in _COMPOSED:
        try:
            _COMPOSED[key] = _compose_job(overrides)
        except Exception as error:
            _COMPOSED[key] = error
    outcome = _COMPOSED[key]
    if isinstance(outcome, Exception):
        raise outcome
    return copy.deepcopy(outcome)


def _compose_job(overrides: list[str]) -> dict:
    from hydra import compose, initialize_config_dir, initialize_config_module
    from omegaconf import OmegaConf

    from recoeval_tracking.app.precheck import check_before_load
    from recoeval_tracking.options import EvalOptions

    register_search_plugin()
    path = config_path()
    init = (
        initialize_config_module(config_module=CONFIG_PACKAGE, version_base="1.3")
        if path.startswith("pkg://")
        else initialize_config_dir(config_dir=path, version_base="1.3")
    )
    with init:
        cfg = compose("config", overrides=rewrite_mapping_overrides(overrides))
    plain = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    check_before_load(plain)
    EvalOptions.from_config(plain["metrics"]).checked()
    return plain


def test_commands_are_found():
    pages = {page for page, _ in COMMANDS}
    assert {"README.md", "docs/getting-started.md", "docs/guides/sampled.md"} <= pages
    assert any("metrics.negatives=" in c for _, c in COMMANDS)
    assert any(c.startswith(f"{PROG} -m ") for _, c in COMMANDS)
    assert all(not c.startswith(f"{PROG}:") for _, c in COMMANDS)  # messages are not commands


def test_every_skip_is_used_and_says_why():
    for part, why in SKIP.items():
        assert why and any(part in c for _, c in COMMANDS), part


@pytest.mark.parametrize("page,command", COMMANDS, ids=[f"{p}:{c[:60]}" for p, c in COMMANDS])
def test_doc_command_composes(page, command):
    reason = _skip_reason(command)
    if reason:
        pytest.skip(reason)
    for overrides in _jobs(shlex.split(command)[1:]):
        compose_job(overrides)


# ---------------------------------------------------------------------------------------------
# the sampled protocols from the command line (docs/guides/sampled.md)
# ---------------------------------------------------------------------------------------------


def test_negatives_compose_in_both_forms():
    whole = compose_job(["model=popularity", "metrics.negatives={n:100,by:uniform,seed:0}"])
    assert whole["metrics"]["negatives"]["n"] == 100
    from recoeval_tracking.options import EvalOptions

    opts = EvalOptions.from_config(whole["metrics"]).checked()
    assert opts.negatives == {"n": 100, "by": "uniform", "seed": 0, "per_positive": False}
    dotted = EvalOptions.from_config(compose_job(["metrics.negatives.n=50"])["metrics"])
    assert dotted.checked().negatives == {
        "n": 50,
        "by": "uniform",
        "seed": 0,
        "per_positive": False,
    }
    assert EvalOptions.from_config(compose_job([])["metrics"]).negatives is None  # full catalogue
    off = compose_job(["metrics.negatives=null"])["metrics"]
    assert EvalOptions.from_config(off).negatives is None


def test_negatives_without_n_are_refused():
    from recoeval_tracking import InputError

    with pytest.raises(InputError, match="'negatives' parameter .* a mapping with 'n'"):
        compose_job(["metrics.negatives.by=popularity"])
