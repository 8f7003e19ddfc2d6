"""``rt.compare_profiles``: each profile's value, and the difference from the default split into
its definition choices.

Expected values come from the definitions, written out here per user (``_ap``, ``_ndcg``,
``_elliot_map``), on hand examples where each choice moves the value by a different amount, so a
decomposition that skips a step, applies one twice or in another order fails.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import recoeval_tracking as rt
from recoeval_tracking.metrics.agreement import CHOICE_ORDER, _metric_choices
from recoeval_tracking.metrics.profiles import PROFILES
from recoeval_tracking.metrics.registry import METRICS

# One user; item 0 in train; test values 3, 0, -1 and 1: every stored entry is relevant by
# default, values >= 0 for Elliot (relevance_threshold 0), values > 0 for WarpRec.
N = 8
TEST = {1: 3.0, 2: 0.0, 5: -1.0, 6: 1.0}
LIST = [2, 3, 1, 5, 4]
K = 4


def _data():
    train = sp.csr_array(([1.0], ([0], [0])), shape=(1, N))
    items = sorted(TEST)
    test = sp.csr_array(([TEST[i] for i in items], ([0] * len(items), items)), shape=(1, N))
    return train, test


def _relevant(level: float | None, strict: bool = False) -> dict[int, float]:
    if level is None:
        return dict(TEST)
    return {i: v for i, v in TEST.items() if (v > level if strict else v >= level)}


def _ap(listed, rel, denominator):
    hits, total = 0, 0.0
    for r, i in enumerate(listed[:K], start=1):
        if i in rel:
            hits += 1
            total += hits / r
    return total / denominator


def _elliot_map(listed, rel):
    return sum(sum(1 for i in listed[:n] if i in rel) / n for n in range(1, K + 1)) / K


def _ndcg(listed, rel, gain):
    """DCG over the list with ``gain(v)``, over the ideal of the min(K, |positive gains|)
    largest positive gains."""
    dcg = sum(gain(rel[i]) / math.log2(r + 1) for r, i in enumerate(listed[:K], 1) if i in rel)
    gains = sorted((gain(v) for v in rel.values() if gain(v) > 0), reverse=True)[:K]
    return dcg / sum(g / math.log2(j + 1) for j, g in enumerate(gains, 1))


def _linear(v):
    return v


def _exp1(v):
    return 2.0 ** (v + 1) - 1


def _binary(v):
    return 1.0


def _steps(ag, profile, name):
    s = ag.steps
    return s[(s["profile"] == profile) & (s["name"] == name)].sort_values("step")


def _row(ag, profile, name):
    t = ag.table
    return t[(t["profile"] == profile) & (t["name"] == name)].iloc[0]


@pytest.fixture(scope="module")
def agreement():
    train, test = _data()
    return rt.compare_profiles(
        train, test, ranked=np.array([LIST]), k=K, profiles=["elliot", "warprec", "recbole"]
    )


def test_elliot_map_is_split_into_relevance_then_its_average(agreement):
    default = _ap(LIST, _relevant(None), len(TEST))
    after_relevance = _ap(LIST, _relevant(0.0), len(_relevant(0.0)))
    elliot = _elliot_map(LIST, _relevant(0.0))
    row = _row(agreement, "elliot", "MAP")
    assert row["default_metric"] == "ap" and row["metric"] == "ap_elliot"
    assert row["default"] == pytest.approx(default)
    assert row["value"] == pytest.approx(elliot)
    steps = _steps(agreement, "elliot", "MAP")
    assert list(steps["choice"]) == ["relevance_level", "denominator + precision_at"]
    np.testing.assert_allclose(steps["after"], [after_relevance, elliot])
    np.testing.assert_allclose(
        steps["delta"], [after_relevance - default, elliot - after_relevance]
    )
    assert steps["delta"].sum() == pytest.approx(row["difference"])


def test_ndcg_steps_of_three_libraries(agreement):
    default = _ndcg(LIST, _relevant(None), _linear)
    # Elliot: the relevant items (>= 0), then the gain 2^(v+1) - 1
    e1, e2 = _ndcg(LIST, _relevant(0.0), _linear), _ndcg(LIST, _relevant(0.0), _exp1)
    np.testing.assert_allclose(_steps(agreement, "elliot", "nDCG")["after"], [e1, e2])
    # WarpRec: values > 0 only, then the same gain
    w1 = _ndcg(LIST, _relevant(0.0, strict=True), _linear)
    w2 = _ndcg(LIST, _relevant(0.0, strict=True), _exp1)
    np.testing.assert_allclose(_steps(agreement, "warprec", "nDCG")["after"], [w1, w2])
    # RecBole: every entry relevant, gain 1
    rb = _steps(agreement, "recbole", "ndcg")
    assert list(rb["choice"]) == ["gain"]
    np.testing.assert_allclose(rb["after"], [_ndcg(LIST, _relevant(None), _binary)])
    for profile, name in (("elliot", "nDCG"), ("warprec", "nDCG"), ("recbole", "ndcg")):
        row = _row(agreement, profile, name)
        assert row["default"] == pytest.approx(default)
        assert _steps(agreement, profile, name)["delta"].sum() == pytest.approx(row["difference"])


def test_warprec_map_moves_by_relevance_and_denominator():
    # two users: the second has more positives than k, so min(k, |T|) differs from |T|
    train = sp.csr_array((2, N))
    test = sp.csr_array(np.array([[0, 3, 0, 0, 0, 0, 1, 0], [1, 1, 1, 1, 1, 1, 0, 0]], float))
    lists = np.array([[1, 2, 3, 6], [0, 7, 1, 2]])
    ag = rt.compare_profiles(train, test, ranked=lists, k=K, profiles="warprec", metrics="ap")
    rel = [{1: 3.0, 6: 1.0}, dict.fromkeys(range(6), 1.0)]
    default = np.mean([_ap(lists[u].tolist(), rel[u], len(rel[u])) for u in range(2)])
    tap = np.mean([_ap(lists[u].tolist(), rel[u], min(K, len(rel[u]))) for u in range(2)])
    row = _row(ag, "warprec", "MAP")
    assert row["default"] == pytest.approx(default) and row["value"] == pytest.approx(tap)
    steps = _steps(ag, "warprec", "MAP")
    assert list(steps["choice"]) == ["denominator"]  # every value is > 0: relevance is no step
    assert steps["delta"].iloc[0] == pytest.approx(tap - default)


def test_the_order_changes_the_steps_not_their_sum(agreement):
    train, test = _data()
    order = list(CHOICE_ORDER)
    order.remove("relevance_level")
    order.insert(order.index("gain") + 1, "relevance_level")  # the gain first
    ag = rt.compare_profiles(
        train, test, ranked=np.array([LIST]), k=K, profiles="elliot", order=order
    )
    steps = _steps(ag, "elliot", "nDCG")
    assert list(steps["choice"]) == ["gain", "relevance_level"]
    # with every entry relevant, the gain 2^(v+1) - 1 gives the dislike (-1) a gain of 0
    g1 = _ndcg(LIST, _relevant(None), _exp1)
    np.testing.assert_allclose(steps["after"], [g1, _ndcg(LIST, _relevant(0.0), _exp1)])
    before = _steps(agreement, "elliot", "nDCG")
    assert not np.allclose(before["delta"].to_numpy(), steps["delta"].to_numpy())
    assert steps["delta"].sum() == pytest.approx(before["delta"].sum())
    assert ag.order == tuple(order)


def test_every_profile_decomposes_exactly_with_scores():
    rng = np.random.default_rng(3)
    m, n = 12, 15
    test = sp.random_array((m, n), density=0.3, random_state=rng, format="csr")
    test.data = rng.integers(1, 6, test.nnz).astype(float)
    train = sp.csr_array((m, n))
    scores = rng.integers(0, 4, (m, n)).astype(float)  # ties: each policy orders them its way
    ag = rt.compare_profiles(train, test, scores=scores, k=5)
    assert set(ag.table["profile"]) == set(PROFILES)
    for (profile, name), steps in ag.steps.groupby(["profile", "name"]):
        row = _row(ag, profile, name)
        assert steps["delta"].sum() == pytest.approx(row["difference"], abs=1e-12), (profile, name)
        assert steps["after"].iloc[-1] == pytest.approx(row["value"], abs=1e-12)
    # each value is the profile's own evaluation
    for profile in ("recbole", "trec_eval", "elliot"):
        res = rt.evaluate(train, test, scores=scores, k=5, profile=profile)
        for _, row in ag.table[ag.table["profile"] == profile].iterrows():
            key = f"{row['metric']}_at_5" if METRICS[row["metric"]].at_k else row["metric"]
            assert row["value"] == pytest.approx(res.means[key], nan_ok=True), (profile, key)
    # ties moved RecBole's P@5 (index order) away from the default (seeded noise)
    ties = ag.steps[(ag.steps["profile"] == "recbole") & (ag.steps["choice"] == "ties")]
    assert len(ties) and (ties["delta"] != 0).any()


def test_a_metrics_choices_are_where_its_variant_differs_from_the_default():
    """The decomposition's steps of a metric are where its registered variant differs from the
    default metric of its family (the profile's record repeats them, with the rest of its
    definition): RecBole's NDCG differs in its gain alone, LensKit's binary NDCG in its gain and
    discount, Elliot's MAP in its denominator and where it takes precisions."""
    assert _metric_choices(PROFILES["recbole"], "ndcg_bin") == {"gain": "binary"}
    assert _metric_choices(PROFILES["lenskit"], "ndcg_bin_jk") == {
        "gain": "binary",
        "discount": "max(1, log2 r)",
    }
    assert _metric_choices(PROFILES["lenskit"], "ndcg_jk") == {"discount": "max(1, log2 r)"}
    assert _metric_choices(PROFILES["elliot"], "ap_elliot") == {
        "denominator": "k",
        "precision_at": "every_rank",
    }
    assert _metric_choices(PROFILES["ranx"], "p") == {}
    for profile, prof in PROFILES.items():
        for name, made in prof.get("choices", {}).items():
            for choice, value in _metric_choices(prof, name).items():
                assert made.get(choice, value) == value, (profile, name, choice)


