"""Library profiles: one name selects the definitions another library uses.

A profile maps the metric names of a library to registered metrics (variants of ours) and fixes
the tie policy, so that ``evaluate(..., profile="recbole")`` reproduces that library's numbers on
the same ranking. The table below is the one in docs/guides/profiles.md.

=============  ==================================================================================
profile        metrics (library name -> registered metric), ties and protocol
=============  ==================================================================================
recometrics    P@K p, TP@K tp, R@K r, AP@K ap (/|T|), TAP@K tap (/min(K,|T|)), NDCG@K ndcg
               (linear gains), Hit@K hit, RR@K rr, ROC-AUC roc_auc (catalog), PR-AUC pr_auc;
               ties broken by seeded noise; a +-inf score makes the user NaN (inf_scores="nan")
hivemall       precision p, recall r, MAP ap_hits (over the hits in the top k, as its code does
               since 2017; its documentation still shows /|truth|), AUC auc_topk (inside the
               top-K list, 0.5 without pairs), MRR rr, NDCG ndcg_bin (binary responses) and
               ndcg_exp (graded, 2^rel - 1), hit; ties by list order (item index)
recbole        Hit hit, MRR rr, NDCG ndcg_bin (binary relevance), Precision p, Recall r, MAP tap
               (/min(K,|T|)), GAUC gauc (per-user AUC with average ranks for ties, weighted by
               |T_u|), AveragePopularity arp, TailPercentage tailpercentage, GiniIndex
               gini_items, ShannonEntropy entropy_mean, ItemCoverage coverage; ties by item
               index: RecBole's torch.topk orders tied scores its own way, so users whose
               top-K holds a tie (n_tied_topk > 0) may differ; without ties its lists are
               torch's (checked with torch installed)
implicit       precision p_pooled (sum hits / sum min(K,|T_u|)), map tap, ndcg ndcg_bin; ties
               "implicit": implicit's own heap selection (top-K metrics only). implicit's auc
               counts train items as negatives inside its top-K list and is not reproduced.
ranx           precision p, recall r, map ap (/|T|), ndcg ndcg (linear, Jarvelin), ndcg_burges
               ndcg_exp, mrr rr, hit_rate hit, map without cutoff pr_auc, hits, f1,
               r-precision rprec, dcg, dcg_burges dcg_exp, rbp, bpref; ties by item index;
               relevance level 1 (ranx's ``rel_lvl=1``: a judgement of 0 is a judged
               non-relevant document, never a relevant one) and a query without a relevant
               document scored 0 and averaged in (no_positive="zero": ranx's ``clean_qrels``
               leaves it no relevant document and every metric returns 0.0 then)
trec_eval      P / set_P p, recall / set_recall r, map_cut ap (/|T|), ndcg_cut ndcg (linear),
               recip_rank rr, map (no cutoff) pr_auc, Rprec rprec, bpref, gm_map, set_F f1,
               set_relative_P tp, set_map, num_rel_ret hits, iprec_at_recall_*, 11pt_avg;
               ties by item index descending (trec_eval orders tied documents by docno
               descending: the same order when docnos are zero-padded item indices); relevance
               level 1 and a user without a relevant item counted as 0 (no_positive="zero")
lenskit        Precision p_list (hits / the list's length), Recall tp (/min(k, |T|)),
               AveragePrecision tap_list (/min(|T|, |L|)), NDCG ndcg_bin_jk (binary, discount
               max(1, log2 r)), NDCG(gain=...) ndcg_jk, Hit hit, RecipRank rr (LensKit 2025.8.1
               and 2026.3.0, lenskit/metrics/ranking/); ties by item index (LensKit's top_n
               leaves tied scores in its own selection order); lists read as given
torchmetrics   RetrievalPrecision p, RetrievalRecall r, RetrievalMAP ap_hits, RetrievalNormalizedDCG
               ndcg (linear), RetrievalMRR rr, RetrievalHitRate hit, RetrievalRPrecision rprec
               (torchmetrics 1.9.0, functional/retrieval/); a query without a positive scores 0
               (empty_target_action="neg"); ties by item index (torch's sort order is its own;
               its NDCG averages tied scores: ties="average"); torchmetrics >= 1.8 drops a
               relevant document scored <= 0 from P, R, MAP and MRR, which is not reproduced
recommenders   precision_at_k p, recall_at_k r, ndcg_at_k ndcg_bin (ndcg, ndcg_exp with
               score_type raw, exp), map_at_k tap, map ap (Microsoft Recommenders 1.2.1,
               recommenders/evaluation/python_evaluation.py); ties by row order (a stable sort:
               item index for frames in item order); lists read as given
recommenders_spark
               precision_at_k p, recall_at_k r, ndcg_at_k ndcg_bin, map ap, map_at_k tap (its
               spark_evaluation.py: pyspark's RankingMetrics on the top-k lists); lists as given
cornac         Precision p, Recall r, FMeasure f1, HitRatio hit, NDCG ndcg_bin, NCRR ncrr, MRR
               rr_full (the whole ranking), AUC roc_auc, MAP pr_auc (Cornac 3.0.1,
               cornac/metrics/ranking.py, eval_methods/base_method.py); pessimistic ties (AUC
               counts a tied pair wrong, MAP takes rankdata "max"); rating_threshold 1.0 as
               relevance level, train entries below it left among the candidates
rectools       Precision p, Precision(r_precision=True) tp, Recall r, F1Beta f1, MAP ap, NDCG
               ndcg_bin_idealk (the ideal of k relevant items), NDCG(divide_by_achievable=True)
               ndcg_bin, MRR rr, HitRate hit (RecTools 0.19.0, rectools/metrics/); ties by item
               index; lists read as given
trec_eval10    as trec_eval, with trec_eval 10.0's interpolated precisions: iprec_at_recall_*
               iprec10_at_recall_* and 11pt_avg 11pt_avg10 (the recall cutoff lround(rho |T|),
               where 9 added 0.9 and truncated), and its new unj (unjudged share of the top k);
               rbp and rbp_resid (also new in 10.0's all_trec) are not offered
spark          precisionAtK p (hits / k, a shorter list still divided by k), recallAtK r,
               meanAveragePrecisionAtK tap (/min(k,|T|)), meanAveragePrecision ap (/|T|, at k =
               the lists' length), ndcgAtK ndcg_bin (binary relevance) of pyspark's
               RankingMetrics / RankingEvaluator; ties by item index. A user with a list but no
               ground truth scores 0 and counts in the mean (``no_ground_truth``: applied by
               :func:`recoeval_tracking.spark.evaluate_spark`, which knows who has a list).
               ndcgAtK_graded ndcg_spark: ndcgAtK on (prediction, label, relevance) triples
               (Spark >= 3.4), gains 2^rel - 1, natural log, the ideal DCG over the labels in
               the order given (not sorted by relevance): here item index order (sorted item
               ids with evaluate_spark); the test values are the relevances. On ranked lists,
               with evaluate_spark and with evaluate (:mod:`.profile_inputs`): ap at a k shorter
               than the lists is refused (meanAveragePrecision reads the whole list), a k past
               the lists or the catalogue is computed as Spark does, a repeated item is refused
               (Spark counts every copy).
elliot         Precision p, Recall r, nDCG ndcg_exp1 (gain 2^(v + 1) - 1: its DiscountedRelevance
               at the default relevance_threshold 0), MAP ap_elliot (the mean of P@1..P@k, not an
               AP), MRR rr, HR hit, Gini gini_complement (1 - gini); every test value >= 0 is
               relevant (relevance level 0); ties by item index (its ProxyRecommender keeps a
               file's order of tied scores). Ranked lists: cut at k, then items outside the
               catalogue dropped (the list gets shorter). Read in sisinflab/elliot (package
               1.0.0, metric modules 0.3.1) and its copy in sisinflab/warprec-benchmark-2026.
warprec        Precision p, Recall r, nDCG ndcg_exp1 (gain 2^(v + 1) - 1), nDCGRendle2020
               ndcg_bin, MAP tap (/min(k,|T|)), MRR rr, HitRate hit, Gini gini, ShannonEntropy
               entropy; a test value > 0 is relevant (WARPREC_LEVEL); ties "warprec": its
               Evaluator's per-user draw, a 30-bit hash of its seed (42 unless ``seed`` is
               given), the user (row) and the item (column), larger first. Ranked lists: items
               outside the catalogue dropped, a repeated item's scores summed (its
               ProxyRecommender builds a sparse score matrix). Read in warprec 2.2.8 and
               checked against it (tests/metrics/test_library_warprec.py).
=============  ==================================================================================

With ranked top-K input a profile keeps its top-K metrics and leaves out (and records) the
whole-ranking ones. A profile sets ``ties``, ``relevance_level``, ``no_positive`` and
``inf_scores`` when they are left None. "Lists read as given" (``"repeats": "refuse"``,
``"past_lists": "compute"``): on ranked lists a repeated item is refused by name (the library
counts every copy) and a k past the lists or the catalogue is computed
(:mod:`.profile_inputs`).

Each entry's ``choices`` records, per metric of the profile, the definition choices the
profile makes, with the registry's choice names (``gain``, ``ideal``, ``denominator``,
``discount``, ``scope``...; those that make a variant differ are its
:attr:`MetricSpec.variant`) plus ``log_base``, ``ties``, ``no_positive``, ``short_list`` and
``duplicates``. An entry states only its own: the choices its metrics share follow from its
options (``ties``, ``no_positive``, ``repeats``) unless it states them (recometrics' rule for
repeated items, Spark's users without ground truth), and it states where it departs from the
registry's description of a metric (Microsoft Recommenders' natural log); the rest of each
record is :func:`~.registry.definition_choices`, one description per registered metric. ``lists`` holds
the profile's rules for generated lists (items outside the catalogue, repeated items) and
``not_reproduced`` what of the library the profile does not reproduce.
:func:`recoeval_tracking.metrics.agreement.compare_profiles` reads them.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, NamedTuple

from .._validation import param_error
from ..options import EvalOptions
from .registry import definition_choices

__all__ = ["PROFILES", "get_profile", "apply_profile", "WARPREC_LEVEL", "TIE_SEEDS"]

#: WarpRec's relevance rule, ``value > 0``, as a level (``value >= level``): the smallest
#: positive float64, so every positive value and no zero or negative one is relevant.
WARPREC_LEVEL = math.ulp(0.0)


class _Own(NamedTuple):
    """A profile's own definition choices: ``shared`` by its metrics (tie order, users without
    a positive, repeated items) and ``per_metric`` where it departs from the registry's
    description of a metric (:func:`~.registry.definition_choices`)."""

    shared: dict[str, str]
    per_metric: dict[str, dict[str, str]]


def _own(shared: dict[str, str], per_metric: dict[str, dict[str, str]] | None = None) -> _Own:
    return _Own(shared, per_metric or {})


def _shared(prof: dict[str, Any]) -> dict[str, str]:
    """The choices a profile's metrics share, as its options set them: the tie order, what a
    user without a positive scores and, when it refuses them, repeated items."""
    shared = {"ties": prof["ties"], "no_positive": prof.get("no_positive", "nan")}
    return shared | ({"duplicates": "refused"} if prof.get("repeats") == "refuse" else {})


def _choices(name: str, prof: dict[str, Any]) -> dict[str, dict[str, str]]:
    """A profile's ``choices``: for each of its metrics, its shared choices (:func:`_shared`
    unless its entry states its own), the registry's description of the metric (gain, ideal,
    log base, denominator, short-list rule...) and what the profile states of its own for it,
    in that order (the last wins)."""
    own: _Own = prof.get("choices", _own(_shared(prof)))
    unknown = sorted(set(own.per_metric) - set(prof["metrics"]))
    if unknown:
        raise ValueError(f"profile {name!r} states choices of metrics it lacks: {unknown}")
    return {
        m: {**own.shared, **definition_choices(m), **own.per_metric.get(m, {})}
        for m in prof["metrics"]
    }


#: trec_eval 9, the base of trec_eval 10.0's profile (:func:`_trec_eval10`).
_TREC_EVAL: dict[str, Any] = {
    "metrics": [
        "p",
        "r",
        "ap",
        "ndcg",
        "rr",
        "pr_auc",
        "rprec",
        "bpref",
        "gm_map",
        "f1",
        "tp",
        "set_map",
        "hits",
        "11pt_avg",
        *[f"iprec_at_recall_{j / 10:.2f}" for j in range(11)],
    ],
    "ties": "index_desc",
    "relevance_level": 1.0,
    "no_positive": "zero",
    "aliases": {
        "P": "p",
        "recall": "r",
        "map_cut": "ap",
        "ndcg_cut": "ndcg",
        "recip_rank": "rr",
        "map": "pr_auc",
        "Rprec": "rprec",
        "bpref": "bpref",
        "gm_map": "gm_map",
        "set_P": "p",
        "set_recall": "r",
        "set_F": "f1",
        "set_relative_P": "tp",
        "set_map": "set_map",
        "num_rel_ret": "hits",
        "11pt_avg": "11pt_avg",
        **{f"iprec_at_recall_{j / 10:.2f}": f"iprec_at_recall_{j / 10:.2f}" for j in range(11)},
    },
}


def _trec_eval10(base: dict[str, Any]) -> dict[str, Any]:
    """trec_eval 10.0's profile: ``base`` (trec_eval 9's) with the interpolated precisions of
    10.0 (``iprec10_at_recall_*``, ``11pt_avg10``: the recall cutoff rounded) in place of 9's,
    and 10.0's new ``unj`` before them."""
    renamed = {"11pt_avg": "11pt_avg10"}
    renamed |= {
        f"iprec_at_recall_{j / 10:.2f}": f"iprec10_at_recall_{j / 10:.2f}" for j in range(11)
    }
    cut = base["metrics"].index("11pt_avg")
    return {
        **base,
        "metrics": [*base["metrics"][:cut], "unj", *(renamed[m] for m in base["metrics"][cut:])],
        "aliases": {
            **{alias: renamed.get(m, m) for alias, m in base["aliases"].items()},
            "unj": "unj",
        },
        # unj_k of a user without a positive is undefined
        "choices": _own(_shared(base), {"unj": {"no_positive": "nan"}}),
    }


