"""The metric registry: the single source of truth for names, definitions and kernel codes.

Every per-user metric follows the recometrics ``calc.reco.metrics`` documentation [1]_. For a
user ``u`` the *pool* is the set of items not in ``u``'s train row, the *positives* ``T`` are the
stored test entries (any stored value counts, zero and negative included, for every metric but
NDCG), and ``r_1 < r_2 < ... < r_|T|`` are the 1-based ranks of the positives in the pool ranked by
descending score. ``hits(k) = #{i : r_i <= k}``.

References
----------
.. [1] D. Cortes, recometrics: library-agnostic evaluation of implicit-feedback recommender
   systems, ``calc.reco.metrics`` documentation, https://github.com/david-cortes/recometrics
.. [2] K. Jarvelin and J. Kekalainen, "Cumulated gain-based evaluation of IR techniques",
   ACM TOIS 20(4), 2002.
.. [3] T. Fawcett, "An introduction to ROC analysis", Pattern Recognition Letters 27(8), 2006.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._validation import InputError
from ..engine.codes import AtK, Whole
from . import beyond, listrank, peerrank, peers, popularity

__all__ = [
    "MetricSpec",
    "METRICS",
    "resolve_metrics",
    "column_name",
    "curve_name",
    "spec_for_key",
    "greater_is_better",
    "definition_choices",
]


@dataclass(frozen=True)
class MetricSpec:
    """A registered metric.

    Attributes
    ----------
    name : str
        Identity used in configs and per-user column names (``ndcg`` -> ``ndcg_at_10``).
    code : int
        Row of the kernel output.
    label : str
        recometrics-compatible label (``NDCG`` -> ``NDCG@5``).
    at_k : bool
        True for cutoff metrics, False for whole-ranking metrics (ROC-AUC, PR-AUC).
    order_free : bool
        True when the value does not depend on the order inside the top-K list; such metrics are
        NaN when the pool has ``k`` items or fewer (the list is the whole pool).
    formula : str
        The definition, in plain math.
    family : str
        The metric this is a variant of (``ndcg_exp`` is a variant of ``ndcg``).
    variant : tuple of (key, value)
        The parameters that make this variant (``(("gain", "exponential"),)``).
    stage : {"kernel", "list", "aggregate"}
        ``kernel``: per user, from the ranks of the positives; ``list``: per user, from the top-K
        list (see :mod:`recoeval_tracking.metrics.beyond`); ``aggregate``: one number over the
        whole set of users.
    needs : tuple of str
        Kernel metrics an aggregate is computed from.
    greater_is_better : bool
        The direction of the metric: False for errors and ranks (``mpr``), where lower is better.
        Leaderboards, report marks and the best run read it from here.
    compute : callable or None
        For ``list`` metrics ``compute(ctx, topk) -> per-user values`` and for ``aggregate``
        metrics ``compute(ctx) -> float``, with ``ctx`` a
        :class:`~recoeval_tracking.metrics.beyond.ListContext`; None for kernel metrics (the
        engine fills them by ``code``).
    needs_item_vectors : bool
        The metric needs item vectors (item factors or ``item_features``) and is left out,
        as recorded in the definitions, when there are none.
    average_ties : bool
        Whether ``ties="average"`` has an implemented expectation for this metric; a metric
        without one is refused when named and left out of ``"all"``.
    extra_pass : bool
        The metric reads the engine's extra column of ROC-AUC under average ranks for ties
        (:data:`~recoeval_tracking.engine.codes.Whole.ROC_AUC_AVG`, filled in the same pass
        from the raw-score counts) unless the run's tie policy is ``average``; ``"all"`` leaves
        it out then (its ties differ from the run's ``roc_auc``): name it to get it.
    standard : bool
        Whether ``"standard"`` (the app's default set) includes it: every metric but the peers'
        own variants of one it already has (``ap_hits``, ``set_map``, ``gini_items``,
        ``entropy_mean``, ``ndcg_spark``) and trec_eval's recall-precision table
        (``iprec_at_recall_*``, ``11pt_avg``); ``"all"``, their profiles and a name give those
        too.
    """

    name: str
    code: int
    label: str
    at_k: bool
    order_free: bool
    formula: str
    family: str = ""
    variant: tuple[tuple[str, str], ...] = ()
    stage: str = "kernel"
    needs: tuple[str, ...] = ()
    greater_is_better: bool = True
    compute: Callable[..., Any] | None = None
    needs_item_vectors: bool = False
    average_ties: bool = True
    extra_pass: bool = False
    standard: bool = True

    @property
    def kind(self) -> str:
        """``at_k`` (kernel, per cutoff), ``whole`` (kernel, whole ranking), ``list`` (per user,
        from the top-K list) or ``aggregate`` (one number over the users)."""
        if self.stage == "kernel":
            return "at_k" if self.at_k else "whole"
        return self.stage


_SPECS = [
    MetricSpec("p", AtK.P, "P", True, True, "P@k = hits(k) / k"),
    MetricSpec("tp", AtK.TP, "TP", True, True, "TP@k = hits(k) / min(k, |T|)"),
    MetricSpec("r", AtK.R, "R", True, True, "R@k = hits(k) / |T|"),
    MetricSpec(
        "ap",
        AtK.AP,
        "AP",
        True,
        False,
        "AP@k = (1/|T|) * sum_{i : r_i <= k} i / r_i",
        "ap",
        (("denominator", "|T|"),),
    ),
    MetricSpec(
        "tap",
        AtK.TAP,
        "TAP",
        True,
        False,
        "TAP@k = (1/min(k, |T|)) * sum_{i : r_i <= k} i / r_i",
        "ap",
        (("denominator", "min(k, |T|)"),),
    ),
    MetricSpec(
        "ndcg",
        AtK.NDCG,
        "NDCG",
        True,
        False,
        "NDCG@k = DCG@k / IDCG@k, DCG@k = sum_{i : r_i <= k} g_i / log2(r_i + 1) with the "
        "linear gain g_i = test value v_i; IDCG@k = sum_{j <= min(k, #g>0)} g_(j) / "
        "log2(j + 1) over the positive gains sorted descending; NaN if no g > 0",
        "ndcg",
        (("gain", "linear"),),
    ),
    MetricSpec(
        "ndcg_exp",
        AtK.NDCG_EXP,
        "NDCG_EXP",
        True,
        False,
        "as ndcg with the exponential gain g_i = 2^v_i - 1 (Burges et al. 2005; Hivemall "
        "graded NDCG, RecBole with graded relevance)",
        "ndcg",
        (("gain", "exponential"),),
    ),
    MetricSpec(
        "ndcg_bin",
        AtK.NDCG_BIN,
        "NDCG_BIN",
        True,
        False,
        "as ndcg with the binary gain g_i = 1 for every test item (RecBole, implicit, "
        "ranx on binary qrels)",
        "ndcg",
        (("gain", "binary"),),
    ),
    MetricSpec("hit", AtK.HIT, "Hit", True, True, "Hit@k = 1 if hits(k) > 0 else 0"),
    MetricSpec("rr", AtK.RR, "RR", True, False, "RR@k = 1 / r_1 if r_1 <= k else 0"),
    MetricSpec(
        "auc_topk",
        AtK.AUC_TOPK,
        "AUC_TOPK",
        True,
        False,
        "AUC inside the top-k list (Hivemall): with h = hits(k) and L = min(k, |pool|), "
        "#{(i, j) : i in T, j not in T, both in the list, i above j} / (h * (L - h)); "
        "0.5 when h * (L - h) = 0",
        "auc",
        (("scope", "top_k_list"),),
        average_ties=False,
    ),
    MetricSpec(
        "roc_auc",
        Whole.ROC_AUC,
        "ROC_AUC",
        False,
        False,
        "ROC-AUC = #{(i, j) : i in T, j in pool \\ T, i ranked above j} / (|T| * |pool \\ T|)",
        "auc",
        (("scope", "catalog"),),
    ),
    MetricSpec(
        "pr_auc",
        Whole.PR_AUC,
        "PR_AUC",
        False,
        False,
        "PR-AUC = (1/|T|) * sum_i i / r_i  (AP@|pool|, rectangular rule)",
    ),
    MetricSpec(
        "mpr",
        Whole.MPR,
        "MPR",
        False,
        False,
        "MPR = sum_i v_i * (r_i - 1) / (|pool| - 1) / sum_i v_i: the test-value-weighted mean "
        "percentile rank, 0 = best (Hu, Koren & Volinsky 2008, eq. 8); NaN if sum_i v_i <= 0",
        greater_is_better=False,
    ),
    MetricSpec(
        "dcg",
        AtK.DCG,
        "DCG",
        True,
        False,
        "DCG@k = sum_{i : r_i <= k} v_i / log2(r_i + 1): the numerator of ndcg (linear "
        "gain v_i = test value), unnormalised (Jarvelin & Kekalainen 2002; ranx's dcg); "
        "defined for every evaluated user, also when the pool holds only positives",
        "dcg",
        (("gain", "linear"),),
    ),
    MetricSpec(
        "ap_hits",
        AtK.AP_HITS,
        "AP_HITS",
        True,
        False,
        "AP@k over the hits: (1/hits(k)) * sum_{i : r_i <= k} i / r_i, 0 when hits(k) = 0 "
        "(Hivemall's AveragePrecision since 2017; its documentation still shows /|T|)",
        "ap",
        (("denominator", "hits"),),
        average_ties=False,
    ),
    MetricSpec(
        "hits",
        AtK.HITS,
        "Hits",
        True,
        True,
        "hits(k) = #{i : r_i <= k}, the number of positives in the top k (ranx's hits)",
    ),
    MetricSpec(
        "f1",
        AtK.F1,
        "F1",
        True,
        True,
        "F1@k = 2 P@k R@k / (P@k + R@k) = 2 hits(k) / (k + |T|), 0 without a hit (van "
        "Rijsbergen 1979; ranx's f1, trec_eval's set_F on a run of k items)",
    ),
    MetricSpec(
        "dcg_exp",
        AtK.DCG_EXP,
        "DCG_EXP",
        True,
        False,
        "DCG@k with the exponential gain: sum_{i : r_i <= k} (2^v_i - 1) / log2(r_i + 1) "
        "(Burges et al. 2005; ranx's dcg_burges); defined as dcg",
        "dcg",
        (("gain", "exponential"),),
    ),
    MetricSpec(
        "set_map",
        AtK.SET_MAP,
        "SET_MAP",
        True,
        True,
        "hits(k)^2 / (k |T|) = P@k R@k: trec_eval's set_map on a run of k items",
        average_ties=False,
    ),
    MetricSpec(
        "rprec",
        Whole.RPREC,
        "Rprec",
        False,
        False,
        "R-precision: #{i : r_i <= |T|} / |T|, precision after |T| items (Buckley & "
        "Voorhees 2000; trec_eval's Rprec, ranx's r-precision)",
    ),
    *[
        MetricSpec(
            f"iprec_at_recall_{j / 10:.2f}",
            Whole(Whole.IPREC_0 + j),
            f"IPREC@{j / 10:.2f}",
            False,
            False,
            f"interpolated precision at recall {j / 10:.2f}: max over i >= max(1, c) of "
            f"i / r_i, c = floor({j / 10:.2f} |T| + 0.9): the best precision from the "
            "c-th positive on (trec_eval 9's iprec_at_recall, over the whole ranking)",
            "iprec",
            (("recall", f"{j / 10:.2f}"),),
            average_ties=False,
        )
        for j in range(11)
    ],
    MetricSpec(
        "11pt_avg",
        Whole.AVG_11PT,
        "11pt_avg",
        False,
        False,
        "mean of the 11 interpolated precisions at recall 0, 0.1, ..., 1 (trec_eval's "
        "11pt_avg, Salton & McGill 1983)",
        average_ties=False,
    ),
    # rank metrics from the top-K lists (a real-valued parameter, or judged non-relevant items)
    MetricSpec(
        "rbp",
        -1,
        "RBP",
        True,
        False,
        "RBP@k = (1 - p) sum_{j <= k} v_(j) p^(j - 1), v_(j) the test value of the j-th "
        "listed item (0 if not a positive), p = rbp_persistence; 0 for an empty list "
        "(Moffat & Zobel 2008; ranx's rbp)",
        stage="list",
        compute=listrank.rbp_of,
        average_ties=False,
    ),
    MetricSpec(
        "ndcg_spark",
        -1,
        "NDCG_SPARK",
        True,
        False,
        "Spark's graded ndcgAt (RankingMetrics on (prediction, label, relevance) triples): "
        "sum_{j < min(|L|, k)} (2^v_(j) - 1) / ln(j + 2) over the list, divided by the same sum "
        "over the first min(|T|, k) test items in item index order (the labels' order, not "
        "sorted by value); 0 when that ideal is 0",
        "ndcg",
        (("gain", "exponential"), ("ideal", "label_order")),
        stage="list",
        compute=listrank.ndcg_spark_of,
        average_ties=False,
    ),
    MetricSpec(
        "bpref",
        -1,
        "bpref",
        True,
        False,
        "bpref@k = (1/R) sum over listed positives of 1 - min(n, R) / min(N, R) (1 when "
        "n = 0), n the judged non-relevant items listed above it, R = |T|, N the judged "
        "non-relevant items (test entries below relevance_level); unjudged items skipped; "
        "0 for an empty list (Buckley & Voorhees 2004; trec_eval's bpref on a run of k "
        "items)",
        stage="list",
        compute=listrank.bpref_of,
        average_ties=False,
    ),
    # beyond accuracy: from the top-K lists of the same pass
    MetricSpec(
        "novelty",
        -1,
        "Novelty",
        True,
        True,
        "mean over the list of -log2(max(n_i, 1) / |U_train|), n_i = train users of item i",
        stage="list",
        compute=beyond.novelty_of,
    ),
    MetricSpec(
        "ils",
        -1,
        "ILS",
        True,
        True,
        "mean cosine similarity over pairs of listed items (item factors or features)",
        stage="list",
        compute=beyond.ils_of,
        needs_item_vectors=True,
    ),
    MetricSpec(
        "diversity",
        -1,
        "Diversity",
        True,
        True,
        "1 - ils",
        stage="list",
        compute=beyond.diversity_of,
        needs_item_vectors=True,
    ),
    MetricSpec(
        "serendipity",
        -1,
        "Serendipity",
        True,
        True,
        "share of the list in the test set and outside the top-N popular train items",
        stage="list",
        compute=beyond.serendipity_of,
    ),
    MetricSpec(
        "coverage",
        -1,
        "Coverage",
        True,
        True,
        "|union of the lists| / |items|",
        stage="aggregate",
        compute=beyond.over_lists(beyond.coverage),
    ),
    MetricSpec(
        "aggregated_diversity",
        -1,
        "AggregatedDiversity",
        True,
        True,
        "|union of the lists|",
        stage="aggregate",
        compute=beyond.over_lists(beyond.aggregated_diversity),
    ),
    MetricSpec(
        "entropy",
        -1,
        "Entropy",
        True,
        True,
        "-sum_i p_i ln p_i, p_i = (#lists with i) / (K |U|)",
        stage="aggregate",
        compute=beyond.over_lists(beyond.shannon_entropy),
    ),
    MetricSpec(
        "gini",
        -1,
        "Gini",
        True,
        True,
        "sum_j (2j - |I| - 1) p_(j) / (|I| - 1), p ascending",
        stage="aggregate",
        compute=beyond.over_lists(beyond.gini_index),
        greater_is_better=False,
    ),
    MetricSpec(
        "personalisation",
        -1,
        "Personalisation",
        True,
        True,
        "1 - mean over user pairs of |L_u & L_v| / K (exact)",
        stage="aggregate",
        compute=beyond.over_lists(beyond.personalisation),
    ),
    MetricSpec(
        "gauc",
        -1,
        "GAUC",
        False,
        False,
        "sum_u |T_u| AUC_u / sum_u |T_u| over users with a defined ROC-AUC, with AUC_u the "
        "ROC-AUC under tied scores given their average rank (a tied pair counts 1/2), "
        "whatever the tie policy of the other metrics (RecBole's GAUC, "
        "Collector._average_rank)",
        "auc",
        (("scope", "user_weighted"),),
        stage="aggregate",
        needs=("roc_auc",),
        compute=beyond.gauc_of,
        extra_pass=True,
    ),
    MetricSpec(
        "gm_map",
        -1,
        "gm_map",
        False,
        False,
        "exp(mean_u ln max(PR-AUC_u, 1e-5)) over users with a defined PR-AUC: the "
        "geometric mean of AP over the whole ranking (Robertson 2006; trec_eval's gm_map)",
        "pr_auc",
        (("average", "geometric"),),
        stage="aggregate",
        needs=("pr_auc",),
        compute=listrank.gm_map_of,
    ),
    MetricSpec(
        "arp",
        -1,
        "ARP",
        True,
        True,
        "mean over the list of pop_i, the train entries of item i (RecBole's "
        "AveragePopularity; Abdollahpouri et al. 2019)",
        stage="list",
        compute=popularity.arp_of,
        greater_is_better=False,
    ),
    MetricSpec(
        "tailpercentage",
        -1,
        "TailPercentage",
        True,
        True,
        "share of the list in the tail: the max(1, floor(tail_ratio |I_train|)) least "
        "popular items with a train entry, ties by index (RecBole's TailPercentage)",
        stage="list",
        compute=popularity.tailpercentage_of,
    ),
    MetricSpec(
        "aplt",
        -1,
        "APLT",
        True,
        True,
        "share of the list in the long tail: items outside the short head, the most "
        "popular items holding short_head_share (0.8) of the train entries (Abdollahpouri "
        "et al. 2019; Elliot's APLT)",
        stage="list",
        compute=popularity.aplt_of,
    ),
    MetricSpec(
        "aclt",
        -1,
        "ACLT",
        True,
        True,
        "number of long-tail items in the list (as aplt; Elliot's ACLT)",
        stage="list",
        compute=popularity.aclt_of,
    ),
    MetricSpec(
        "pop_rsp",
        -1,
        "PopRSP",
        True,
        True,
        "std/mean over {short head, long tail} of sum_u |L_u & g| / sum_u |g - R_u| "
        "(Zhu et al. 2020; Elliot's PopRSP); 0 = parity",
        stage="aggregate",
        compute=popularity.pop_rsp_of,
        greater_is_better=False,
    ),
    MetricSpec(
        "pop_reo",
        -1,
        "PopREO",
        True,
        True,
        "std/mean over {short head, long tail} of sum_u |L_u & g & T_u| / sum_u |g & T_u| "
        "(Zhu et al. 2020; Elliot's PopREO); 0 = equal opportunity",
        stage="aggregate",
        compute=popularity.pop_reo_of,
        greater_is_better=False,
    ),
    MetricSpec(
        "gini_items",
        -1,
        "GiniIndex",
        True,
        True,
        "sum_j (2j - |I| - 1) c_(j) / (|I| sum c), c ascending (RecBole's GiniIndex: "
        "gini divided by |I| instead of |I| - 1)",
        "gini",
        (("normalise", "items"),),
        stage="aggregate",
        compute=beyond.over_lists(popularity.gini_items),
        greater_is_better=False,
    ),
    MetricSpec(
        "entropy_mean",
        -1,
        "ShannonEntropy",
        True,
        True,
        "entropy / #distinct recommended items (RecBole's ShannonEntropy)",
        "entropy",
        (("normalise", "recommended_items"),),
        stage="aggregate",
        compute=beyond.over_lists(popularity.entropy_mean),
    ),
    MetricSpec(
        "p_pooled",
        -1,
        "P_POOLED",
        True,
        True,
        "sum_u hits_u(k) / sum_u min(k, |T_u|) over defined users (implicit's precision)",
        "p",
        (("average", "pooled"),),
        stage="aggregate",
        needs=("tp",),
        compute=beyond.pooled_precision_of,
    ),
    MetricSpec(
        "ndcg_exp1",
        -1,
        "NDCG_EXP1",
        True,
        False,
        "as ndcg with the gain g_i = 2^(v_i + 1) - 1 of each listed positive, the ideal over "
        "the min(k, |T|) largest gains: Elliot's nDCG (its DiscountedRelevance at the default "
        "relevance_threshold 0) and WarpRec's nDCG (discounted_relevance); 0 when the ideal is 0",
        "ndcg",
        (("gain", "exponential+1"),),
        stage="list",
        compute=peers.ndcg_exp1_of,
        average_ties=False,
    ),
    MetricSpec(
        "ap_elliot",
        -1,
        "AP_ELLIOT",
        True,
        False,
        "(1/k) * sum_{n <= k} hits(n) / n: the mean of P@1..P@k over every rank, hits or not "
        "(Elliot's MAP); not an average precision: below 1 for a perfect list when |T| < k",
        "ap",
        (("denominator", "k"), ("precision_at", "every_rank")),
        stage="list",
        compute=peers.ap_elliot_of,
        average_ties=False,
    ),
    MetricSpec(
        "gini_complement",
        -1,
        "GiniComplement",
        True,
        True,
        "1 - sum_j (2j - |I| - 1) c_(j) / ((|I| - 1) sum c), c ascending: one minus gini "
        "over the lists' item counts (Elliot's Gini); higher = spread more evenly",
        "gini",
        (("orientation", "one_minus"),),
        stage="aggregate",
        compute=beyond.over_lists(peers.gini_complement),
    ),
    # other libraries' variants that differ from the kernel metrics (see metrics/peerrank.py)
    MetricSpec(
        "p_list",
        -1,
        "P_LIST",
        True,
        True,
        "hits(k) / |L|, |L| = min(k, the list's length): a shorter list divided by its own "
        "length; NaN for an empty list (LensKit 2025.8 / 2026.3 Precision)",
        "p",
        (("short_list", "length"),),
        stage="list",
        compute=peerrank.p_list_of,
        average_ties=False,
    ),
    MetricSpec(
        "tap_list",
        -1,
        "TAP_LIST",
        True,
        False,
        "(1/min(|T|, |L|)) * sum_{i : r_i <= k} i / r_i, |L| = min(k, the list's length); NaN "
        "for an empty list (LensKit 2025.8 / 2026.3 AveragePrecision)",
        "ap",
        (("denominator", "min(|T|, |L|)"),),
        stage="list",
        compute=peerrank.tap_list_of,
        average_ties=False,
    ),
    MetricSpec(
        "ndcg_bin_jk",
        -1,
        "NDCG_BIN_JK",
        True,
        False,
        "sum_{i : r_i <= k} 1 / max(1, log2 r_i) over the same sum for min(k, |T|) positives at "
        "the top: binary gains, the discount of Jarvelin & Kekalainen (2002) with base 2 "
        "(positions 1 and 2 undiscounted; LensKit 2025.8 / 2026.3 NDCG without gain=)",
        "ndcg",
        (("gain", "binary"), ("discount", "max(1, log2 r)")),
        stage="list",
        compute=peerrank.ndcg_bin_jk_of,
        average_ties=False,
    ),
    MetricSpec(
        "ndcg_jk",
        -1,
        "NDCG_JK",
        True,
        False,
        "sum_{i : r_i <= k} max(v_i, 0) / max(1, log2 r_i) over the same sum for the k largest "
        "max(v, 0) at the top; 0 when that ideal is 0 (LensKit 2026.3 NDCG(gain=...), the "
        "discount of Jarvelin & Kekalainen 2002)",
        "ndcg",
        (("gain", "linear"), ("discount", "max(1, log2 r)")),
        stage="list",
        compute=peerrank.ndcg_jk_of,
        average_ties=False,
    ),
    MetricSpec(
        "ndcg_bin_idealk",
        -1,
        "NDCG_BIN_IDEALK",
        True,
        False,
        "sum_{i : r_i <= k} 1 / log2(r_i + 1) over sum_{j <= k} 1 / log2(j + 1): binary gains, "
        "the ideal of k relevant items whatever |T| (RecTools 0.19 NDCG, "
        "divide_by_achievable=False, its default, 2026)",
        "ndcg",
        (("gain", "binary"), ("ideal", "k")),
        stage="list",
        compute=peerrank.ndcg_bin_idealk_of,
        average_ties=False,
    ),
    MetricSpec(
        "ncrr",
        -1,
        "NCRR",
        True,
        False,
        "sum_{i : r_i <= k} 1 / r_i over sum_{j <= min(|T|, |L|)} 1 / j, |L| = min(k, the "
        "list's length); 0 without a hit (Cornac 3.0.1 NCRR, 2026)",
        stage="list",
        compute=peerrank.ncrr_of,
        average_ties=False,
    ),
    MetricSpec(
        "rr_full",
        Whole.RR_FULL,
        "RR_FULL",
        False,
        False,
        "1 / r_1: the reciprocal rank of the first positive over the whole ranking, no cutoff "
        "(Cornac 3.0.1 MRR, 2026)",
        "rr",
        (("scope", "whole_ranking"),),
        average_ties=False,
    ),
    *[
        MetricSpec(
            f"iprec10_at_recall_{j / 10:.2f}",
            Whole(Whole.IPREC10_0 + j),
            f"IPREC10@{j / 10:.2f}",
            False,
            False,
            f"interpolated precision at recall {j / 10:.2f} as trec_eval 10.0 counts it: "
            f"max over i >= max(1, c) of i / r_i, c = lround({j / 10:.2f} |T|), rounded half "
            "away from zero (trec_eval 10.0, 2026: 9 added 0.9 and truncated)",
            "iprec",
            (("recall", f"{j / 10:.2f}"), ("cutoff", "lround")),
            average_ties=False,
        )
        for j in range(11)
    ],
    MetricSpec(
        "11pt_avg10",
        Whole.AVG_11PT10,
        "11pt_avg10",
        False,
        False,
        "mean of the 11 interpolated precisions of trec_eval 10.0 (iprec10_at_recall_*; "
        "trec_eval 10.0's 11pt_avg, 2026)",
        "11pt_avg",
        (("cutoff", "lround"),),
        average_ties=False,
    ),
    MetricSpec(
        "unj",
        -1,
        "unj",
        True,
        True,
        "#{j <= k : the j-th listed item is unjudged} / k, unjudged: neither a positive nor a "
        "judged non-relevant test entry (below relevance_level); a shorter list still over k; "
        "NaN for a user without a positive (trec_eval 10.0 unj_k, 2026)",
        stage="list",
        compute=peerrank.unj_of,
        average_ties=False,
        greater_is_better=False,
    ),
]

#: All registered metrics by name, in the canonical output order.
#: Left out of ``"standard"`` (see :attr:`MetricSpec.standard`): 20 columns a user rarely wants
#: by default; ``"all"``, a profile or a name gives them.
_NOT_STANDARD = {"ap_hits", "set_map", "gini_items", "entropy_mean", "11pt_avg", "ndcg_spark"}
_NOT_STANDARD |= {"ndcg_exp1", "ap_elliot", "gini_complement"}  # Elliot's and WarpRec's
#: The variants other libraries' profiles add (see metrics/peerrank.py), also left out.
_NOT_STANDARD |= {"p_list", "tap_list", "ndcg_bin_jk", "ndcg_jk", "ndcg_bin_idealk", "ncrr"}
_NOT_STANDARD |= {"rr_full", "11pt_avg10", "unj"}
_NOT_STANDARD |= {f"iprec10_at_recall_{j / 10:.2f}" for j in range(11)}
_SPECS = [
    dataclasses.replace(s, standard=False)
    if s.name in _NOT_STANDARD or s.name.startswith("iprec_at_recall_")
    else s
    for s in _SPECS
]
#: Names that stand for a set of metrics: every one, or the standard ones.
METRIC_SETS = ("all", "standard")
METRICS: dict[str, MetricSpec] = {s.name: s for s in _SPECS}

#: The definition choices of the metrics beyond their :attr:`MetricSpec.variant`, choice by
#: choice: the value a metric takes, or its family's (the base metric's, which its variants
#: share) when the metric has none of its own; in the choice names of
#: :mod:`~recoeval_tracking.metrics.agreement` plus ``log_base``. A metric in no table makes no
#: such choice (``hit``, ``rr``, ``bpref``...). ``short_list``, the rule for a list shorter than
#: k: ``k``, its missing ranks are misses; ``length``, divided by the list's own length.
_DEFINITION: dict[str, dict[str, str]] = {
    "denominator": {
        "p": "k",
        "tp": "min(k, |T|)",
        "r": "|T|",
        "f1": "k + |T|",
        "rprec": "|T|",
        "pr_auc": "|T|",
        "unj": "k",
        "p_list": "|L|",
        "p_pooled": "min(k, |T|)",
    },
    "short_list": {"p": "k", "tp": "k", "unj": "k", "ncrr": "length", "tap_list": "length"},
    "log_base": {"ndcg": "2", "dcg": "2", "ndcg_spark": "e"},
    "ideal": {"ndcg": "min(k, |T|)", "ncrr": "min(|T|, |L|)"},
    "cutoff": dict.fromkeys(("iprec", "11pt_avg"), "(long) (rho |T| + 0.9)"),
    "ties": {"gauc": "average"},
}


def definition_choices(name: str) -> dict[str, str]:
    """The definition choices of the registered metric ``name``: each choice's value for the
    metric, or for its family, then its :attr:`MetricSpec.variant` (``ndcg_bin``: ``log_base``
    2, ``ideal`` min(k, |T|), ``gain`` binary). One description per metric, which library
    profiles (:mod:`~recoeval_tracking.metrics.profiles`) state their own choices over."""
    spec = METRICS[name]
    family = spec.family or name
    found = {c: by.get(name, by.get(family)) for c, by in _DEFINITION.items()}
    return {**{c: v for c, v in found.items() if v is not None}, **dict(spec.variant)}


def column_name(spec: MetricSpec, k: int) -> str:
    """Per-user column name at cutoff ``k``: ``ndcg_at_10``; whole-ranking metrics keep their name."""
    return f"{spec.name}_at_{k}" if spec.at_k else spec.name


def curve_name(spec: MetricSpec) -> str:
    """Name of the @1..K curve of a cutoff metric: ``ndcg_at_k``."""
    return f"{spec.name}_at_k"


def spec_for_key(key: str) -> MetricSpec | None:
    """The registered metric behind a column or logged key (``ndcg_at_10``, ``ndcg_at_k``,
    ``roc_auc``, ``coverage_at_10``), or None when the key names no registered metric."""
    base = str(key)
    if base in METRICS:
        return METRICS[base]
    head, sep, tail = base.rpartition("_at_")
    if sep and head in METRICS and (tail == "k" or tail.isdigit()):
        return METRICS[head]
    return None


def greater_is_better(key: str) -> bool:
    """The direction of a metric column or logged key: False for lower-is-better metrics
    (``mpr``) and for timings (``*_seconds``); True for every other key."""
    spec = spec_for_key(key)
    if spec is not None:
        return spec.greater_is_better
    return not str(key).endswith("_seconds")


def resolve_metrics(
    metrics: str | list[str] | tuple[str, ...], func: str = "evaluate"
) -> list[MetricSpec]:
    """Turn metric names (or ``"all"``, ``"standard"``) into specs in canonical order, with a
    clear error."""
    if isinstance(metrics, str):
        metrics = [metrics]
    names: list[str] = []
    for m in metrics:
        if not isinstance(m, str):
            raise InputError(
                f"The 'metrics' parameter of {func} must be a list of metric names. "
                f"Got {m!r} (type {type(m).__name__}) in it instead."
            )
        key = m.strip().lower()
        if key == "all":
            names.extend(METRICS)
            continue
        if key == "standard":
            names.extend(name for name, spec in METRICS.items() if spec.standard)
            continue
        if key not in METRICS:
            raise InputError(
                f"The 'metrics' parameter of {func} must name registered metrics "
                f"({', '.join(METRICS)}, 'all' or 'standard'). Got {m!r} instead."
            )
        names.append(key)
    if not names:
        raise InputError(
            f"The 'metrics' parameter of {func} must name at least one metric. "
            "Got an empty list instead."
        )
    chosen = set(names)
    for name in list(chosen):
        chosen.update(METRICS[name].needs)
    return [s for s in _SPECS if s.name in chosen]