def test_generated_lists_are_reported_and_each_profile_applies_its_rule():
    test_m = sp.csr_array(([1.0, 1.0], ([0, 0], [1, 3])), shape=(1, 6))  # b and d
    train_m = sp.csr_array(([1.0], ([0], [0])), shape=(1, 6))  # a
    ranked = pd.DataFrame(
        {
            "user": [0, 0, 0, 0],
            "item": [99, 1, 1, 2],  # 99 is outside the catalogue, b twice
            "score": [0.9, 0.8, 0.5, 0.4],
        }
    )
    ag = rt.compare_profiles(
        train_m, test_m, ranked=ranked, k=3, profiles=["warprec", "elliot"], metrics=["rr", "p"]
    )
    lists = ag.lists.iloc[0]
    assert (lists["out_of_catalogue"], lists["duplicates"], lists["usable"]) == (1, 1, 2)
    assert bool(lists["short"]) and ag.lists_summary["short_lists"] == 1
    # default: 99 a miss at rank 1, b counted once at rank 2 -> RR 1/2, P 1/3
    # WarpRec: 99 dropped, b's scores summed (1.3) -> [b, c] -> RR 1
    # Elliot: cut at 3 -> [99, b, b], 99 dropped, the copy a miss -> [b, miss] -> RR 1
    for profile, name in (("warprec", "MRR"), ("elliot", "MRR")):
        row = _row(ag, profile, name)
        assert (row["default"], row["value"]) == pytest.approx((0.5, 1.0))
    warprec = _steps(ag, "warprec", "MRR")
    assert list(warprec["choice"]) == ["out_of_catalogue", "duplicates"]
    assert list(warprec["delta"]) == pytest.approx([0.5, 0.0])  # summing b: still at rank 1
    p = _row(ag, "elliot", "Precision")
    assert (p["default"], p["value"]) == pytest.approx((1 / 3, 1 / 3))
    assert any("Elliot counts every copy" in note for note in ag.notes)