#: Microsoft Recommenders' Python evaluation, whose names its Spark evaluation shares.
_RECOMMENDERS: dict[str, Any] = {
    # Microsoft Recommenders 1.2.1, recommenders/evaluation/python_evaluation.py
    "metrics": ["p", "r", "ndcg_bin", "ndcg", "ndcg_exp", "tap", "ap"],
    "ties": "index",
    "repeats": "refuse",
    "past_lists": "compute",
    "aliases": {
        "precision_at_k": "p",
        "recall_at_k": "r",
        "ndcg_at_k": "ndcg_bin",
        "ndcg_at_k(score_type='raw')": "ndcg",
        "ndcg_at_k(score_type='exp')": "ndcg_exp",
        "map_at_k": "tap",
        "map": "ap",
    },
    "choices": _own(
        {"ties": "index", "no_positive": "nan", "duplicates": "refused"},
        # its NDCGs take the natural log (the same ratio as log2)
        dict.fromkeys(("ndcg_bin", "ndcg", "ndcg_exp"), {"log_base": "e"}),
    ),
}


def _restricted(base: dict[str, Any], metrics: list[str]) -> dict[str, Any]:
    """``base`` on ``metrics`` alone (a subset of its metrics): its names and choices of them."""
    own: _Own = base["choices"]
    return {
        **base,
        "metrics": metrics,
        "aliases": {a: m for a, m in base["aliases"].items() if m in metrics},
        "choices": _own(own.shared, {m: c for m, c in own.per_metric.items() if m in metrics}),
    }


