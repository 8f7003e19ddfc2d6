"""The registry is the one record per metric: every consumer reads from it, so check it is whole."""

from __future__ import annotations

import pytest

from recoeval_tracking.engine.codes import N_AT_K, N_WHOLE, AtK, Whole
from recoeval_tracking.metrics.registry import METRICS, greater_is_better, spec_for_key


@pytest.mark.parametrize("name", list(METRICS))
def test_every_metric_is_fully_described(name):
    s = METRICS[name]
    assert s.formula and s.label and s.kind in ("at_k", "whole", "list", "aggregate")
    if s.kind == "at_k":
        assert isinstance(s.code, AtK) and s.compute is None
    elif s.kind == "whole":
        assert isinstance(s.code, Whole) and s.compute is None
    else:
        assert callable(s.compute), f"{name}: list and aggregate metrics need a compute function"
    assert all(n in METRICS and METRICS[n].stage == "kernel" for n in s.needs)


def test_kernel_codes_are_used_once_each():
    """Every code has one registered metric, but ``Whole.ROC_AUC_AVG``: gauc's per-user AUC
    under average ranks for ties, an engine column that gauc asks for, not a metric."""
    at_k = sorted(int(s.code) for s in METRICS.values() if s.kind == "at_k")
    whole = sorted(int(s.code) for s in METRICS.values() if s.kind == "whole")
    assert at_k == list(range(N_AT_K))
    assert whole == [c for c in range(N_WHOLE) if c != Whole.ROC_AUC_AVG]


def test_direction_of_keys():
    assert greater_is_better("ndcg_at_10") and greater_is_better("roc_auc")
    assert not greater_is_better("mpr") and not greater_is_better("eval_seconds")
    assert spec_for_key("ndcg_at_k") is METRICS["ndcg"]
    assert spec_for_key("coverage_at_10") is METRICS["coverage"]
    assert spec_for_key("ndcg_at_x") is None and spec_for_key("users_evaluated") is None


def test_standard_is_every_metric_but_the_peer_variants_and_the_recall_precision_table():
    """``"standard"`` (the app's default) leaves out exactly the metrics whose record says so:
    the peers' own variants of a metric it has, and trec_eval's 11 interpolated precisions with
    their mean; ``"all"`` has every registered metric."""
    from recoeval_tracking.metrics.registry import METRICS, resolve_metrics

    every = {s.name for s in resolve_metrics("all")}
    standard = {s.name for s in resolve_metrics("standard")}
    assert every == set(METRICS)
    left_out = every - standard
    peers = {"ap_hits", "set_map", "gini_items", "entropy_mean", "11pt_avg", "ndcg_spark"}
    peers |= {"ndcg_exp1", "ap_elliot", "gini_complement"}
    peers |= {"p_list", "tap_list", "ndcg_bin_jk", "ndcg_jk", "ndcg_bin_idealk", "ncrr", "rr_full"}
    peers |= {"11pt_avg10", "unj"} | {f"iprec10_at_recall_{j / 10:.2f}" for j in range(11)}
    assert left_out == peers | {f"iprec_at_recall_{j / 10:.2f}" for j in range(11)}
    assert all(not METRICS[n].standard for n in left_out)
    # the base metrics these vary are in it
    assert {"ap", "gini", "entropy", "ndcg", "coverage", "pr_auc"} <= standard
