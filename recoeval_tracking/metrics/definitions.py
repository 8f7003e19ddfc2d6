"""Fingerprints of a definitions record: one for the whole record, one per metric column."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from .registry import spec_for_key

__all__ = ["fingerprint", "metric_fingerprints"]


def fingerprint(definitions: dict[str, Any]) -> str:
    """Short stable hash of a definitions record (the score source's description excluded)."""
    core = {k: v for k, v in definitions.items() if k != "source"}
    text = json.dumps(core, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


#: Definition entries that concern one metric only (left out of the other metrics' prints).
_METRIC_OWN = {"serendipity_top_n": "serendipity"}
#: Entries that draw a replicate rather than define a metric (the seed of random tie-breaking).
_NOT_DEFINING = ("source", "metrics", "ties_seed")


def metric_fingerprints(definitions: dict[str, Any], columns: Sequence[str]) -> dict[str, str]:
    """One fingerprint per metric column (``ndcg_at_10``, ``coverage_at_10``): the shared part
    of the definitions record (K, ties, NaN rules, protocol, profile) plus that metric's own
    formula, so that runs are compared metric by metric. The seed of random tie-breaking is left
    out: runs that differ only by it are replicates of one definition. Columns that name no
    metric of the record are left out."""
    formulas = dict(definitions.get("metrics") or {})
    shared = {k: v for k, v in definitions.items()
              if k not in _NOT_DEFINING and k not in _METRIC_OWN}
    out: dict[str, str] = {}
    for col in columns:
        spec = spec_for_key(col)
        if spec is None or spec.name not in formulas:
            continue
        own = {k: definitions[k] for k, name in _METRIC_OWN.items()
               if name == spec.name and k in definitions}
        out[str(col)] = fingerprint({**shared, **own, "metric": spec.name,
                                     "formula": formulas[spec.name]})
    return out