PROFILES: dict[str, dict[str, Any]] = {
    "recometrics": {
        "metrics": ["p", "tp", "r", "ap", "tap", "ndcg", "hit", "rr", "roc_auc", "pr_auc"],
        "ties": "noise",
        "inf_scores": "nan",
        "aliases": {
            "P": "p",
            "TP": "tp",
            "R": "r",
            "AP": "ap",
            "TAP": "tap",
            "NDCG": "ndcg",
            "Hit": "hit",
            "RR": "rr",
            "ROC_AUC": "roc_auc",
            "PR_AUC": "pr_auc",
        },
        "choices": _own({"ties": "noise", "no_positive": "nan", "duplicates": "dropped"}),
    },
    "hivemall": {
        "metrics": ["p", "r", "ap_hits", "auc_topk", "rr", "ndcg_bin", "ndcg_exp", "hit"],
        "ties": "index",
        "aliases": {
            "precision": "p",
            "recall": "r",
            "map": "ap_hits",
            "auc": "auc_topk",
            "mrr": "rr",
            "ndcg": "ndcg_bin",
            "ndcg_graded": "ndcg_exp",
            "hit": "hit",
        },
    },
    "recbole": {
        "metrics": [
            "hit",
            "rr",
            "ndcg_bin",
            "p",
            "r",
            "tap",
            "gauc",
            "arp",
            "tailpercentage",
            "gini_items",
            "entropy_mean",
            "coverage",
        ],
        "ties": "index",
        "aliases": {
            "hit": "hit",
            "mrr": "rr",
            "ndcg": "ndcg_bin",
            "precision": "p",
            "recall": "r",
            "map": "tap",
            "gauc": "gauc",
            "averagepopularity": "arp",
            "tailpercentage": "tailpercentage",
            "giniindex": "gini_items",
            "shannonentropy": "entropy_mean",
            "itemcoverage": "coverage",
        },
    },
    "implicit": {
        "metrics": ["p_pooled", "tap", "ndcg_bin"],
        "ties": "implicit",
        "aliases": {"precision": "p_pooled", "map": "tap", "ndcg": "ndcg_bin"},
    },
    "ranx": {
        "metrics": [
            "p",
            "r",
            "ap",
            "ndcg",
            "ndcg_exp",
            "rr",
            "hit",
            "pr_auc",
            "hits",
            "f1",
            "rprec",
            "dcg",
            "dcg_exp",
            "rbp",
            "bpref",
        ],
        "ties": "index",
        "relevance_level": 1.0,
        "no_positive": "zero",
        "aliases": {
            "precision": "p",
            "recall": "r",
            "map": "ap",
            "ndcg": "ndcg",
            "ndcg_burges": "ndcg_exp",
            "mrr": "rr",
            "hit_rate": "hit",
            "map_full": "pr_auc",
            "hits": "hits",
            "f1": "f1",
            "r-precision": "rprec",
            "dcg": "dcg",
            "dcg_burges": "dcg_exp",
            "rbp": "rbp",
            "bpref": "bpref",
        },
    },
    "trec_eval": _TREC_EVAL,
    "lenskit": {
        # LensKit 2025.8.1 and 2026.3.0, lenskit/metrics/ranking/{_pr,_map,_dcg,_hit,_recip}.py
        "metrics": ["p_list", "tp", "tap_list", "ndcg_bin_jk", "ndcg_jk", "hit", "rr"],
        "ties": "index",
        "repeats": "refuse",
        "past_lists": "compute",
        "aliases": {
            "Precision": "p_list",
            "Recall": "tp",
            "AveragePrecision": "tap_list",
            "NDCG": "ndcg_bin_jk",
            "NDCG(gain=...)": "ndcg_jk",
            "Hit": "hit",
            "RecipRank": "rr",
        },
    },
    "torchmetrics": {
        # torchmetrics 1.9.0, torchmetrics/functional/retrieval/*.py, retrieval/base.py
        "metrics": ["p", "r", "ap_hits", "ndcg", "rr", "hit", "rprec"],
        "ties": "index",
        "no_positive": "zero",
        "aliases": {
            "RetrievalPrecision": "p",
            "RetrievalRecall": "r",
            "RetrievalMAP": "ap_hits",
            "RetrievalNormalizedDCG": "ndcg",
            "RetrievalMRR": "rr",
            "RetrievalHitRate": "hit",
            "RetrievalRPrecision": "rprec",
        },
    },
    "recommenders": _RECOMMENDERS,
    # Microsoft Recommenders 1.2.1, recommenders/evaluation/spark_evaluation.py
    # (SparkRankingEvaluation: pyspark's RankingMetrics on the top-k lists joined with the
    # users' ground truth): the Python evaluation's names and choices, on its metrics
    "recommenders_spark": _restricted(_RECOMMENDERS, ["p", "r", "ndcg_bin", "ap", "tap"]),
    "cornac": {
        # Cornac 3.0.1, cornac/metrics/ranking.py, cornac/eval_methods/base_method.py
        "metrics": ["p", "r", "f1", "hit", "ndcg_bin", "ncrr", "rr_full", "roc_auc", "pr_auc"],
        "ties": "pessimistic",
        "relevance_level": 1.0,
        "train_below_level": "candidates",
        "aliases": {
            "Precision": "p",
            "Recall": "r",
            "FMeasure": "f1",
            "HitRatio": "hit",
            "NDCG": "ndcg_bin",
            "NCRR": "ncrr",
            "MRR": "rr_full",
            "AUC": "roc_auc",
            "MAP": "pr_auc",
        },
    },
    "rectools": {
        # RecTools 0.19.0, rectools/metrics/{classification,ranking}.py
        "metrics": ["p", "tp", "r", "f1", "ap", "ndcg_bin_idealk", "ndcg_bin", "rr", "hit"],
        "ties": "index",
        "repeats": "refuse",
        "past_lists": "compute",
        "aliases": {
            "Precision": "p",
            "Precision(r_precision=True)": "tp",
            "Recall": "r",
            "F1Beta": "f1",
            "MAP": "ap",
            "NDCG": "ndcg_bin_idealk",
            "NDCG(divide_by_achievable=True)": "ndcg_bin",
            "MRR": "rr",
            "HitRate": "hit",
        },
    },
    # trec_eval 10.0 (usnistgov/trec_eval, tag v10.0): the trec_eval profile with 10.0's
    # rounded recall cutoffs (m_iprec_at_recall.c, m_11pt_avg.c) and its unj measure
    "trec_eval10": _trec_eval10(_TREC_EVAL),
    "spark": {
        "metrics": ["p", "r", "tap", "ap", "ndcg_bin", "ndcg_spark"],
        "ties": "index",
        # read by recoeval_tracking.spark: users with a list and no test entry score 0
        "no_ground_truth": "zero",
        # read by metrics.profile_inputs on ranked lists: a repeated item refused (Spark counts
        # every copy), a k past the lists or the catalogue computed
        "repeats": "refuse",
        "past_lists": "compute",
        "aliases": {
            "precisionAtK": "p",
            "recallAtK": "r",
            "meanAveragePrecisionAtK": "tap",
            "meanAveragePrecision": "ap",
            "ndcgAtK": "ndcg_bin",
            # ndcgAtK on (prediction, label, relevance) triples: graded, ideal in label order
            "ndcgAtK_graded": "ndcg_spark",
        },
        "choices": _own(
            {"ties": "index", "no_positive": "zero", "duplicates": "refused"},
            {"ap": {"short_list": "whole list"}, "ndcg_bin": {"log_base": "e"}},
        ),
    },
    "elliot": {
        "metrics": ["p", "r", "ndcg_exp1", "ap_elliot", "rr", "hit", "gini_complement"],
        "ties": "index",
        # its relevance_threshold 0 (the default) keeps every test value >= 0
        "relevance_level": 0.0,
        "lists": {"out_of_catalogue": "cut_then_drop", "duplicates": "slot"},
        "not_reproduced": {
            "duplicates": "Elliot counts every copy of a repeated item (a repeated hit counts "
            "twice in Precision, Recall, nDCG and MAP); here a later copy takes its rank as a "
            "miss",
            "train_items": "Elliot drops a train item after cutting the list at k (the list "
            "gets shorter); here it is dropped before the cut",
        },
        "aliases": {
            "Precision": "p",
            "Recall": "r",
            "nDCG": "ndcg_exp1",
            "MAP": "ap_elliot",
            "MRR": "rr",
            "HR": "hit",
            "Gini": "gini_complement",
        },
    },
    "warprec": {
        "metrics": ["p", "r", "ndcg_exp1", "ndcg_bin", "tap", "rr", "hit", "gini", "entropy"],
        # its Evaluator's top_k_breaking_ties (warprec/data/ranking.py), seeded with 42 unless
        # `seed` is given (TIE_SEEDS)
        "ties": "warprec",
        "relevance_level": WARPREC_LEVEL,
        "lists": {"out_of_catalogue": "drop", "duplicates": "sum"},
        "not_reproduced": {
            "short_list": "WarpRec scores a list through a score matrix, so a list shorter "
            "than k is filled with unlisted items of score 0, drawn per user by its "
            "Evaluator's tie break; here it stays short (its missing ranks are misses; that "
            "score matrix given as scores= makes the same draw)",
            "negative_values": "WarpRec's nDCG keeps a negative test value as a negative gain "
            "(discounted_relevance replaces only the values > 0); here a value <= 0 gains 0",
            "no_positive_lists": "WarpRec's Gini and ShannonEntropy count the list of every "
            "user with a test entry, those whose values are all <= 0 included; here only the "
            "users with a positive",
            "pool_le_k": "WarpRec fills the list of a user with k items or fewer outside train "
            "with train items and scores its Precision, Recall and HitRate (and counts those "
            "items in Gini and ShannonEntropy); here those three are NaN",
        },
        "aliases": {
            "Precision": "p",
            "Recall": "r",
            "nDCG": "ndcg_exp1",
            "nDCGRendle2020": "ndcg_bin",
            "MAP": "tap",
            "MRR": "rr",
            "HitRate": "hit",
            "Gini": "gini",
            "ShannonEntropy": "entropy",
        },
    },
}

