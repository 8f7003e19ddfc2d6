"""A metric's definition fingerprint covers only what changes that metric's values (issue #47,
item 1): whether the @1..K curves were computed and other metrics' settings enter no print."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics.definitions import metric_fingerprints
from recoeval_tracking.reporting.runs import _job_metric_fingerprints

METRICS = ["p", "ndcg", "aplt", "rbp", "tailpercentage"]


def _results(**options):
    rng = np.random.default_rng(0)
    train = sp.csr_array((rng.random((30, 25)) < 0.2).astype(np.float64))
    test = sp.csr_array(((rng.random((30, 25)) < 0.2) & (train.toarray() == 0)).astype(float))
    return rt.evaluate(train, test, scores=rng.random((30, 25)), metrics=METRICS, k=5, **options)


def _prints(res):
    return metric_fingerprints(res.definitions, [*res.metric_columns, *res.aggregates])


def test_curves_enter_no_metrics_print():
    flat, curved = _results(), _results(cumulative=True)
    assert flat.fingerprint != curved.fingerprint  # the whole record still says it
    assert _prints(flat) == _prints(curved)


def test_a_metrics_own_setting_enters_its_print_only():
    base = _prints(_results())
    for option, owners in (
        ({"short_head_share": 0.5}, {"aplt_at_5"}),
        ({"rbp_persistence": 0.5}, {"rbp_at_5"}),
        ({"tail_ratio": 0.3}, {"tailpercentage_at_5"}),
    ):
        other = _prints(_results(**option))
        assert {c for c in base if base[c] != other[c]} == owners, option


def test_a_shared_setting_enters_every_print():
    base, other = _prints(_results()), _prints(_results(ties="optimistic"))
    assert all(base[c] != other[c] for c in base)


def test_old_job_folders_are_derived_by_todays_rule():
    """A folder written when curves entered the prints compares with a new run: its prints are
    derived from its definitions record, not taken as recorded."""
    res = _results(cumulative=True)
    cols = [*res.metric_columns, *res.aggregates]
    stale = {c: "0" * 16 for c in cols}
    job = SimpleNamespace(
        definitions=res.definitions,
        metric_fingerprints=stale,
        metric_columns=res.metric_columns,
        metrics=dict(res.aggregates),
    )
    assert _job_metric_fingerprints(job) == _prints(_results())
