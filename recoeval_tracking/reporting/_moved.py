"""The old paths of the names that moved out of ``recoeval_tracking.reporting``: the statistics
on arrays (to :mod:`recoeval_tracking.stats`) and the renderers (to
:mod:`recoeval_tracking.reporting.render`). Each still reads from its old module, with a
:class:`DeprecationWarning` naming its new path, for one release.

:data:`OLD_PATHS` is the one table of them; an old module sets
``__getattr__ = moved_names(__name__)`` (a module ``__getattr__``, called only for a name the
module does not define), so its own names stay ordinary attributes. The package imports the new
paths itself (``tests/stats/test_old_paths.py`` checks that no module of it reads an old one),
so every warning is about the caller's code. When the old paths go, this table, the old modules
that hold nothing else (``effects``, ``folds``, ``resampling``, ``latex``, ``figures``,
``sections``, ``summary``) and the ``__getattr__`` lines go with them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._moved import REMOVAL
from .._moved import moved_names as _moved_names

__all__ = ["moved_names", "OLD_PATHS", "REMOVAL"]

_STATS = "recoeval_tracking.stats"
_RENDER = "recoeval_tracking.reporting.render"

#: Each old module -> each new module -> the names that moved there from it.
_TABLE: dict[str, dict[str, str]] = {
    "": {
        _STATS: "t_interval bootstrap_ci mean_ci MeanCI bca_interval paired_t_test wilcoxon_test "
        "sign_test randomization_test paired_comparison PairedComparison CORRECTIONS "
        "adjust_pvalues cohens_dz effect_size EffectSize relative_difference DEFAULT_TEST "
        "VERDICTS BayesianVerdict bayesian_signed_rank bayesian_paired_t tost_paired "
        "resolve_rope CORRECTION_FOR CorrectedT corrected_resampled_t correlated_t_verdict "
        "power_paired minimum_detectable_difference sample_size corrected_alpha",
    },
    "stats": {
        _STATS: "CORRECTIONS MeanCI PairedComparison t_interval bootstrap_counts bootstrap_means "
        "bootstrap_ci bca_interval mean_ci sign_flips all_sign_vectors auto_permutations "
        "randomization_pvalues randomization_test paired_t_test wilcoxon_test sign_test "
        "cohens_dz paired_comparison adjust_pvalues",
        f"{_STATS}._intervals": "_percentile_bounds",
    },
    "effects": {_STATS: "DEFAULT_TEST EffectSize effect_size relative_difference"},
    "equivalence": {
        _STATS: "VERDICTS BayesianVerdict decide resolve_rope bayesian_signed_rank "
        "bayesian_paired_t tost_paired t_posterior_probs",
        f"{_STATS}._equivalence": "BOUNDARY_TOL",
    },
    "folds": {
        _STATS: "CORRECTION_FOR ratio_test_train corrected_resampled_t CorrectedT "
        "correlated_t_verdict"
    },
    "multisystem": {
        _STATS: "win_tie_loss min_attainable_p too_few_pairs nemenyi_q critical_difference"
    },
    "power": {
        _STATS: "power_paired minimum_detectable_difference sample_size corrected_alpha "
        "detectable_difference WILCOXON_ARE"
    },
    "resampling": {
        _STATS: "bootstrap_counts bootstrap_means sign_flips all_sign_vectors auto_permutations "
        "randomization_pvalues bca_interval FLIP_BLOCK"
    },
    "latex": {
        f"{_RENDER}.latex": "PREAMBLE latex_escape metric_label comparison_latex effects_latex "
        "baselines_latex structure_problems"
    },
    "figures": {
        f"{_RENDER}.figures": "MODEL_KEY figure_png safe_name curve_names curve_figure "
        "distribution_figure sweep_params sweep_figure render_figures comparison_plot cd_figure"
    },
    "sections": {
        f"{_RENDER}.sections": "Item metric_table md_escape effect_table effect_items "
        "verdict_table baselines_table baselines_items verdict_items multi_sections rope_text"
    },
    "summary": {f"{_RENDER}.summary": "Best headline_metrics summary_table catalogue_table"},
}

#: Every old path: the old module (``recoeval_tracking.reporting.<old>``) -> each name that left
#: it -> the module it lives in now.
OLD_PATHS: dict[str, dict[str, str]] = {
    ".".join(filter(None, ("recoeval_tracking.reporting", old))): {
        name: new for new, names in moves.items() for name in names.split()
    }
    for old, moves in _TABLE.items()
}


def moved_names(old: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for the module ``old`` whose names :data:`OLD_PATHS` says left
    it (:func:`recoeval_tracking._moved.moved_names` over its row of the table)."""
    return _moved_names(old, OLD_PATHS[old])
