"""Every config in configs/ composes, matches its schema, and fails early on bad overrides.

Composition runs in-process with ``hydra.compose``; the messages of bad overrides are checked
through :func:`recoeval_tracking.app.cli.user_error_message` here and through the command in
``test_cli.py``.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

import recoeval_tracking as rt
from recoeval_tracking.app import schema
from recoeval_tracking.app.cli import user_error_message

from .conftest import REPO_ROOT, clean_env, run_process

CONFIGS = REPO_ROOT / "configs"
GROUPS = ("dataset", "split", "model", "metrics", "tracking")


def _options(group: str) -> list[str]:
    return sorted(p.stem for p in (CONFIGS / group).glob("*.yaml"))


def _all_options() -> list[tuple[str, str]]:
    return [(g, o) for g in GROUPS for o in _options(g)]


@pytest.fixture(scope="module")
def hydra_compose():
    """``compose("config", overrides)``, each list of overrides composed once for the module
    (the tests only read what they get: the pickling test meets the configs the schema test
    composed). A failed composition is not kept: it raises each time."""
    done: dict[tuple[str, ...], object] = {}

    def composed(overrides=()):
        key = tuple(overrides)
        if key not in done:
            done[key] = compose("config", overrides=list(key))
        return done[key]

    with initialize_config_dir(version_base="1.3", config_dir=str(CONFIGS)):
        yield composed


def test_config_yaml_is_a_defaults_list_of_every_group():
    raw = OmegaConf.load(CONFIGS / "config.yaml")
    assert set(raw.keys()) == {"defaults", "hydra"}
    entries = OmegaConf.to_container(raw.defaults)
    assert entries[0] == "recoeval_schema" and entries[-1] == "_self_"
    chosen = {k: v for e in entries if isinstance(e, dict) for k, v in e.items() if " " not in k}
    # -m runs through the package's sweeper (baselines beside the grid)
    assert {"override hydra/sweeper": "recoeval"} in entries
    assert chosen == {
        "dataset": "synthetic",
        "split": "random",
        "model": "als",
        "metrics": "standard",
        "tracking": "local",
        "backend": "cpu",
    }


def test_every_group_has_the_options_the_issue_names():
    from recoeval_tracking.data import DATASETS
    from recoeval_tracking.models import MODELS
    from recoeval_tracking.splitting import SPLITS

    # file-based and generated kinds (the in-memory "dataframe" kind has no config)
    assert set(_options("dataset")) == set(DATASETS) - {"dataframe"}
    assert set(_options("split")) == set(SPLITS)
    assert set(_options("model")) == set(MODELS)
    from recoeval_tracking.metrics.profiles import PROFILES

    # default, standard, all, and one option per library profile
    assert set(_options("metrics")) == {"default", "standard", "all"} | set(PROFILES)
    assert {"recometrics", "hivemall", "recbole", "implicit", "ranx"} <= set(PROFILES)
    assert set(_options("tracking")) == {"local", "server", "none"}
    for group in ("dataset", "split", "model"):
        assert set(schema.SCHEMAS[group]) == set(_options(group))


@pytest.mark.parametrize("group,option", _all_options())
def test_every_option_composes_against_its_schema(hydra_compose, group, option):
    overrides = [f"{group}={option}"]
    if group == "dataset" and option != "synthetic":
        overrides.append("dataset.path=/data/interactions")  # required, checked at run time
    if group == "model" and option == "ranked_file":
        overrides.append("model.path=/data/recs.csv")  # required, checked at run time
    cfg = hydra_compose(overrides)
    plain = OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    # a sweep's settings: no baselines, and a job that is none of them
    assert (plain.pop("baselines"), plain.pop("baseline_rank")) == ([], None)
    # the protocol of a fair study: validation then test when the split has a validation part
    assert (plain.pop("phase"), plain.pop("refit"), plain.pop("tune_baselines")) == (
        "auto",
        True,
        True,
    )
    assert set(plain) == {
        "dataset",
        "split",
        "model",
        "metrics",
        "tracking",
        "backend",
        "seed",
        "label",
        "nthreads",
        "progress",
        "plots",
        "objective",
        "model_allow",
    }
    node = cfg[group]
    expected = schema.SCHEMAS[group].get(option) or next(iter(schema.SCHEMAS[group].values()))
    assert OmegaConf.get_type(node) is expected
    # every field of the schema is present and no other key
    assert set(plain[group]) == {f.name for f in dataclasses.fields(expected)}
    if group == "dataset":
        assert plain["dataset"]["kind"] == option
    if group == "split":
        assert plain["split"]["name"] == option
    if group == "model":
        assert plain["model"]["name"] == option


@pytest.mark.parametrize(
    "option", [o for o in _options("metrics") if o not in ("default", "standard", "all")]
)
def test_profile_options_name_a_library_profile(hydra_compose, option):
    from recoeval_tracking.metrics.profiles import PROFILES
    from recoeval_tracking.metrics.registry import resolve_metrics
    from recoeval_tracking.options import EvalOptions

    plain = OmegaConf.to_container(hydra_compose([f"metrics={option}"]), resolve=True)
    assert plain["metrics"]["profile"] == option
    opts = EvalOptions.from_config(plain["metrics"])
    assert opts.profile == option and opts.metrics is None and opts.ties is None
    # evaluate() resolves the profile: its metrics, its tie policy, recorded in the definitions
    rng = np.random.default_rng(0)
    test = sp.random_array((30, 20), density=0.2, rng=rng, format="csr")
    res = rt.evaluate(None, test, scores=rng.random((30, 20)), options=opts)
    # the profile's metrics, plus those an aggregate is computed from (p_pooled needs tp)
    expected = [s.name for s in resolve_metrics(PROFILES[option]["metrics"])]
    assert list(res.definitions["metrics"]) == expected
    assert res.definitions["ties"] == PROFILES[option]["ties"]
    assert res.definitions["profile"] == option
    # an explicit list still wins over the profile's
    plain["metrics"]["names"] = ["ndcg"]
    assert EvalOptions.from_config(plain["metrics"]).metrics == ["ndcg"]


def test_seed_reaches_every_seeded_step(hydra_compose):
    plain = OmegaConf.to_container(hydra_compose(["seed=7"]), resolve=True)
    assert plain["dataset"]["seed"] == plain["split"]["seed"] == plain["model"]["seed"] == 7
    assert plain["metrics"]["seed"] == 7
    # one step can still be pinned on its own
    plain = OmegaConf.to_container(hydra_compose(["seed=7", "split.seed=3"]), resolve=True)
    assert (plain["split"]["seed"], plain["model"]["seed"]) == (3, 7)


def test_embedded_default(hydra_compose):
    plain = OmegaConf.to_container(hydra_compose(), resolve=True)
    assert plain["dataset"]["kind"] == "synthetic"
    assert (plain["dataset"]["n_users"], plain["dataset"]["n_items"]) == (2000, 1000)
    assert plain["split"]["name"] == "random" and plain["model"]["name"] == "als"
    assert plain["metrics"]["names"] == ["standard"]
    assert (plain["metrics"]["k"], plain["metrics"]["cumulative"]) == (10, True)
    assert plain["tracking"] == {
        "enabled": True,
        "uri": None,
        "experiment": "recoeval",
        "precision": "auto",
    }
    assert plain["progress"] == "auto"


def _error(hydra_compose, overrides):
    with pytest.raises(Exception) as info:
        cfg = hydra_compose(overrides)
        OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
    return info.value


def test_unknown_group_option_fails_at_compose_time(hydra_compose):
    msg = user_error_message(_error(hydra_compose, ["model=alss"]))
    assert "no option 'alss' in the config group 'model'" in msg
    for option in _options("model"):
        assert option in msg


def test_wrong_type_fails_at_compose_time(hydra_compose):
    msg = user_error_message(_error(hydra_compose, ["metrics.k=ten"]))
    assert "'metrics.k'" in msg and "wrong type" in msg and "'ten'" in msg


def test_misspelt_key_gets_a_suggestion(hydra_compose):
    msg = user_error_message(_error(hydra_compose, ["model.factor=32"]))
    assert "'model.factor' is not a setting" in msg and "model.factors" in msg
    msg = user_error_message(_error(hydra_compose, ["model=popularity", "model.factors=32"]))
    assert "model=als" in msg


def test_missing_dataset_path_is_reported(hydra_compose):
    msg = user_error_message(_error(hydra_compose, ["dataset=movielens_100k"]))
    assert "'dataset.path' is required" in msg and "dataset.path=" in msg


def test_messages_are_one_paragraph(hydra_compose):
    for overrides in (
        ["model=alss"],
        ["metrics.k=ten"],
        ["model.factor=32"],
        ["dataset=csv"],
        ["split.fold=1"],
    ):
        msg = user_error_message(_error(hydra_compose, overrides))
        assert msg is not None and "\n" not in msg and "Traceback" not in msg


def test_bugs_are_not_dressed_as_user_errors():
    assert user_error_message(ZeroDivisionError("division by zero")) is None


def test_configs_ship_inside_the_package(tmp_path, built_package):
    """What a non-editable install puts in site-packages holds every yaml of configs/ as the
    package recoeval_tracking.configs, and the command finds them there (pkg://)."""
    lib = built_package
    shipped = sorted(
        p.relative_to(lib / "recoeval_tracking" / "configs").as_posix()
        for p in (lib / "recoeval_tracking" / "configs").rglob("*.yaml")
    )
    expected = sorted(p.relative_to(CONFIGS).as_posix() for p in CONFIGS.rglob("*.yaml"))
    assert shipped == expected
    env = clean_env()
    env["PYTHONPATH"] = str(lib)
    run = tmp_path / "run"
    run.mkdir()
    probe = run_process(
        [
            sys.executable,
            "-c",
            (
                "import recoeval_tracking, recoeval_tracking.app.cli as c; "
                "print(recoeval_tracking.__file__); print(c.config_path())"
            ),
        ],
        run,
        env=env,
        timeout=60,
    )
    assert probe.returncode == 0, probe.stderr
    where, source = probe.stdout.split()
    assert Path(where).is_relative_to(lib) and source == "pkg://recoeval_tracking.configs"
    shown = run_process(
        [sys.executable, "-m", "recoeval_tracking", "--cfg", "job", "model=item_knn"],
        run,
        env=env,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    job = OmegaConf.create(shown.stdout)
    assert job.model.name == "item_knn" and job.dataset.kind == "synthetic"


def _registry(group: str):
    from recoeval_tracking.data import DATASETS
    from recoeval_tracking.models import MODELS
    from recoeval_tracking.splitting import SPLITS

    return {
        "dataset": (DATASETS, 0, "kind"),
        "split": (SPLITS, 1, "name"),
        "model": (MODELS, 0, "name"),
    }[group]


@pytest.mark.parametrize("group", ["dataset", "split", "model"])
def test_option_schemas_are_derived_from_the_registered_signatures(group):
    import inspect

    from recoeval_tracking.app._signatures import RUNTIME_PARAMS

    registry, inputs, discriminator = _registry(group)
    for option, node in schema.SCHEMAS[group].items():
        fields = {f.name: f for f in dataclasses.fields(node)}
        assert list(fields)[0] == discriminator and fields[discriminator].default == option
        assert "_target_" not in fields and not RUNTIME_PARAMS & set(fields)
        params = list(inspect.signature(registry[option]).parameters.values())[inputs:]
        for p in params:
            if p.name not in fields:  # left out by rule: **kwargs, runtime flags, non-config types
                assert (
                    p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
                    or p.name in RUNTIME_PARAMS
                    or p.default is not p.empty
                )
                continue
            f = fields[p.name]
            default = f.default_factory() if f.default is dataclasses.MISSING else f.default
            expected = "???" if p.default is p.empty else p.default
            assert default == expected, (option, p.name)
        # the generated class is importable under its name (the joblib launcher pickles configs)
        assert getattr(schema, node.__name__) is node and node.__module__ == schema.__name__


def test_every_configurable_registry_entry_has_a_schema_node():
    from hydra.core.config_store import ConfigStore

    stored = ConfigStore.instance().repo["schema"]
    for group in ("dataset", "split", "model"):
        registry, _, _ = _registry(group)
        # the in-memory "dataframe" kind needs a DataFrame, which a config cannot hold
        assert set(schema.SCHEMAS[group]) == set(registry) - {"dataframe"}
        assert {f"{o}.yaml" for o in schema.SCHEMAS[group]} == set(stored[group])


@pytest.mark.parametrize(
    "group,option", [(g, o) for g in ("dataset", "split", "model") for o in _options(g)]
)
def test_option_yaml_keeps_only_deliberate_overrides(group, option):
    raw = OmegaConf.to_container(OmegaConf.load(CONFIGS / group / f"{option}.yaml"))
    assert raw.pop("defaults") == [f"/schema/{group}/{option}@_here_", "_self_"]
    defaults = OmegaConf.to_container(OmegaConf.structured(schema.SCHEMAS[group][option]))
    for key, value in raw.items():
        assert key in defaults
        # an interpolation (${seed}) or a value other than the signature's default
        assert (isinstance(value, str) and value.startswith("${")) or value != defaults[key], key


def test_composed_configs_pickle(hydra_compose):
    """The joblib launcher sends composed configs to its workers by pickling them."""
    import pickle

    for group in ("dataset", "split", "model"):
        for option in _options(group):
            overrides = [f"{group}={option}"]
            if group == "dataset" and option != "synthetic":
                overrides.append("dataset.path=/data/interactions")
            cfg = hydra_compose(overrides)
            again = pickle.loads(pickle.dumps(cfg))
            assert OmegaConf.get_type(again[group]) is OmegaConf.get_type(cfg[group])
            assert OmegaConf.to_container(again) == OmegaConf.to_container(cfg)
