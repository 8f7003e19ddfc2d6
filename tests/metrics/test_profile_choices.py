"""Each profile's ``choices`` (its definition choices per metric, read by the agreement table)
agree with the registry and with the profile's own options: one entry per metric of the profile,
the registry's choice names, the variant a metric is registered with, the profile's tie order."""

from __future__ import annotations

import pytest

from recoeval_tracking.metrics.profiles import PROFILES
from recoeval_tracking.metrics.registry import METRICS

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
WITH_CHOICES += ["rectools", "trec_eval10", "spark"]


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
    assert denominators == {"|T|", "min(k, |T|)", "hits", "min(|T|, |L|)"}
