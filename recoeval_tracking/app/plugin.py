"""Our config groups and tracking inside the user's own Hydra app.

A training script of the user's own, with its own ``@hydra.main``, composes our groups
(``dataset``, ``split``, ``metrics``, ``tracking``) next to its own ``model`` group by putting
``pkg://recoeval_tracking.configs`` on its search path, names our sweep callback, and calls two
functions from its task::

    # conf/config.yaml of the user's app
    defaults:
      - dataset: movielens_100k      # ours (dataset.path=... on the command line)
      - split: random                # ours
      - metrics: standard            # ours
      - tracking: local              # ours
      - model: ease                  # theirs: conf/model/ease.yaml
      - _self_
    seed: 0                          # our options interpolate ${seed}
    hydra:
      searchpath: [pkg://recoeval_tracking.configs]
      callbacks:
        mlflow_sweep:
          _target_: recoeval_tracking.app.callbacks.MlflowSweepCallback

    # train.py
    from recoeval_tracking.app import evaluate_job, load_split

    @hydra.main(version_base="1.3", config_path="conf", config_name="config")
    def main(cfg):
        data = load_split(cfg)                         # our dataset and split groups
        model = hydra.utils.instantiate(cfg.model).fit(data.train)
        return evaluate_job(cfg, model, data)          # metrics, job folder, MLflow run

:func:`evaluate_job` runs exactly what a job of ``recoeval-track`` runs after ``fit``: the
evaluation, the job folder (Hydra's output directory), and one MLflow run, a child of the
sweep's parent under ``-m`` (with the callback above), or, when the task has a run open
(``mlflow.start_run()``), that run. ``recoeval-track-report select.sweep_id=...`` then reports
those runs as ours. The returned dict's ``objective`` is what ``hydra/sweeper=optuna`` (ours)
optimises.

Importing this module registers our structured configs (:mod:`.schema`), which our group
options extend; import it (or ``recoeval_tracking.app``) before ``@hydra.main`` runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import schema  # noqa: F401 - registers the schema nodes our config options extend
from .cli import register_search_plugin

__all__ = ["JobData", "load_split", "evaluate_job"]

register_search_plugin()  # hydra/sweeper=optuna in the user's app too (editable installs)


@dataclass(eq=False)
class JobData:
    """The data and split a job's config describes.

    Attributes
    ----------
    data : Interactions
        The prepared dataset (after ``dataset.implicit``, minimum counts, k-core).
    split : Split
        Its split (fold ``split.fold`` of a k-fold strategy).
    """

    data: Any
    split: Any

    @property
    def train(self) -> Any:
        """The training matrix to fit on: a ``scipy.sparse.csr_array``, users x items, in the
        split's index space (row ``u`` is ``user_ids[u]``, column ``i`` is ``item_ids[i]``)."""
        return self.split.train.matrix

    @property
    def user_ids(self) -> Any:
        """The dataset's own id of each row of :attr:`train`."""
        return self.split.train.user_ids

    @property
    def item_ids(self) -> Any:
        """The dataset's own id of each column of :attr:`train`."""
        return self.split.train.item_ids


def _plain(cfg: Any) -> dict[str, Any]:
    from omegaconf import DictConfig, OmegaConf

    from ..jobdir.redact import add_secret_values, env_interpolated_values

    plain = (
        OmegaConf.to_container(cfg, resolve=True, throw_on_missing=True)
        if isinstance(cfg, DictConfig)
        else cfg
    )
    if isinstance(cfg, DictConfig):  # values taken from the environment are written nowhere
        add_secret_values(env_interpolated_values(OmegaConf.to_container(cfg), plain))
    return {str(k): v for k, v in dict(plain).items() if k != "hydra"}


def _hydra_context() -> Any:
    from hydra.core.hydra_config import HydraConfig

    from .job_name import check_hydra_job_name

    check_hydra_job_name()  # the user's app may not name our callback, which checks earlier
    return HydraConfig.get() if HydraConfig.initialized() else None


