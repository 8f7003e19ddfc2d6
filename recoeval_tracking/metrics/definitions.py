"""The definitions record of a result and its fingerprints.

Everything that defines the numbers of an evaluation (the formulas, K, the tie policy, the NaN
rules, the relevance level, the rule for users without a positive, the treatment of infinite
scores, the candidate protocol) goes into one JSON-able record; its hash is the fingerprint that
says whether two numbers may be compared. Imports nothing of the engine.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from .registry import MetricSpec, spec_for_key
from .sampling import describe_negatives

__all__ = [
    "NAN_RULES",
    "NO_POSITIVE_RULES",
    "INF_RULES",
    "definitions_record",
    "options_definitions",
    "fingerprint",
    "metric_fingerprints",
]

#: The NaN rules, in the order they are checked; recorded with every result.
NAN_RULES = {
    "no_test": "the user has no stored test entry",
    "min_pos_test": "fewer test entries than min_pos_test",
    "cold_start": "no train entry while consider_cold_start is False (only when train is given)",
    "min_items_pool": "fewer items not in train than min_items_pool",
    "nan_score": "a NaN score among the items not in train (also a +-inf score when "
    "inf_scores='nan')",
    "all_equal": "every item not in train has the same score",
    "no_positive": "test entries but none at or above relevance_level (when no_positive='nan')",
    "only_positives": "every item not in train is a positive: only NDCG and DCG (dcg, dcg_exp) "
    "are computed",
    "pool_le_k": "at most k items not in train: P, TP, R, Hit, hits, F1 and set_map are NaN "
    "at that k",
    "ndcg_no_gain": "NDCG is NaN when no test value (gain) is > 0",
}

#: What a user with test entries but no positive (every value below ``relevance_level``) gets.
NO_POSITIVE_RULES = {
    "nan": "every metric NaN, nan_reason 'no_positive' (recometrics)",
    "zero": "every rank metric 0 (mpr, where lower is better, NaN), averaged in (trec_eval: "
    "a topic with judgements but no relevant document; ranx: a query whose "
    "judgements are all below rel_lvl)",
}

#: How +-inf scores are treated (NaN is always undefined).
INF_RULES = {
    "rank": "+inf and -inf are ordinary scores: +inf ranks first, -inf last (a common way to "
    "exclude items); ties among them follow the tie policy",
    "nan": "a +-inf score among the items not in train makes the user NaN with reason "
    "nan_score (recometrics)",
}


def definitions_record(
    specs: Sequence[MetricSpec],
    *,
    k: int,
    cumulative: bool,
    ties: str,
    seed: int,
    min_pos_test: int,
    min_items_pool: int,
    consider_cold_start: bool,
    source: dict[str, Any],
    relevance_level: float | None = None,
    no_positive: str = "nan",
    inf_scores: str = "rank",
    negatives: dict[str, Any] | None = None,
    gains: str | None = None,
) -> dict[str, Any]:
    """Everything that defines the numbers of a result (JSON-able). ``gains="binary"`` is
    recorded (key ``gains``); graded gains, the default, leave the record as it always was."""
    positives = (
        "stored test entries (NDCG gains are their values)"
        if relevance_level is None
        else f"stored test entries with a value >= {relevance_level!r}; those below "
        "are judged non-relevant (negatives; bpref's judged non-relevant items)"
    )
    binary = gains == "binary"
    if binary:
        positives = (
            positives.replace(" (NDCG gains are their values)", "")
            + "; every positive has gain 1 (binary relevance)"
        )
    record = {
        "metrics": {s.name: s.formula for s in specs},
        "k": k,
        "cumulative": cumulative,
        "ties": ties,
        "ties_seed": seed if ties in ("noise", "warprec") else None,
        "min_pos_test": min_pos_test,
        "min_items_pool": min_items_pool,
        "consider_cold_start": consider_cold_start,
        "nan_rules": NAN_RULES,
        "pool": "items not in the user's train row",
        "positives": positives,
        "relevance_level": relevance_level,
        "no_positive": {no_positive: NO_POSITIVE_RULES[no_positive]},
        "inf_scores": {inf_scores: INF_RULES[inf_scores]},
        "negatives": describe_negatives(negatives),
        "source": source,
    }
    if binary:
        record["gains"] = "binary"
    return record


#: Options recorded only when a metric that reads them is evaluated: option -> metrics.
_PARAMETERS = {
    "serendipity_top_n": ("serendipity",),
    "rbp_persistence": ("rbp",),
    "tail_ratio": ("tailpercentage",),
    "short_head_share": ("aplt", "aclt", "pop_rsp", "pop_reo"),
}


#: The options every definitions record holds (:func:`definitions_record`'s parameters).
_RECORDED = (
    "k",
    "cumulative",
    "ties",
    "seed",
    "min_pos_test",
    "min_items_pool",
    "consider_cold_start",
    "relevance_level",
    "no_positive",
    "inf_scores",
    "negatives",
)


def options_definitions(
    opts: Any,
    specs: Sequence[MetricSpec],
    source: dict[str, Any],
    left_out: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The definitions record of an evaluation with resolved options ``opts`` (an
    :class:`~recoeval_tracking.options.EvalOptions` with its profile applied): the shared
    record, the parameters of the metrics evaluated, the profile and what it left out."""
    recorded = {name: getattr(opts, name) for name in _RECORDED}
    defs = definitions_record(specs, source=source, gains=getattr(opts, "gains", None), **recorded)
    names = {s.name for s in specs}
    for option, metrics in _PARAMETERS.items():
        if names.intersection(metrics):
            defs[option] = getattr(opts, option)
    if opts.profile is not None:
        defs["profile"] = opts.profile
    if left_out:
        defs["left_out"] = dict(left_out)
    return defs


