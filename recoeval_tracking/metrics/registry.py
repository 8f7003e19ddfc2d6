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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._validation import InputError
from ..engine.codes import AtK, Whole
from . import beyond

__all__ = ["MetricSpec", "METRICS", "resolve_metrics", "column_name", "curve_name",
           "spec_for_key", "greater_is_better"]


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

    @property
    def kind(self) -> str:
        """``at_k`` (kernel, per cutoff), ``whole`` (kernel, whole ranking), ``list`` (per user,
        from the top-K list) or ``aggregate`` (one number over the users)."""
        if self.stage == "kernel":
            return "at_k" if self.at_k else "whole"
        return self.stage


_SPECS = [
    MetricSpec("p", AtK.P, "P", True, True,
               "P@k = hits(k) / k"),
    MetricSpec("tp", AtK.TP, "TP", True, True,
               "TP@k = hits(k) / min(k, |T|)"),
    MetricSpec("r", AtK.R, "R", True, True,
               "R@k = hits(k) / |T|"),
    MetricSpec("ap", AtK.AP, "AP", True, False,
               "AP@k = (1/|T|) * sum_{i : r_i <= k} i / r_i"),
    MetricSpec("tap", AtK.TAP, "TAP", True, False,
               "TAP@k = (1/min(k, |T|)) * sum_{i : r_i <= k} i / r_i"),
    MetricSpec("ndcg", AtK.NDCG, "NDCG", True, False,
               "NDCG@k = DCG@k / IDCG@k, DCG@k = sum_{i : r_i <= k} g_i / log2(r_i + 1) with the "
               "linear gain g_i = test value v_i; IDCG@k = sum_{j <= min(k, #g>0)} g_(j) / "
               "log2(j + 1) over the positive gains sorted descending; NaN if no g > 0",
               "ndcg", (("gain", "linear"),)),
    MetricSpec("ndcg_exp", AtK.NDCG_EXP, "NDCG_EXP", True, False,
               "as ndcg with the exponential gain g_i = 2^v_i - 1 (Burges et al. 2005; Hivemall "
               "graded NDCG, RecBole with graded relevance)",
               "ndcg", (("gain", "exponential"),)),
    MetricSpec("ndcg_bin", AtK.NDCG_BIN, "NDCG_BIN", True, False,
               "as ndcg with the binary gain g_i = 1 for every test item (RecBole, implicit, "
               "ranx on binary qrels)",
               "ndcg", (("gain", "binary"),)),
    MetricSpec("hit", AtK.HIT, "Hit", True, True,
               "Hit@k = 1 if hits(k) > 0 else 0"),
    MetricSpec("rr", AtK.RR, "RR", True, False,
               "RR@k = 1 / r_1 if r_1 <= k else 0"),
    MetricSpec("auc_topk", AtK.AUC_TOPK, "AUC_TOPK", True, False,
               "AUC inside the top-k list (Hivemall): with h = hits(k) and L = min(k, |pool|), "
               "#{(i, j) : i in T, j not in T, both in the list, i above j} / (h * (L - h)); "
               "0.5 when h * (L - h) = 0", "auc", (("scope", "top_k_list"),),
               average_ties=False),
    MetricSpec("roc_auc", Whole.ROC_AUC, "ROC_AUC", False, False,
               "ROC-AUC = #{(i, j) : i in T, j in pool \\ T, i ranked above j} / (|T| * |pool \\ T|)",
               "auc", (("scope", "catalog"),)),
    MetricSpec("pr_auc", Whole.PR_AUC, "PR_AUC", False, False,
               "PR-AUC = (1/|T|) * sum_i i / r_i  (AP@|pool|, rectangular rule)"),
    MetricSpec("mpr", Whole.MPR, "MPR", False, False,
               "MPR = sum_i v_i * (r_i - 1) / (|pool| - 1) / sum_i v_i: the test-value-weighted mean "
               "percentile rank, 0 = best (Hu, Koren & Volinsky 2008, eq. 8); NaN if sum_i v_i <= 0",
               greater_is_better=False),
    MetricSpec("dcg", AtK.DCG, "DCG", True, False,
               "DCG@k = sum_{i : r_i <= k} v_i / log2(r_i + 1): the numerator of ndcg (linear "
               "gain v_i = test value), unnormalised (Jarvelin & Kekalainen 2002; ranx's dcg); "
               "defined for every evaluated user, also when the pool holds only positives",
               "dcg", (("gain", "linear"),)),
    # beyond accuracy: from the top-K lists of the same pass
    MetricSpec("novelty", -1, "Novelty", True, True,
               "mean over the list of -log2(max(n_i, 1) / |U_train|), n_i = train users of item i",
               stage="list", compute=beyond.novelty_of),
    MetricSpec("ils", -1, "ILS", True, True,
               "mean cosine similarity over pairs of listed items (item factors or features)",
               stage="list", compute=beyond.ils_of, needs_item_vectors=True),
    MetricSpec("diversity", -1, "Diversity", True, True, "1 - ils", stage="list",
               compute=beyond.diversity_of, needs_item_vectors=True),
    MetricSpec("serendipity", -1, "Serendipity", True, True,
               "share of the list in the test set and outside the top-N popular train items",
               stage="list", compute=beyond.serendipity_of),
    MetricSpec("coverage", -1, "Coverage", True, True,
               "|union of the lists| / |items|", stage="aggregate",
               compute=beyond.over_lists(beyond.coverage)),
    MetricSpec("aggregated_diversity", -1, "AggregatedDiversity", True, True,
               "|union of the lists|", stage="aggregate",
               compute=beyond.over_lists(beyond.aggregated_diversity)),
    MetricSpec("entropy", -1, "Entropy", True, True,
               "-sum_i p_i ln p_i, p_i = (#lists with i) / (K |U|)", stage="aggregate",
               compute=beyond.over_lists(beyond.shannon_entropy)),
    MetricSpec("gini", -1, "Gini", True, True,
               "sum_j (2j - |I| - 1) p_(j) / (|I| - 1), p ascending", stage="aggregate",
               compute=beyond.over_lists(beyond.gini_index), greater_is_better=False),
    MetricSpec("personalisation", -1, "Personalisation", True, True,
               "1 - mean over user pairs of |L_u & L_v| / K (exact)", stage="aggregate",
               compute=beyond.over_lists(beyond.personalisation)),
    MetricSpec("gauc", -1, "GAUC", False, False,
               "sum_u |T_u| ROC-AUC_u / sum_u |T_u| over users with a defined ROC-AUC (RecBole)",
               "auc", (("scope", "user_weighted"),), stage="aggregate", needs=("roc_auc",),
               compute=beyond.gauc_of),
    MetricSpec("p_pooled", -1, "P_POOLED", True, True,
               "sum_u hits_u(k) / sum_u min(k, |T_u|) over defined users (implicit's precision)",
               "p", (("average", "pooled"),), stage="aggregate", needs=("tp",),
               compute=beyond.pooled_precision_of),
]

#: All registered metrics by name, in the canonical output order.
METRICS: dict[str, MetricSpec] = {s.name: s for s in _SPECS}


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


def resolve_metrics(metrics: str | list[str] | tuple[str, ...], func: str = "evaluate"
                    ) -> list[MetricSpec]:
    """Turn metric names (or ``"all"``) into specs in canonical order, with a clear error."""
    if isinstance(metrics, str):
        metrics = [metrics]
    names: list[str] = []
    for m in metrics:
        if not isinstance(m, str):
            raise InputError(f"The 'metrics' parameter of {func} must be a list of metric names. "
                             f"Got {m!r} (type {type(m).__name__}) in it instead.")
        key = m.strip().lower()
        if key == "all":
            names.extend(METRICS)
            continue
        if key not in METRICS:
            raise InputError(f"The 'metrics' parameter of {func} must name registered metrics "
                             f"({', '.join(METRICS)} or 'all'). Got {m!r} instead.")
        names.append(key)
    if not names:
        raise InputError(f"The 'metrics' parameter of {func} must name at least one metric. "
                         "Got an empty list instead.")
    chosen = set(names)
    for name in list(chosen):
        chosen.update(METRICS[name].needs)
    return [s for s in _SPECS if s.name in chosen]