def _base_dir(hc: Any) -> Path:
    return Path(hc.runtime.cwd) if hc is not None else Path.cwd()


def load_split(cfg: Any, base_dir: str | Path | None = None) -> JobData:
    """Load, prepare and split the data that the config's ``dataset`` and ``split`` sections
    describe, exactly as a job of ``recoeval-track`` does.

    Parameters
    ----------
    cfg : DictConfig or dict
        The task's config (``dataset`` and ``split`` sections, e.g. composed from our groups).
    base_dir : str or Path, optional
        Directory that relative paths (``dataset.path``) are taken from: by default the
        directory the command was started from (Hydra's ``runtime.cwd``), else the current one.
    """
    from .pipeline import load_data, prepare_data, split_data

    plain = _plain(cfg)
    base = Path(base_dir) if base_dir is not None else _base_dir(_hydra_context())
    X = prepare_data(load_data(dict(plain["dataset"]), base), dict(plain["dataset"]))
    return JobData(X, split_data(X, dict(plain["split"])))


def evaluate_job(
    cfg: Any,
    model: Any,
    data: JobData,
    *,
    job_dir: str | Path | None = None,
    label: str | None = None,
) -> dict[str, Any]:
    """Evaluate a model the caller fitted on ``data``, write the job folder and log it to MLflow.

    Parameters
    ----------
    cfg : DictConfig or dict
        The task's config: our ``metrics`` and ``tracking`` sections (and ``dataset``,
        ``split``, logged with the rest of the config as the run's params; ``hydra`` left
        out); ``objective`` optional.
    model : object
        The fitted model, keeping the protocol of
        :class:`~recoeval_tracking.models.UserModel` (``score_users``, ``factors`` or
        ``recommend``), or one of our baselines.
    data : JobData
        What :func:`load_split` returned, the data ``model`` was fitted on.
    job_dir : str or Path, optional
        Where the job folder is written: by default Hydra's output directory of the job.
    label : str, optional
        The model's name in run names and records: by default the option picked in the
        ``model`` group (``ease``), else the model's class name.

    Returns
    -------
    dict
        As :func:`recoeval_tracking.app.pipeline.run_job`: ``job_dir``, ``metrics``,
        ``timings``, ``run_id``, ``dataset``, ``objective``. Return it from the task: our
        Optuna sweeper reads its ``objective``.
    """
    from ..models import Model, UserModel
    from .callbacks import job_sweep_record
    from .pipeline import run_job

    hc = _hydra_context()
    plain = _plain(cfg)
    base = _base_dir(hc)
    choices = dict(hc.runtime.choices) if hc is not None else {}
    label = label or choices.get("model") or type(model).__name__
    if not isinstance(model, Model):
        model = UserModel.fitted(
            model, data.train.shape[0], data.train.shape[1], label=label, where=f"model={label}"
        )
    plain.setdefault("model", {"name": label})
    overrides = list(hc.overrides.task) if hc is not None else []
    sweep = job_sweep_record(hc) if hc is not None else None
    if job_dir is None:
        job_dir = Path(hc.runtime.output_dir) if hc is not None else Path.cwd() / "recoeval-job"
    run_id, uri = _open_run(plain)
    return run_job(
        plain,
        job_dir,
        overrides=overrides,
        sweep=sweep,
        base_dir=base,
        model_label=label,
        fitted=model,
        data=data,
        run_id=run_id,
        tracking_uri=uri,
    )


def _open_run(plain: dict[str, Any]) -> tuple[str | None, str | None]:
    """The id and store of the run the task has open (``mlflow.start_run()``), when tracking
    is on and mlflow is loaded (a task that opened a run has imported it); else Nones."""
    import sys

    tracking = plain.get("tracking") or {}
    if not tracking.get("enabled", False) or "mlflow" not in sys.modules:
        return None, None
    from ..tracking.runs import active_run

    return active_run()