def fingerprint(definitions: dict[str, Any]) -> str:
    """Short stable hash of a definitions record (the score source's description excluded)."""
    core = {k: v for k, v in definitions.items() if k != "source"}
    text = json.dumps(core, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


#: Definition entries that concern some metrics only (left out of the other metrics' prints):
#: entry -> the metrics whose values it changes.
_METRIC_OWN = {
    "serendipity_top_n": ("serendipity",),
    "rbp_persistence": ("rbp",),
    "tail_ratio": ("tailpercentage",),
    "short_head_share": ("aplt", "aclt", "pop_rsp", "pop_reo"),
}
#: Entries that define no metric's own numbers: the score source's description, the other
#: metrics' formulas, the seed of random tie-breaking (it draws a replicate), the metrics an
#: input left out (ranked top-K lists leave out the whole-ranking ones: a top-K metric from
#: lists and from scores is the same metric) and whether the @1..K curves were computed (a
#: metric at K is the same number with or without its curve).
_NOT_DEFINING = ("source", "metrics", "ties_seed", "left_out", "cumulative")


def metric_fingerprints(definitions: dict[str, Any], columns: Sequence[str]) -> dict[str, str]:
    """One fingerprint per metric column (``ndcg_at_10``, ``coverage_at_10``): the shared part
    of the definitions record (K, ties, NaN rules, protocol, profile) plus that metric's own
    formula and parameters, so that runs are compared metric by metric: a print covers only
    what changes that metric's values. The seed of random tie-breaking is left out: runs that
    differ only by it are replicates of one definition; so are the score source (scores,
    factors or ranked top-K lists), what it left out of the evaluation, whether the @1..K
    curves were computed (``cumulative``) and the parameters of other metrics
    (``short_head_share`` enters the prints of aplt, aclt, pop_rsp and pop_reo only). Columns
    that name no metric of the record are left out."""
    formulas = dict(definitions.get("metrics") or {})
    shared = {
        k: v for k, v in definitions.items() if k not in _NOT_DEFINING and k not in _METRIC_OWN
    }
    out: dict[str, str] = {}
    for col in columns:
        spec = spec_for_key(col)
        if spec is None or spec.name not in formulas:
            continue
        own = {
            k: definitions[k]
            for k, names in _METRIC_OWN.items()
            if spec.name in names and k in definitions
        }
        out[str(col)] = fingerprint(
            {**shared, **own, "metric": spec.name, "formula": formulas[spec.name]}
        )
    return out
