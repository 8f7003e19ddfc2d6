"""A fair study from a notebook: configurations chosen on validation, the chosen one tested once.

:func:`select_and_test` is the Python side of the app's protocol
(:mod:`recoeval_tracking.app.study`): every configuration fits on the split's train part and is
evaluated on its validation part (every item not in train ranked); the one with the best
validation ``objective`` is refit on train + validation (unless ``refit=False``) and evaluated
once on test (every item not in train or validation ranked). On the split of an app's job, with
the same models, metrics and ``seed``, the numbers are the app's.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from ._validation import InputError, param_error

__all__ = ["Selection", "select_and_test"]

_FUNC = "select_and_test"


@dataclass
class Selection:
    """What :func:`select_and_test` returns.

    Attributes
    ----------
    chosen : str
        The name of the configuration chosen on validation.
    objective : str
        The metric the choice was made by (``ndcg_at_10``), read on validation.
    validation : pandas.DataFrame
        One row per configuration, in the order given: ``configuration``,
        ``val_<objective>``, ``fit_seconds``, ``chosen``.
    validation_results : dict of str to Results
        Each configuration's evaluation on the validation part.
    test : Results
        The chosen configuration's one evaluation on test.
    refit : bool
        Whether the chosen configuration was refit on train + validation before the test.
    protocol : str
        The one line every surface states (:func:`~recoeval_tracking.app.protocol.protocol_line`
        reads the same).
    """

    chosen: str
    objective: str
    validation: pd.DataFrame
    validation_results: dict[str, Any]
    test: Any
    refit: bool
    protocol: str
    fit_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        value = self.test.means.get(self.objective, math.nan)
        return (
            f"Selection(chosen={self.chosen!r} among {len(self.validation)}, "
            f"test {self.objective}={value:.4f}; {self.protocol})"
        )


def _as_model(made: Any, name: str) -> Any:
    """Our models and :class:`~recoeval_tracking.models.UserModel` as they are; any other
    object with ``fit`` and a scoring method adapted by ``UserModel``."""
    from .models import UserModel

    if hasattr(made, "eval_inputs"):
        return made
    try:
        return UserModel(made)
    except InputError as err:
        raise param_error(
            "configurations",
            _FUNC,
            "a mapping of names to functions that return a new, unfitted model",
            made,
            f"The one named {name!r} returned an object that is not a model: {err}",
        ) from err


def _fit(model: Any, train: Any) -> float:
    t0 = time.perf_counter()
    model.fit(train.matrix, user_ids=train.user_ids, item_ids=train.item_ids)
    return time.perf_counter() - t0


def select_and_test(
    split: Any,
    configurations: Mapping[str, Callable[[], Any]],
    *,
    objective: str = "ndcg_at_10",
    refit: bool = True,
    k: int = 10,
    seed: int = 0,
    **evaluate_kwargs: Any,
) -> Selection:
    r"""Choose among ``configurations`` on the split's validation part; test the chosen one once.

    With a split ``(T, V, S)`` (train, validation, test) and configurations :math:`c`, each
    :math:`c` fits on :math:`T` and is scored on :math:`V` ranking every item not in
    :math:`T`; the chosen

    .. math:: c^\star = \arg\max_c \frac{1}{|U_V|} \sum_{u \in U_V} m_u(c; T, V)

    (``argmin`` for a metric where lower is better; ties to the first given) refits on
    :math:`T \cup V` and is evaluated once on :math:`S`, ranking every item not in
    :math:`T \cup V`. No number reported on test is used to choose (Jannach & Chen, "Editorial:
    Offline evaluation of recommender systems", ACM TORS; the protocol of RecBole and Elliot).

    Parameters
    ----------
    split : Split
        A split with a validation part (``rt.make_split("random", X, validation_fraction=0.1)``).
    configurations : mapping of str to callable
        Name -> a function returning a new, unfitted model each call (``lambda:
        rt.make_model("item_knn", neighbours=50)``, or your own class: anything with ``fit``
        and ``score_users``, ``factors`` or ``recommend``).
    objective : str
        The metric of the choice, read on validation (``ndcg_at_10``; ``val_`` prefix allowed).
    refit : bool
        Refit the chosen configuration on train + validation before the test (default); False
        keeps its fit on train (the ranking on test still excludes the validation items).
    k : int
    seed : int
        The tie seed (the app's top-level ``seed``, 0 by default).
    **evaluate_kwargs
        Passed to :func:`recoeval_tracking.evaluate` (``metrics=``, ``cumulative=``...).

    Returns
    -------
    Selection

    Raises
    ------
    InputError
        The split has no validation part, ``configurations`` is empty or not a mapping of
        names to callables, or ``objective`` is not a metric the evaluation computes.

    Examples
    --------
    >>> import recoeval_tracking as rt
    >>> X = rt.make_synthetic(n_users=120, n_items=60, n_interactions=2400, seed=0)
    >>> split = rt.make_split("random", X, test_fraction=0.2, validation_fraction=0.1, seed=0)
    >>> sel = rt.select_and_test(
    ...     split,
    ...     {f"knn {n}": (lambda n=n: rt.make_model("item_knn", neighbours=n)) for n in (5, 40)},
    ...     metrics=["ndcg", "r"],
    ... )
    >>> sel.chosen in ("knn 5", "knn 40"), sorted(sel.validation.columns)
    (True, ['chosen', 'configuration', 'fit_seconds', 'val_ndcg_at_10'])
    """
    from .metrics import evaluate
    from .metrics.registry import greater_is_better
    from .splitting import Split

    if not isinstance(split, Split):
        raise param_error("split", _FUNC, "a Split (rt.make_split)", split)
    if not split.has_validation:
        raise InputError(
            f"The 'split' parameter of {_FUNC} must have a validation part; {split!r} has "
            "none. Make one with rt.make_split(..., validation_fraction=0.1) (random), "
            "validation_n=1 (leave_n_out) or validation_quantile= (temporal_global)."
        )
    if (
        not isinstance(configurations, Mapping)
        or not configurations
        or not all(isinstance(n, str) and callable(f) for n, f in configurations.items())
    ):
        raise param_error(
            "configurations",
            _FUNC,
            "a non-empty mapping of names to functions that return a new, unfitted model",
            configurations,
        )
    if not isinstance(objective, str) or not objective:
        raise param_error("objective", _FUNC, "a metric key such as 'ndcg_at_10'", objective)
    key = objective.removeprefix("val_")
    val, test = split.validation_split(), split.test_split(refit=refit)

    def run(model: Any, part: Any) -> Any:
        # the phase's split itself: its Results carry the fingerprint an app's job records
        inputs = model.eval_inputs(k, part.test_users)
        return evaluate(part, **inputs, k=k, seed=seed, **evaluate_kwargs)

    rows, results, models, seconds = [], {}, {}, 0.0
    for name, make in configurations.items():
        model = _as_model(make(), name)
        fit = _fit(model, split.train)
        seconds += fit
        res = run(model, val)
        if key not in res.means:
            shown = ", ".join(sorted(res.means)[:12])
            raise param_error(
                "objective",
                _FUNC,
                f"a metric the evaluation computes ({shown}, ...)",
                objective,
                "Pick one of those, or ask for it with metrics=.",
            )
        results[name], models[name] = res, model
        rows.append(
            {"configuration": name, f"val_{key}": float(res.means[key]), "fit_seconds": fit}
        )
    table = pd.DataFrame(rows)
    values = table[f"val_{key}"]
    ok = values.notna()
    if not ok.any():
        raise InputError(
            f"{_FUNC}: every configuration's val_{key} is NaN (no validation user has a "
            "positive); raise the split's validation part."
        )
    best = values[ok].idxmax() if greater_is_better(key) else values[ok].idxmin()
    chosen = str(table.loc[best, "configuration"])
    table["chosen"] = table["configuration"] == chosen
    model = models[chosen]
    if refit:
        model = _as_model(configurations[chosen](), chosen)
        seconds += _fit(model, test.train)
    tested = run(model, test)
    from .app.protocol import protocol_line  # the app's line (no Hydra in that module)

    protocol = protocol_line(
        on_validation=True,
        objective=key,
        configurations={"model": len(configurations)},
        refit=bool(refit),
    )
    return Selection(
        chosen=chosen,
        objective=key,
        validation=table,
        validation_results=results,
        test=tested,
        refit=bool(refit),
        protocol=protocol,
        fit_seconds=seconds,
    )
