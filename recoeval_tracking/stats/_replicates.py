"""Tests over replicates that share training data: the folds of a k-fold split, or seeds that
each draw a new random split.

The ``J`` replicates of a k-fold split (or of repeated random splits) train on overlapping data,
so their paired differences are positively correlated and the plain paired t over replicates
understates the variance: it overstates significance (Dietterich 1998; Nadeau & Bengio 2003).

* **Corrected resampled t-test** (Nadeau & Bengio 2003, "Inference for the generalization
  error", Machine Learning 52): with ``d_j`` the difference on replicate ``j``, ``s^2`` their
  sample variance and ``n_test / n_train`` the ratio of test to training size,

  .. math:: t = \\frac{\\bar d}{\\sqrt{(1/J + n_{test}/n_{train})\\, s^2}},
            \\quad p = 2 P(T_{J-1} \\ge |t|).

* **Bayesian correlated t-test** (Corani & Benavoli 2015, "A Bayesian approach for comparing
  cross-validated algorithms on multiple data sets", Machine Learning 100), baycomp's
  ``CorrelatedTTest``: the posterior of the mean difference is Student t with ``J - 1`` degrees of
  freedom, location ``mean(d)`` and scale ``sqrt((1/J + ρ/(1-ρ)) s^2)`` with ``ρ = n_test / n``,
  the same inflation; the verdict probabilities are its mass below ``-rope``, inside, above.

Which correction applies to which replicate kind (:data:`CORRECTION_FOR`):

* ``fold`` (k-fold: the test folds partition the data, every training set overlaps): Nadeau-Bengio
  with ``n_test / n_train = 1 / (k - 1)``; for ``r`` repetitions of k-fold, ``J = r k``.
* ``seed`` where each seed draws a new random train/test split (the package's random splits):
  Nadeau-Bengio with ``n_test / n_train = f / (1 - f)`` for the test fraction ``f``; the setting
  Nadeau & Bengio derived it for.
* ``seed`` where only the model's initialisation changes and the split is the same: the
  replicates share everything but the seed, the plain paired t over seeds is right for that
  question (the spread due to training randomness on this split); no correction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from numpy.typing import ArrayLike

from .._validation import check_float, check_int, check_unit_open, param_error
from ._arrays import _paired
from ._equivalence import decide, resolve_rope, t_posterior_probs

__all__ = [
    "CORRECTION_FOR",
    "ratio_test_train",
    "corrected_resampled_t",
    "CorrectedT",
    "correlated_t_verdict",
]

#: Replicate kind -> the correction its paired tests need (see the module text).
CORRECTION_FOR = {
    "fold": "Nadeau-Bengio corrected resampled t (n_test/n_train = 1/(k-1))",
    "seed (new random split per seed)": "Nadeau-Bengio corrected resampled t "
    "(n_test/n_train = f/(1-f))",
    "seed (same split, model seed only)": "none: plain paired t over seeds",
}


def ratio_test_train(
    *,
    n_folds: int | None = None,
    test_fraction: float | None = None,
    test_train_ratio: float | None = None,
) -> float:
    """``n_test / n_train``: ``1 / (k - 1)`` for ``n_folds = k``, ``f / (1 - f)`` for a random
    split with ``test_fraction = f``, or ``test_train_ratio`` itself (>= 0; 0 is the plain
    paired t); exactly one of the three. The ratio of Nadeau & Bengio's (2003) variance
    correction ``(1/J + n_test/n_train) s^2``.

    Examples
    --------
    >>> ratio_test_train(n_folds=5), ratio_test_train(test_fraction=0.5)
    (0.25, 1.0)
    """
    func = "ratio_test_train"
    given = [v is not None for v in (n_folds, test_fraction, test_train_ratio)]
    if sum(given) != 1:
        raise param_error(
            "n_folds",
            func,
            "given alone (exactly one of n_folds, test_fraction and test_train_ratio)",
            n_folds,
        )
    if n_folds is not None:
        k = check_int(n_folds, "n_folds", func, minimum=2)
        return 1.0 / (k - 1)
    if test_train_ratio is not None:
        return check_float(test_train_ratio, "test_train_ratio", func, minimum=0.0)
    f = check_unit_open(test_fraction, "test_fraction", func)
    return f / (1.0 - f)


@dataclass(frozen=True)
class CorrectedT:
    """The Nadeau-Bengio test: mean difference, its corrected interval, t, p and replicates."""

    mean_diff: float
    low: float
    high: float
    t: float
    p: float
    n: int


def _corrected_moments(
    a: ArrayLike, b: ArrayLike, ratio: float, func: str
) -> tuple[float, float, int]:
    x, y = _paired(a, b, func)
    d = x - y
    n = int(d.size)
    if n < 2:
        return (float(d.mean()) if n else math.nan), math.nan, n
    return float(d.mean()), (1.0 / n + ratio) * float(d.var(ddof=1)), n


def corrected_resampled_t(
    a: ArrayLike,
    b: ArrayLike,
    *,
    n_folds: int | None = None,
    test_fraction: float | None = None,
    confidence: float = 0.95,
    test_train_ratio: float | None = None,
) -> CorrectedT:
    r"""Nadeau & Bengio's (2003) corrected resampled t-test of paired replicate values (one
    value per fold or seed for ``a`` and the baseline ``b``):

    .. math:: t = \frac{\bar d}{\sqrt{(1/J + n_{test}/n_{train})\, s^2}},
              \quad p = 2 P(T_{J-1} \ge |t|)

    over the ``J`` replicates' differences ``d_j`` (variance ``s^2``); the interval is
    ``mean(d) ± t_{(1+c)/2, J-1}`` times the same corrected standard error.

    Parameters
    ----------
    a, b : array-like of float
        Per-replicate values (e.g. the mean NDCG of each fold), aligned; NaN pairs left out.
    n_folds, test_fraction, test_train_ratio : int or float
        The design (exactly one): ``k`` of a k-fold split (repeated or not), the test
        fraction of repeated random splits, or ``n_test / n_train`` itself.
    confidence : float
        Coverage of the interval.

    Examples
    --------
    >>> r = corrected_resampled_t([0.31, 0.33, 0.30, 0.34, 0.32], [0.30, 0.31, 0.30, 0.32, 0.30],
    ...                           n_folds=5)
    >>> round(r.t, 3)  # 0.014 / sqrt((1/5 + 1/4) * 0.00008)
    2.333
    """
    from scipy import stats

    func = "corrected_resampled_t"
    ratio = ratio_test_train(
        n_folds=n_folds, test_fraction=test_fraction, test_train_ratio=test_train_ratio
    )
    c = check_unit_open(confidence, "confidence", func)
    m, var, n = _corrected_moments(a, b, ratio, func)
    if n < 2 or not math.isfinite(var):
        return CorrectedT(m, math.nan, math.nan, math.nan, math.nan, n)
    if var == 0:
        t = 0.0 if m == 0 else math.copysign(math.inf, m)
        return CorrectedT(m, m, m, t, 1.0 if m == 0 else 0.0, n)
    se = math.sqrt(var)
    t = m / se
    half = float(stats.t.ppf(0.5 + c / 2.0, n - 1)) * se
    return CorrectedT(m, m - half, m + half, t, float(2.0 * stats.t.sf(abs(t), n - 1)), n)


def correlated_t_verdict(
    a: ArrayLike,
    b: ArrayLike,
    rope: float | str = 0.0,
    *,
    n_folds: int | None = None,
    test_fraction: float | None = None,
    threshold: float = 0.95,
    test_train_ratio: float | None = None,
) -> tuple[float, float, float, str]:
    """Bayesian correlated t-test (Corani & Benavoli 2015) of replicate values ``a`` against the
    baseline ``b``: posterior probabilities that ``a`` is worse, equivalent (within ``rope``,
    absolute or ``"x%"`` of the baseline's mean) or better, and the verdict
    (:func:`decide`: better or worse at ``(1 + threshold) / 2``, equivalent when
    both are below ``1 - threshold``, else undecided; the rule of every verdict).

    The posterior of the mean difference is Student's t with ``J - 1`` degrees of freedom,
    location ``mean(d)`` and scale ``sqrt((1/J + n_test/n_train) s^2)``
    (:func:`t_posterior_probs`).

    Returns
    -------
    (p_worse, p_equivalent, p_better, verdict)

    Examples
    --------
    Three replicates, ``d = (0.01, 0.02, 0.03)``; two folds (``n_test / n_train = 1``): scale
    ``sqrt(1/3 + 1) 0.01``, ``P(worse) = P(T_2 < -1.732) = 0.1127``. The plain t posterior
    (ratio 0) gives ``P(worse) = P(T_2 < -3.464) = 0.0371``: the correction for the shared
    training data widens the posterior; neither reaches "better" (``P >= 0.975``).

    >>> a, b = [0.31, 0.32, 0.33], [0.30, 0.30, 0.30]
    >>> pw, pe, pb, verdict = correlated_t_verdict(a, b, n_folds=2)
    >>> round(pw, 4), round(pb, 4), verdict
    (0.1127, 0.8873, 'undecided')
    >>> round(correlated_t_verdict(a, b, test_train_ratio=0.0)[0], 4)
    0.0371
    """
    func = "correlated_t_verdict"
    ratio = ratio_test_train(
        n_folds=n_folds, test_fraction=test_fraction, test_train_ratio=test_train_ratio
    )
    threshold = check_unit_open(threshold, "threshold", func)
    x, y = _paired(a, b, func)
    r = resolve_rope(rope, float(y.mean()) if y.size else math.nan)
    pw, pe, pb, _ = t_posterior_probs(x - y, r, ratio)
    return pw, pe, pb, decide(pw, pe, pb, threshold)