def test_bad_input_names_the_argument():
    train, test = _data()
    with pytest.raises(rt.InputError, match=r"'profiles'.*'recometrics'.*'elliot'.*'warprec'"):
        rt.compare_profiles(train, test, ranked=np.array([LIST]), profiles=["recbol"])
    with pytest.raises(rt.InputError, match="'scores'"):
        rt.compare_profiles(train, test, k=3)
    with pytest.raises(rt.InputError, match="'order'"):
        rt.compare_profiles(train, test, ranked=np.array([LIST]), order=["gain"])
    with pytest.raises(rt.InputError, match="'metrics'"):
        rt.compare_profiles(train, test, ranked=np.array([LIST]), metrics=["ndgc"])


@pytest.mark.skipif(
    sys.version_info < (3, 12) or importlib.util.find_spec("warprec") is None,
    reason="warprec is not installed (pip install 'recoeval_tracking[crosscheck]', Python 3.12+)",
)
def test_warprec_metrics_agree_with_the_library():  # pragma: no cover - needs warprec
    import torch
    from warprec.evaluation.metrics.accuracy.map import MAP
    from warprec.evaluation.metrics.accuracy.ndcg import nDCG

    rng = np.random.default_rng(5)
    m, n, k = 20, 30, 5
    test = sp.random_array((m, n), density=0.2, random_state=rng, format="csr")
    test.data = rng.integers(1, 6, test.nnz).astype(float)
    scores = rng.random((m, n))
    res = rt.evaluate(
        sp.csr_array((m, n)),
        test,
        scores=scores,
        k=k,
        profile="warprec",
        metrics=["ndcg_exp1", "tap"],
    )
    preds = torch.tensor(scores, dtype=torch.float32)
    ground = torch.tensor(test.toarray(), dtype=torch.float32)
    users = torch.arange(m)
    for cls, col in ((nDCG, "ndcg_exp1_at_5"), (MAP, "tap_at_5")):
        metric = cls(k=k, num_users=m)
        metric.update(preds, users, ground=ground)
        got = next(iter(metric.compute().values())).numpy()
        np.testing.assert_allclose(got, res.per_user[col].to_numpy(), rtol=1e-5, equal_nan=True)


