"""The groups a critical-difference diagram joins with a bar (Demšar 2006, section 3.2.2): the
maximal runs of systems, in mean-rank order, whose mean ranks span less than the critical
difference. Each group is drawn once: none is repeated, none lies inside another (a group
nested in the previous one drew a second, redundant bar), and no system pair in a group is
significantly different."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from recoeval_tracking.reporting.multisystem import cd_cliques


def reference_cliques(ranks: pd.Series, cd: float) -> list[list[str]]:
    """By the definition, slowly: every run of consecutive systems (in mean-rank order, ties
    in the given order) spanning less than ``cd``, of two systems or more, kept when no other
    such run contains it; ordered by first member."""
    order = ranks.sort_values(kind="stable")
    names, r = list(order.index), order.to_numpy()
    runs = [(i, j) for i, j in itertools.combinations(range(len(r)), 2) if r[j] - r[i] < cd]
    maximal = [
        (i, j) for i, j in runs if not any(a <= i and j <= b and (a, b) != (i, j) for a, b in runs)
    ]
    return [names[i : j + 1] for i, j in sorted(maximal)]


def test_a_worked_example():
    # A 1.0, B 1.5, C 2.2, D 3.0, E 3.1 with CD 1.0: A-B (0.5), B-C (0.7), C-D-E (0.9);
    # D-E lies inside C-D-E and gets no bar of its own, nor does B-C-D (1.5 >= CD).
    ranks = pd.Series({"A": 1.0, "B": 1.5, "C": 2.2, "D": 3.0, "E": 3.1})
    assert cd_cliques(ranks, 1.0) == [["A", "B"], ["B", "C"], ["C", "D", "E"]]


def test_a_group_nested_in_the_previous_one_is_not_drawn_again():
    # every system within CD of the first: one bar over all four, nothing else
    ranks = pd.Series({"w": 1.0, "x": 1.2, "y": 1.4, "z": 1.9})
    assert cd_cliques(ranks, 1.0) == [["w", "x", "y", "z"]]
    # two overlapping bars; the tail x..z lies inside the second and is not drawn
    ranks = pd.Series({"v": 0.5, "w": 1.0, "x": 1.6, "y": 2.0, "z": 2.3})
    assert cd_cliques(ranks, 1.4) == [["v", "w", "x"], ["w", "x", "y", "z"]]


def test_no_bar_when_every_pair_differs_and_order_does_not_matter():
    ranks = pd.Series({"c": 3.0, "a": 1.0, "b": 2.0})
    assert cd_cliques(ranks, 0.9) == []
    assert cd_cliques(ranks, 1.0) == []  # a span equal to CD is significant: no bar
    assert cd_cliques(ranks, 1.01) == [["a", "b"], ["b", "c"]]


@pytest.mark.parametrize("seed", range(40))
def test_random_rankings_match_the_definition(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 9))
    ranks = pd.Series(np.round(rng.uniform(1, k, k), 1), index=[f"s{i}" for i in range(k)])
    cd = float(rng.uniform(0.3, 2.5))
    got = cd_cliques(ranks, cd)
    assert got == reference_cliques(ranks, cd)
    sets = [set(g) for g in got]
    assert all(not (a <= b) for a, b in itertools.permutations(sets, 2))  # none nested
    for group in got:  # pairwise not significantly different
        values = ranks[group]
        assert values.max() - values.min() < cd
