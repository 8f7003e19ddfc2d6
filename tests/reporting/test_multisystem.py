"""The statistics over several systems as a comparison shows them: the labelled tables of
reporting.multisystem and reporting.posthoc hold the numbers of recoeval_tracking.stats on the
same arrays, under the systems' names (Demšar's Table 6 as the worked example)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from demsar import DEMSAR_TABLE6

from recoeval_tracking import stats as st
from recoeval_tracking.reporting import multisystem as ms
from recoeval_tracking.reporting import posthoc

NAMES = list(DEMSAR_TABLE6.columns)
# Demšar (2006), Table 6, the first nine data sets (the systems in Table 6's order)
TABLE = DEMSAR_TABLE6.iloc[:9]


def test_friedman_ranks_and_nemenyi_carry_the_names():
    res = ms.friedman_test(TABLE)
    ref = st.friedman_test(TABLE.to_numpy())
    assert list(res.mean_ranks.index) == NAMES
    np.testing.assert_array_equal(res.mean_ranks.to_numpy(), ref.mean_ranks)
    assert (res.statistic, res.pvalue, res.n_datasets) == (ref.statistic, ref.pvalue, 9)
    # one definition of the fields: the labelled result is the statistics' own, ranks named
    assert isinstance(res, st.FriedmanResult)
    others = [f.name for f in dataclasses.fields(ref) if f.name != "mean_ranks"]
    assert [f.name for f in dataclasses.fields(res)] == ["mean_ranks", *others]
    assert [getattr(res, n) for n in others] == [getattr(ref, n) for n in others]
    p = ms.nemenyi_pvalues(res.mean_ranks, 9)
    assert list(p.index) == list(p.columns) == NAMES
    np.testing.assert_array_equal(p.to_numpy(), st.nemenyi_pvalues(ref.mean_ranks, 9))
    with_nan = TABLE.copy()
    with_nan.iloc[2, 1] = np.nan
    ranks = ms.rank_table(with_nan)
    assert TABLE.index[2] not in ranks.index and list(ranks.columns) == NAMES
    np.testing.assert_array_equal(ranks.to_numpy(), st.rank_table(with_nan.to_numpy()))


def test_the_control_and_the_cliques_are_named():
    ranks = pd.Series([3.143, 2.000, 2.893, 1.964], index=NAMES)
    res = ms.posthoc_vs_control(ranks, 14, "C4.5+m+cf")
    ref = st.posthoc_vs_control(ranks.to_numpy(), 14, control=3)
    assert list(res.index) == ["C4.5", "C4.5+m", "C4.5+cf"]
    np.testing.assert_array_equal(res["z"].to_numpy(), ref.z)
    np.testing.assert_array_equal(res["p_adj"].to_numpy(), ref.p_adj)
    assert res.loc["C4.5", "mean_rank"] == 3.143
    # sorted 1.964, 2.000, 2.893, 3.143: the first three within 1.12, then the last two
    assert ms.cd_cliques(ranks, 1.12) == [["C4.5+m+cf", "C4.5+m", "C4.5+cf"], ["C4.5+cf", "C4.5"]]
    with pytest.raises(ValueError, match="'control'"):
        ms.posthoc_vs_control(ranks, 14, "C5.0")


def test_tukey_rows_name_each_pair_in_column_order():
    rng = np.random.default_rng(1)
    X = rng.normal([0.3, 0.32, 0.4], 0.05, (30, 3))
    for paired in (True, False):
        res = ms.tukey_hsd(X, ["a", "b", "c"], paired=paired)
        ref = st.tukey_hsd(X, paired=paired)
        assert list(zip(res["a"], res["b"])) == [("a", "b"), ("a", "c"), ("b", "c")]
        for (_, row), (i, j) in zip(res.iterrows(), [(0, 1), (0, 2), (1, 2)]):
            assert (row["diff"], row["low"], row["high"], row["p"]) == (
                ref.diff[i, j],
                ref.low[i, j],
                ref.high[i, j],
                ref.p[i, j],
            )
    with pytest.raises(ValueError, match="'names'"):
        ms.tukey_hsd(X, ["a", "b"])


def test_pairwise_posthoc_tables_and_cliques_go_by_name():
    P = posthoc.pairwise_tests(TABLE)
    assert list(P.index) == list(P.columns) == NAMES
    np.testing.assert_array_equal(P.to_numpy(), st.pairwise_tests(TABLE.to_numpy()))
    # the cliques read the p-values by name: the table's order does not matter
    ranks = pd.Series({"a": 1.2, "b": 1.9, "c": 2.9})
    p = pd.DataFrame(
        [[1, 0.3, 0.01], [0.3, 1, 0.2], [0.01, 0.2, 1]], index=list("abc"), columns=list("abc")
    )
    shuffled = p.loc[list("cab"), list("bca")]
    assert posthoc.pairwise_cliques(ranks, shuffled) == [["a", "b"], ["b", "c"]]
