"""How often a sweep composes its jobs' configs. Each composition is Hydra reading and merging
every config file of the job (0.07-0.2 s): the sweep's own config once (Hydra no longer
composes it a first time to find the run mode, which ``-m`` gives), then every job once, before
any runs (a job that does not compose stops the sweep first); Hydra's basic launcher, which
runs the jobs in this process, is handed those configs rather than composing each job again."""

from __future__ import annotations

from commands import run_main
from hydra._internal.config_loader_impl import ConfigLoaderImpl

TINY = ["dataset.n_users=40", "dataset.n_items=20", "plots=false", "progress=false"]


def _compositions(monkeypatch) -> list[list[str]]:
    """The overrides of every composition Hydra's config loader makes from now on."""
    calls: list[list[str]] = []
    original = ConfigLoaderImpl.load_configuration

    def counted(self, config_name, overrides, *args, **kwargs):
        calls.append(list(overrides))
        return original(self, config_name, overrides, *args, **kwargs)

    monkeypatch.setattr(ConfigLoaderImpl, "load_configuration", counted)
    return calls


def test_each_job_of_a_local_sweep_is_composed_once(tmp_path, monkeypatch):
    import yaml

    calls = _compositions(monkeypatch)
    proc = run_main(
        ["-m", "model=popularity,random", *TINY, "seed=3", "tracking=none", "hydra.sweep.dir=s"],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(calls) == 3, calls  # the sweep's config, then each job's
    for num, model in enumerate(("popularity", "random")):
        assert sum(f"model={model}" in c for c in calls) == 1, calls
        # each job ran with the config the check composed: its own overrides, and the job
        # number Hydra's launcher gave it
        folder = tmp_path / "s" / str(num)
        assert (folder / "metrics.json").is_file()
        hydra_cfg = yaml.safe_load((folder / ".hydra" / "hydra.yaml").read_text())["hydra"]
        assert hydra_cfg["job"]["num"] == num
        assert f"model={model}" in hydra_cfg["overrides"]["task"]
        config = yaml.safe_load((folder / ".hydra" / "config.yaml").read_text())
        assert config["model"]["name"] == model and config["seed"] == 3


def test_each_trial_of_a_local_optuna_search_is_composed_once(tmp_path, monkeypatch):
    calls = _compositions(monkeypatch)
    proc = run_main(
        [
            "-m",
            "hydra/sweeper=optuna",
            "hydra.sweeper.n_trials=2",
            "hydra.sweeper.n_jobs=2",
            "hydra.sweeper.seed=0",  # two different draws (unseeded, 1 in 19 drew one twice)
            "objective=ndcg_at_10",
            "model=item_knn",
            "model.neighbours=int(interval(2,20))",
            *TINY,
            "tracking=none",
            "hydra.sweep.dir=o",
        ],
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    trials = [
        c for c in calls if any(o.startswith("model.neighbours=") and "(" not in o for o in c)
    ]
    assert len({tuple(c) for c in trials}) == 2  # two trials, each composed once
    assert len(trials) == 2, trials
    assert len(list((tmp_path / "o").glob("*/metrics.json"))) == 2
