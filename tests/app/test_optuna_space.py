"""Hydra's sweep grammar read as Optuna distributions (``hydra/sweeper=optuna``).

Expected values come from the grammar's definitions (Hydra's docs, "Extended Override
grammar"): ``interval(a,b)`` is the real interval [a, b]; ``int(...)`` casts its bounds;
``tag(log, ...)`` marks a log scale; ``range(a,b,s)`` is Python's range (``b`` excluded);
``choice(...)`` and ``x,y`` list the values.
"""

from __future__ import annotations

import pytest

optuna = pytest.importorskip("optuna", reason="optuna is not installed (extra 'search')")

from optuna.distributions import (  # noqa: E402
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from hydra_plugins.recoeval_optuna_sweeper.optuna_sweeper import objective_value  # noqa: E402
from hydra_plugins.recoeval_optuna_sweeper.search_space import (  # noqa: E402
    SearchSpaceError,
    format_override,
    search_space,
)


@pytest.mark.parametrize(
    "override,expected",
    [
        ("a=interval(0.5,2)", FloatDistribution(0.5, 2.0)),
        ("a=interval(1,5)", FloatDistribution(1.0, 5.0)),  # interval bounds are floats
        ("a=int(interval(8,64))", IntDistribution(8, 64)),
        ("a=tag(log,interval(0.001,1))", FloatDistribution(0.001, 1.0, log=True)),
        ("a=int(tag(log,interval(8,64)))", IntDistribution(8, 64, log=True)),
        ("a=range(1,10,3)", IntDistribution(1, 7, step=3)),  # 1, 4, 7 (10 excluded)
        ("a=range(2,10,2)", IntDistribution(2, 8, step=2)),  # 2, 4, 6, 8
        ("a=range(5)", IntDistribution(0, 4)),
        ("a=choice(1,2,x)", CategoricalDistribution([1, 2, "x"])),
        ("a=16,64", CategoricalDistribution([16, 64])),
        ("model=als,popularity", CategoricalDistribution(["als", "popularity"])),
    ],
)
def test_sweep_overrides_become_distributions(override, expected):
    space, fixed = search_space([override])
    key = override.split("=", 1)[0]
    assert space == {key: expected} and fixed == []


def test_float_range_is_the_list_of_its_values():
    space, _ = search_space(["a=range(0.5,2,0.5)"])
    assert space["a"] == CategoricalDistribution([0.5, 1.0, 1.5])


def test_fixed_overrides_pass_through_and_the_command_line_wins_over_params():
    space, fixed = search_space(
        ["model=als", "model.factors=int(interval(8,64))", "seed=3"],
        {
            "model.factors": "int(interval(2,4))",
            "model.regularization": "tag(log,interval(0.01,1))",
        },
    )
    assert fixed == ["model=als", "seed=3"]
    assert space == {
        "model.factors": IntDistribution(8, 64),
        "model.regularization": FloatDistribution(0.01, 1.0, log=True),
    }


@pytest.mark.parametrize(
    "override,message",
    [
        ("a=tag(log,interval(0,1))", "needs low > 0"),
        ("a=interval(3,1)", "needs low < high"),
        ("a=tag(log,range(1,5))", "not range"),
        ("a=range(5,1)", "is empty"),
        ("a=shuffle(1,2)", "shuffle"),
        ("a=choice([1,2],[3])", "numbers, strings"),
    ],
)
def test_unsearchable_overrides_are_named(override, message):
    # Matched by name: Hydra's plugin scan may execute the plugin's modules again during the
    # run, after which the class raised is a fresh SearchSpaceError, not this module's import.
    with pytest.raises(Exception, match=message) as info:
        search_space([override])
    assert type(info.value).__name__ == SearchSpaceError.__name__
    assert str(info.value).startswith("a:")


@pytest.mark.parametrize(
    "value",
    [
        3,
        -2,
        0.001,
        1e-12,
        12.5,
        True,
        False,
        None,
        "als",
        "item_knn",
        "two words",
        "it's",
        "null",
        "a,b",
        "x=1",
    ],
)
def test_format_override_reads_back_through_hydras_parser(value):
    from hydra.core.override_parser.overrides_parser import OverridesParser

    parsed = OverridesParser.create().parse_overrides([format_override("k.v", value)])[0]
    assert not parsed.is_sweep_override()
    got = parsed.value()
    assert got == value and type(got) is type(value)


def test_objective_value_of_a_job():
    assert objective_value({"objective": 0.25, "metrics": {}}) == 0.25
    assert objective_value(0.5) == 0.5
    with pytest.raises(ValueError, match="objective=ndcg_at_10"):
        objective_value({"objective": None})