def test_the_guides_example_prints_what_the_guide_shows():
    """docs/guides/why-libraries-disagree.md: its Python block runs and prints the text block
    that follows it (the values, the choice order and the sentences a newcomer compares)."""
    guide = Path(__file__).resolve().parents[2] / "docs" / "guides" / "why-libraries-disagree.md"
    code, shown = re.search(
        r"```python\n(.*?)```\s*```text\n(.*?)```", guide.read_text(), re.S
    ).groups()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, guide.name, "exec"), {})
    assert [line.rstrip() for line in out.getvalue().splitlines()] == [
        line.rstrip() for line in shown.splitlines()
    ]


def test_notes_name_every_rule_not_reproduced_that_acts_on_the_input():
    """Scores (no list): user 0 holds a test value -2, user 1 only a 0 (no positive for
    WarpRec's > 0), user 2 six train items of eight (two left, k = 3). Each of WarpRec's
    ``not_reproduced`` rules that acts on these says how much of the input it concerns; the
    short-list rule (about lists) and Elliot's list rules say why they have nothing to act on."""
    train = np.zeros((3, 8))
    train[2, :6] = 1.0
    # user 1's 0 is a stored (judged) entry
    test = sp.csr_array(([-2.0, 3.0, 0.0, 1.0], ([0, 0, 1, 2], [1, 4, 2, 7])), shape=(3, 8))
    scores = np.arange(24, dtype=float).reshape(3, 8)
    ag = rt.compare_profiles(
        sp.csr_array(train), test, scores=scores, k=3, profiles=["warprec", "elliot"]
    )
    warprec = PROFILES["warprec"]["not_reproduced"]
    assert f"warprec: {warprec['negative_values']} (test values < 0: 1)" in ag.notes
    assert f"warprec: {warprec['no_positive_lists']} (users without a positive: 1)" in ag.notes
    pool = "users with at most k = 3 items outside train: 1"
    assert f"warprec: {warprec['pool_le_k']} ({pool})" in ag.notes
    assert (
        "warprec: not reproduced, absent from this input: short_list (scored input: no list)"
        in ag.notes
    )
    assert (
        "elliot: not reproduced, absent from this input: duplicates (scored input: no list); "
        "train_items (scored input: no list)" in ag.notes
    )
