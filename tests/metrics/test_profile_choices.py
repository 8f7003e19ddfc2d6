"""Each profile's ``choices`` (its definition choices per metric, read by the agreement table)
agree with the registry and with the profile's own options: one entry per metric of the profile,
the registry's choice names, the variant a metric is registered with, the profile's tie order."""

from __future__ import annotations

import pytest

from recoeval_tracking.metrics.profiles import PROFILES
from recoeval_tracking.metrics.registry import METRICS, definition_choices

#: The choice names: the registry's variant keys, and those every profile may state.
CHOICE_NAMES = {key for spec in METRICS.values() for key, _ in spec.variant} | {
    "log_base",
    "ties",
    "no_positive",
    "short_list",
    "duplicates",
    "denominator",
    "ideal",
    "discount",
    "average",
}
#: Profiles that record their choices (every profile written before or with the record).
WITH_CHOICES = ["recometrics", "hivemall", "recbole", "implicit", "ranx", "trec_eval"]
WITH_CHOICES += ["lenskit", "torchmetrics", "recommenders", "recommenders_spark", "cornac"]
WITH_CHOICES += ["rectools", "trec_eval10", "spark", "elliot", "warprec"]
#: Where a library's metric departs from the registry's description of the metric it maps to:
#: Microsoft Recommenders' and Spark's NDCGs take the natural log (the same ratio), Spark's
#: meanAveragePrecision reads each whole list.
DEPARTURES = {
    ("recommenders", "ndcg_bin", "log_base"): "e",
    ("recommenders", "ndcg", "log_base"): "e",
    ("recommenders", "ndcg_exp", "log_base"): "e",
    ("recommenders_spark", "ndcg_bin", "log_base"): "e",
    ("spark", "ndcg_bin", "log_base"): "e",
    ("spark", "ap", "short_list"): "whole list",
}


@pytest.mark.parametrize("name", WITH_CHOICES)
def test_choices_cover_the_profiles_metrics_with_known_names(name):
    prof = PROFILES[name]
    choices = prof["choices"]
    assert set(choices) == set(prof["metrics"])
    for metric, made in choices.items():
        assert set(made) <= CHOICE_NAMES, (metric, set(made) - CHOICE_NAMES)
        assert all(isinstance(v, str) and v for v in made.values()), metric
        # the profile's tie order, but where the metric has its own (gauc: average ranks)
        assert made["ties"] == ("average" if METRICS[metric].extra_pass else prof["ties"]), metric
        # a registered variant states its own choices: the profile's record repeats them
        for key, value in METRICS[metric].variant:
            if key in made:
                assert made[key] == value, (metric, key)


@pytest.mark.parametrize("name", sorted(p for p in PROFILES if "choices" in PROFILES[p]))
def test_every_recorded_choice_is_well_formed(name):
    """Whoever adds a profile with choices keeps to the same shape."""
    for metric, made in PROFILES[name]["choices"].items():
        assert metric in METRICS and metric in PROFILES[name]["metrics"], metric
        assert isinstance(made, dict) and all(isinstance(k, str) for k in made), metric


def test_the_choices_separate_the_libraries():
    """The records tell the NDCG variants and the AP denominators apart, as the agreement table
    needs: RecTools' ideal of k items, LensKit's clipped discount, Spark's natural log."""
    ch = {name: PROFILES[name]["choices"] for name in WITH_CHOICES}
    assert ch["rectools"]["ndcg_bin_idealk"]["ideal"] == "k"
    assert ch["trec_eval"]["11pt_avg"]["cutoff"] != ch["trec_eval10"]["11pt_avg10"]["cutoff"]
    assert ch["lenskit"]["ndcg_bin_jk"]["discount"] == "max(1, log2 r)"
    assert ch["spark"]["ndcg_bin"]["log_base"] == "e"
    denominators = {
        ch[n][m]["denominator"] for n in ch for m in ch[n] if m.startswith(("ap", "tap"))
    }
    assert denominators == {"|T|", "min(k, |T|)", "hits", "min(|T|, |L|)", "k"}  # k: Elliot


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_record_holds_the_registrys_description_of_the_metric(name):
    """Every profile records every one of its metrics, and a metric's record is the registry's
    one description of it (its family's choices and its variant's) but where the library
    departs from it: the same metric reads alike in every profile."""
    prof = PROFILES[name]
    assert set(prof["choices"]) == set(prof["metrics"])
    for metric, made in prof["choices"].items():
        for key, value in definition_choices(metric).items():
            assert made[key] == DEPARTURES.get((name, metric, key), value), (metric, key)


def test_the_registry_describes_each_variant_apart():
    """One description per registered metric: two metrics of a family never read alike, and
    each description holds the metric's variant."""
    seen: dict[tuple, str] = {}
    for name, spec in METRICS.items():
        described = definition_choices(name)
        assert dict(spec.variant).items() <= described.items(), name
        key = (spec.family or name, tuple(sorted(described.items())))
        assert key not in seen, (name, seen.get(key))
        seen[key] = name
    assert definition_choices("ndcg_bin") == {
        "gain": "binary",
        "log_base": "2",
        "ideal": "min(k, |T|)",
    }
    assert definition_choices("p_list") == {"denominator": "|L|", "short_list": "length"}