for _name, _prof in PROFILES.items():
    _prof["choices"] = _choices(_name, _prof)

#: Options a profile sets when they are left None, and their value without a profile.
_DEFAULTS = {"ties": "noise", "relevance_level": None, "no_positive": "nan", "inf_scores": "rank"}

#: The seed of a tie policy's draw when ``seed`` is left None (0 for the others): WarpRec's
#: Evaluator seeds its tie generator with its ``seed`` argument, 42 by default.
TIE_SEEDS = {"warprec": 42}


def get_profile(name: str, func: str = "evaluate") -> dict[str, Any]:
    """The profile called ``name``, or the standard error listing the known profiles."""
    if name not in PROFILES:
        raise param_error("profile", func, f"one of {list(PROFILES)}", name)
    return PROFILES[name]


def apply_profile(options: EvalOptions, func: str = "evaluate") -> EvalOptions:
    """``options`` with its profile applied: ``metrics``, ``ties``, ``relevance_level``,
    ``no_positive`` and ``inf_scores`` left None take the profile's, or P, AP and NDCG,
    ``noise``, no level, ``nan`` and ``rank`` without a profile; ``seed`` left None takes the
    tie policy's (:data:`TIE_SEEDS`), else 0."""
    prof = get_profile(options.profile, func) if options.profile is not None else {}
    metrics = options.metrics
    if metrics is None:
        metrics = prof.get("metrics", ("p", "ap", "ndcg"))
    chosen = {
        name: getattr(options, name)
        if getattr(options, name) is not None
        else prof.get(name, default)
        for name, default in _DEFAULTS.items()
    }
    seed = options.seed if options.seed is not None else TIE_SEEDS.get(chosen["ties"], 0)
    return dataclasses.replace(options, metrics=metrics, seed=seed, **chosen)
