"""Statistics on arrays of per-user values: paired tests, intervals, corrections, effect sizes,
equivalence and the Bayesian verdicts, replicate corrections, power, post-hoc tests and the
Friedman family.

Plain functions of numpy arrays (NaN marks a user for whom a metric is undefined), numpy and
scipy only: usable on any tool's per-user output (a LensKit or RecBole run's per-user metric
as well as this package's), and what the package's comparison of runs (``rt.compare``, the
report) calls. Each function's docstring gives its formula, a
citation and an example; ``python -m pytest --doctest-modules recoeval_tracking/stats`` runs the
examples.

>>> from recoeval_tracking import stats
>>> a = [0.31, 0.42, 0.32, 0.56]  # a system's NDCG@10 for four users
>>> b = [0.30, 0.40, 0.29, 0.52]  # the baseline's, same users: a is better for all four
>>> stats.wilcoxon_test(a, b)  # (statistic, p): the exact p of the most extreme case, 2 / 2^4
(0.0, 0.125)

Where each concept lives (every name is imported from ``recoeval_tracking.stats`` itself):

============================  ==========================================================
paired tests                  ``paired_t_test``, ``wilcoxon_test``, ``sign_test``,
                              ``randomization_test``, ``paired_comparison``,
                              ``min_attainable_p``, ``DEFAULT_TEST`` (``_paired.py``)
intervals                     ``t_interval``, ``bootstrap_ci``, ``bca_interval``,
                              ``mean_ci`` (``_intervals.py``)
corrections                   ``adjust_pvalues`` (Holm, Bonferroni, Benjamini-Hochberg),
                              ``corrected_alpha``, ``too_few_pairs`` (``_corrections.py``)
effect sizes                  ``effect_size``, ``relative_difference``, ``cohens_dz``,
                              ``win_tie_loss`` (``_effects.py``)
equivalence, Bayesian         ``resolve_rope``, ``tost_paired``, ``bayesian_paired_t``,
verdicts                      ``bayesian_signed_rank``, ``t_posterior_probs``, ``decide``
                              (``_equivalence.py``)
replicates (folds, seeds)     ``corrected_resampled_t``, ``correlated_t_verdict``,
                              ``ratio_test_train`` (``_replicates.py``)
power and sample size         ``power_paired``, ``minimum_detectable_difference``,
                              ``sample_size``, ``detectable_difference`` (``_power.py``)
post-hoc over pairs           ``pairwise_tests``, ``pairwise_cliques``, ``tukey_hsd``
                              (``_posthoc.py``)
many datasets (Friedman)      ``friedman_test``, ``rank_table``, ``nemenyi_q``,
                              ``critical_difference``, ``nemenyi_pvalues``,
                              ``posthoc_vs_control``, ``cd_cliques`` (``_friedman.py``)
resampling                    ``bootstrap_counts``, ``bootstrap_means``, ``sign_flips``,
                              ``all_sign_vectors``, ``auto_permutations``,
                              ``randomization_pvalues`` (``_resampling.py``)
============================  ==========================================================
"""

from __future__ import annotations

from . import (
    _corrections,
    _effects,
    _equivalence,
    _friedman,
    _intervals,
    _paired,
    _posthoc,
    _power,
    _replicates,
    _resampling,
)
from ._corrections import CORRECTIONS, adjust_pvalues, corrected_alpha, too_few_pairs
from ._effects import EffectSize, cohens_dz, effect_size, relative_difference, win_tie_loss
from ._equivalence import (
    VERDICTS,
    BayesianVerdict,
    bayesian_paired_t,
    bayesian_signed_rank,
    decide,
    resolve_rope,
    t_posterior_probs,
    tost_paired,
)
from ._friedman import (
    ControlComparison,
    FriedmanResult,
    cd_cliques,
    critical_difference,
    friedman_test,
    nemenyi_pvalues,
    nemenyi_q,
    posthoc_vs_control,
    rank_table,
)
from ._intervals import MeanCI, bca_interval, bootstrap_ci, mean_ci, t_interval
from ._paired import (
    DEFAULT_TEST,
    PairedComparison,
    min_attainable_p,
    paired_comparison,
    paired_t_test,
    randomization_test,
    sign_test,
    wilcoxon_test,
)
from ._posthoc import TukeyHSD, pairwise_cliques, pairwise_tests, tukey_hsd
from ._power import (
    WILCOXON_ARE,
    detectable_difference,
    minimum_detectable_difference,
    power_paired,
    sample_size,
)
from ._replicates import (
    CORRECTION_FOR,
    CorrectedT,
    corrected_resampled_t,
    correlated_t_verdict,
    ratio_test_train,
)
from ._resampling import (
    FLIP_BLOCK,
    all_sign_vectors,
    auto_permutations,
    bootstrap_counts,
    bootstrap_means,
    randomization_pvalues,
    sign_flips,
)

#: Every name of each concept's module (its own ``__all__``), in the order of the table above.
__all__ = [
    *_paired.__all__,
    *_intervals.__all__,
    *_corrections.__all__,
    *_effects.__all__,
    *_equivalence.__all__,
    *_replicates.__all__,
    *_power.__all__,
    *_posthoc.__all__,
    *_friedman.__all__,
    *_resampling.__all__,
]
