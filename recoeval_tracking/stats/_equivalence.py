"""Practical equivalence: a region of practical equivalence (ROPE) and a three-way verdict.

A difference inside ``[-rope, rope]`` is too small to matter. Two procedures decide between
*better*, *equivalent* and *worse* for ``a`` against the baseline ``b``:

* **Bayesian signed-rank test** (Benavoli, Corani, Demšar & Zaffalon 2017, "Time for a change:
  a tutorial for comparing multiple classifiers through Bayesian analysis", JMLR 18; Benavoli et
  al. 2014, ICML). A Dirichlet process prior (strength ``prior``, one pseudo-observation at 0)
  over the distribution of the paired differences ``z`` gives posterior weights
  ``w ~ Dirichlet(prior, 1, ..., 1)`` over ``(0, z_1, ..., z_n)``. For each draw,

  .. math:: \\theta_{better} = \\sum_{i,j} w_i w_j\\, H(z_i + z_j - 2r),\\quad
            \\theta_{worse} = \\sum_{i,j} w_i w_j\\, H(-z_i - z_j - 2r)

  (``H`` the Heaviside step with ``H(0) = 1/2``, ``r`` the rope; a sum within ``1e-9`` of the
  differences' scale of ``±2r`` is on the boundary, so that a lattice metric's exact boundary
  pairs, P@10 differences summing to 0.1 for a rope of 0.05, count half whatever the float
  rounding) and ``θ_equivalent`` the rest. The probability of each verdict is the share of
  draws in which its ``θ`` is the largest (a draw whose largest ``θ`` ties splits its vote). This
  is the algorithm of baycomp's ``SignedRankTest`` (same seed, same draws: numpy's legacy
  ``RandomState(seed).dirichlet``); the double sum is computed on the sorted differences with
  cumulative weights, ``O(n log n)`` per draw instead of ``O(n^2)``, so it runs over thousands of
  users as well as over datasets.

  What the verdict is about: the signed-rank test judges the Walsh averages ``(z_i + z_j) / 2``
  (pairs of units), not the mean. Over datasets (each ``z`` a dataset's mean difference) that is
  Benavoli et al.'s design. Over users, whose per-user differences spread far wider than a
  typical rope, "equivalent" needs most pairs of users to differ by less than the rope, so it
  is rare, and "better" says that pairs of users favour ``a`` beyond the rope more often than
  the reverse, even when the mean difference lies inside the rope: read it beside the TOST,
  which is about the mean.
* **TOST**, two one-sided paired t-tests (Schuirmann 1987; Lakens 2017): equivalence is shown at
  level ``alpha`` when both ``mean(d) > -rope`` and ``mean(d) < rope`` are significant; its
  p-value is the larger of the two one-sided p-values. With no spread (every difference
  ``d``) each one-sided p is 0 when ``d`` is strictly inside its bound and 1 otherwise.

**The verdict** (:func:`decide`, the same rule for the three Bayesian tests, the correlated
t-test over replicates, :func:`correlated_t_verdict`, included) reads the three probabilities
at a credibility ``c`` (``threshold``, default 0.95):

* *better* when ``P(better) >= (1 + c) / 2`` (0.975): the central ``c`` credible interval of
  the difference lies above the rope; *worse* likewise below it. Each direction is a one-sided
  test at ``(1 - c) / 2``, so two systems that do not differ get "better" or "worse" in at most
  ``1 - c`` (5%) of comparisons in all, at any rope (for the t posteriors exactly the two-sided
  paired t-test at ``1 - c`` when the rope is 0);
* *equivalent* when ``P(worse) < 1 - c`` and ``P(better) < 1 - c``: each tail outside the rope
  holds less than 5%, the ``1 - 2(1 - c)`` (90%) interval lies inside the rope. For the t
  posteriors ``P(worse)`` and ``P(better)`` are TOST's two one-sided p-values, so this is
  exactly "TOST p < 1 - c" (Schuirmann 1987);
* *undecided* otherwise, and whenever ``P(better) = P(worse)`` (identical systems at rope 0
  are undecided by every test: there is no evidence of a direction and a rope of 0 leaves no
  room for equivalence).

The posterior of the t tests with no spread (every difference the same, ``d``) is a point mass
at ``d``; it counts as the signed-rank test's ``H``: beyond the rope, inside it, or half each
side when ``d`` lies on ``±r`` (within ``1e-9`` of the scale).

A rope is absolute (a float, in the metric's unit) or relative to the baseline's mean (a string
such as ``"2%"``); :func:`resolve_rope` turns either into an absolute width and accepts a dict
metric -> rope for per-metric widths.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from .._validation import check_float, check_int, check_seed, check_unit_open, param_error
from ._arrays import _as_values, _paired

__all__ = [
    "VERDICTS",
    "BayesianVerdict",
    "decide",
    "resolve_rope",
    "bayesian_signed_rank",
    "bayesian_paired_t",
    "tost_paired",
    "t_posterior_probs",
]

#: The three verdicts, in the order of their probabilities.
VERDICTS = ("worse", "equivalent", "better")

_CHUNK = 4_000_000  # Dirichlet weights materialised at a time


#: Relative tolerance of the comparisons with the rope's boundary (of the differences' scale).
BOUNDARY_TOL = 1e-9


@dataclass(frozen=True)
class BayesianVerdict:
    """Posterior probabilities that ``a`` is worse than, equivalent to or better than the
    baseline (they sum to 1), the verdict :func:`decide` reads from them at ``threshold`` and
    the rope used."""

    p_worse: float
    p_equivalent: float
    p_better: float
    verdict: str
    rope: float
    n: int


def decide(p_worse: float, p_equivalent: float, p_better: float, threshold: float = 0.95) -> str:
    """The verdict from the three probabilities at credibility ``threshold`` (``c``; the rule
    of the module text): ``"better"`` when ``P(better) >= (1 + c) / 2``, ``"worse"`` when
    ``P(worse) >= (1 + c) / 2``, ``"equivalent"`` when both ``P(worse)`` and ``P(better)`` are
    below ``1 - c``, else ``"undecided"`` (NaN probabilities too). ``p_equivalent`` is
    ``1 - P(worse) - P(better)`` and is not read. The probabilities are those of Benavoli,
    Corani, Demšar & Zaffalon (2017); for the t posteriors "equivalent" is the TOST at
    ``1 - c`` (Schuirmann 1987).

    Examples
    --------
    >>> decide(0.01, 0.02, 0.97), decide(0.0, 0.02, 0.98), decide(0.04, 0.92, 0.04)
    ('undecided', 'better', 'equivalent')
    >>> decide(0.5, 0.0, 0.5)
    'undecided'
    """
    del p_equivalent
    if not (math.isfinite(p_worse) and math.isfinite(p_better)):
        return "undecided"
    tail = round(1.0 - float(threshold), 12)  # 1 - 0.95 is 0.05 (not 0.050000000000000044)
    # the small slack keeps a probability of exactly (1 + c) / 2 (a share of draws) decided
    # whatever the rounding of (1 + c) / 2 itself
    direction = 1.0 - tail / 2.0 - 1e-12
    if p_better >= direction and p_better > p_worse:
        return "better"
    if p_worse >= direction and p_worse > p_better:
        return "worse"
    if p_worse < tail and p_better < tail:
        return "equivalent"
    return "undecided"


def _tolerance(z: np.ndarray, rope: float) -> float:
    """The tolerance of a comparison with the rope's boundary: ``1e-9`` of the largest of
    ``|z|`` and the rope (0 when both are 0)."""
    scale = max(float(np.max(np.abs(z))) if z.size else 0.0, float(rope))
    return BOUNDARY_TOL * scale


def _point_mass_probs(m: float, r: float, tol: float) -> tuple[float, float, float]:
    """(P(worse), P(equivalent), P(better)) of a posterior that is a point mass at ``m``:
    1 beyond the rope or inside it, 1/2 each side of a boundary it lies on (within ``tol``)."""

    def step(x: float) -> float:  # H(x) with H(0) = 1/2, x within tol of 0 being 0
        return 1.0 if x > tol else (0.5 if x >= -tol else 0.0)

    pw, pb = step(-m - r), step(m - r)
    return pw, max(0.0, 1.0 - pw - pb), pb


def t_posterior_probs(
    z: ArrayLike, rope: float, test_train_ratio: float = 0.0
) -> tuple[float, float, float, float]:
    r"""(P(worse), P(equivalent), P(better), scale) for the mean difference of ``z`` under the
    Student-t posterior with :math:`n - 1` degrees of freedom, location :math:`\bar z` and
    scale :math:`\sqrt{(1/n + \rho)\, s_z^2}` (``ρ = test_train_ratio``: 0 for independent
    pairs, ``n_test / n_train`` for replicates that share training data, Corani & Benavoli
    2015): ``P(worse) = P(μ < -rope)``, ``P(better) = P(μ > rope)``. With no spread, a point
    mass at :math:`\bar z` (1 beyond the rope or inside it, 1/2 each side of a boundary it lies
    on). NaN values of ``z`` are left out; everything is NaN with fewer than two.

    Examples
    --------
    ``z = (1, 2, 3)``: location 2, scale ``1 / sqrt(3)``; with 2 degrees of freedom
    ``P(T < -t) = (1 - t / sqrt(t^2 + 2)) / 2``, so ``P(worse) = P(T < -4.330) = 0.0247``
    and ``P(better) = 1 - P(T < -2.598) = 0.9392``:

    >>> [round(p, 4) for p in t_posterior_probs([1.0, 2.0, 3.0], rope=0.5)]
    [0.0247, 0.0361, 0.9392, 0.5774]
    """
    from scipy import stats

    func = "t_posterior_probs"
    values = _as_values(z, "z", func)
    v = values[~np.isnan(values)]
    rope = check_float(rope, "rope", func, minimum=0.0)
    test_train_ratio = check_float(test_train_ratio, "test_train_ratio", func, minimum=0.0)
    n = int(v.size)
    if n < 2:
        return math.nan, math.nan, math.nan, math.nan
    m = float(v.mean())
    sd = float(v.std(ddof=1))
    tol = _tolerance(v, rope)
    if sd <= tol:
        pw, pe, pb = _point_mass_probs(m, rope, tol)
        return pw, pe, pb, 0.0
    scale = math.sqrt(1.0 / n + float(test_train_ratio)) * sd
    pw = float(stats.t.cdf(-rope, n - 1, m, scale))
    pb = float(stats.t.sf(rope, n - 1, m, scale))
    return pw, max(0.0, 1.0 - pw - pb), pb, scale


def resolve_rope(
    rope: float | str | Mapping[str, float | str],
    baseline_mean: float = math.nan,
    metric: str | None = None,
) -> float:
    """Absolute rope width from ``rope``: a number >= 0 (absolute), a string ``"<x>%"``
    (relative: ``|baseline_mean| x / 100``), or a dict metric -> either (``metric`` picks the
    entry; a metric it lacks gets 0). A rope is the region of practical equivalence of Kruschke
    (2018) and Benavoli, Corani, Demšar & Zaffalon (2017): a difference inside ``[-r, r]`` is
    too small to matter.

    Examples
    --------
    >>> resolve_rope(0.01), resolve_rope("5%", 0.2), resolve_rope({"ndcg": "10%"}, 0.3, "ndcg")
    (0.01, 0.01, 0.03)
    """
    func = "resolve_rope"
    if isinstance(rope, Mapping):
        if metric is None or metric not in rope:
            return 0.0
        rope = rope[metric]
    if isinstance(rope, str):
        text = rope.strip()
        try:
            pct = float(text[:-1]) if text.endswith("%") else math.nan
        except ValueError:
            pct = math.nan
        if not math.isfinite(pct) or pct < 0:
            raise param_error(
                "rope",
                func,
                "a number >= 0, a percentage such as '2%' or a dict metric -> either",
                rope,
            )
        return abs(float(baseline_mean)) * pct / 100.0
    return check_float(rope, "rope", func, minimum=0.0)


def _signed_rank_samples(
    z: np.ndarray, rope: float, prior: float, n_samples: int, seed: int
) -> np.ndarray:
    """(n_samples, 3) posterior draws of (θ_worse, θ_equivalent, θ_better)."""
    zz = np.concatenate(([0.0], z))
    weights = np.ones(zz.size)
    weights[0] = prior
    order = np.argsort(zz, kind="stable")
    zs = zz[order]
    # A sum within tol of the boundary is on it: z_i + z_j > 2r + tol (a suffix), >= 2r - tol
    # (half weight between the two); likewise z_i + z_j < -2r - tol (a prefix), <= -2r + tol.
    tol = _tolerance(zs, rope)
    up_gt = np.searchsorted(zs, 2 * rope - zs + tol, side="right")
    up_ge = np.searchsorted(zs, 2 * rope - zs - tol, side="left")
    lo_lt = np.searchsorted(zs, -2 * rope - zs - tol, side="left")
    lo_le = np.searchsorted(zs, -2 * rope - zs + tol, side="right")
    rs = np.random.RandomState(seed)
    out = np.empty((n_samples, 3))
    step = max(1, _CHUNK // zz.size)
    for start in range(0, n_samples, step):
        w = rs.dirichlet(weights, min(step, n_samples - start))[:, order]
        cum = np.concatenate((np.zeros((w.shape[0], 1)), np.cumsum(w, axis=1)), axis=1)
        total = cum[:, -1:]
        above = (total - cum[:, up_gt]) + 0.5 * (cum[:, up_gt] - cum[:, up_ge])
        below = cum[:, lo_lt] + 0.5 * (cum[:, lo_le] - cum[:, lo_lt])
        rows = slice(start, start + w.shape[0])
        out[rows, 2] = np.sum(w * above, axis=1)
        out[rows, 0] = np.sum(w * below, axis=1)
    out[:, 1] = 1.0 - out[:, 0] - out[:, 2]
    return out


def _default_samples(n: int) -> int:
    """50,000 draws (baycomp's default) up to 200 pairs; above, as many as ``10^7`` weights
    allow, at least 2,000 (Monte-Carlo s.e. of a probability <= 0.011)."""
    return int(min(50_000, max(2_000, 10_000_000 // (n + 1))))


def bayesian_signed_rank(
    a: ArrayLike,
    b: ArrayLike,
    rope: float | str = 0.0,
    *,
    prior: float = 0.5,
    n_samples: int | None = None,
    seed: int = 0,
    threshold: float = 0.95,
) -> BayesianVerdict:
    r"""Bayesian signed-rank test of ``a`` against the baseline ``b`` (Benavoli, Corani, Demšar &
    Zaffalon 2017; the algorithm of baycomp's ``SignedRankTest``, see the module text): with
    Dirichlet weights ``w`` over ``(0, z_1, ..., z_n)`` and ``r`` the rope,

    .. math:: \theta_{better} = \sum_{i,j} w_i w_j\, H(z_i + z_j - 2r),\quad
              \theta_{worse} = \sum_{i,j} w_i w_j\, H(-z_i - z_j - 2r),

    and each verdict's probability is the share of draws in which its ``θ`` is the largest.

    Parameters
    ----------
    a, b : array-like of float
        Paired values: per-user values on one dataset, or per-dataset means; NaN pairs are
        left out.
    rope : float or str
        Rope: absolute width, or ``"x%"`` of the baseline's mean (:func:`resolve_rope`).
    prior : float
        Strength of the Dirichlet process prior (baycomp's default 0.5).
    n_samples : int or None
        Posterior draws; default 50,000 (as baycomp) up to 200 pairs, then ``10^7 / (n + 1)``
        (at least 2,000): each draw costs ``n`` Dirichlet weights.
    seed : int
        Seed of the draws (``numpy.random.RandomState``).
    threshold : float
        Credibility ``c`` of the verdict (default 0.95; :func:`decide`): better or worse at
        probability ``(1 + c) / 2``, equivalent when both are below ``1 - c``.

    Returns
    -------
    BayesianVerdict
        With ``rope = 0`` the equivalent verdict has probability 0.

    Examples
    --------
    >>> v = bayesian_signed_rank([0.31, 0.42, 0.28, 0.55, 0.47, 0.39],
    ...                          [0.30, 0.40, 0.29, 0.52, 0.45, 0.38], rope=0.05)
    >>> v.verdict, v.p_equivalent > 0.95
    ('equivalent', True)
    """
    func = "bayesian_signed_rank"
    x, y = _paired(a, b, func)
    prior = check_float(prior, "prior", func, minimum=0.0, strict=True)
    n_samples = (
        _default_samples(int(x.size))
        if n_samples is None
        else check_int(n_samples, "n_samples", func, minimum=1)
    )
    seed = check_seed(seed, func)
    threshold = check_unit_open(threshold, "threshold", func)
    r = resolve_rope(rope, float(y.mean()) if y.size else math.nan)
    if x.size == 0:
        return BayesianVerdict(math.nan, math.nan, math.nan, "undecided", r, 0)
    s = _signed_rank_samples(x - y, r, prior, n_samples, seed)
    pw, pe, pb = (float(v) for v in _winner_shares(s))
    return BayesianVerdict(pw, pe, pb, decide(pw, pe, pb, threshold), r, int(x.size))


def _winner_shares(s: np.ndarray) -> np.ndarray:
    """The share of draws (rows of ``s``) in which each column is the largest; a draw whose
    largest value ties (within ``1e-12``; identical systems at rope 0 give θ_worse =
    θ_better = 1/2) splits its vote among them."""
    top = s >= s.max(axis=1, keepdims=True) - 1e-12
    return (top / top.sum(axis=1, keepdims=True)).sum(axis=0) / s.shape[0]


def bayesian_paired_t(
    a: ArrayLike, b: ArrayLike, rope: float | str = 0.0, *, threshold: float = 0.95
) -> BayesianVerdict:
    r"""Bayesian paired t-test of ``a`` against the baseline ``b``: the posterior of the mean
    difference :math:`\mu` under the non-informative prior is Student's t with :math:`n - 1`
    degrees of freedom, location :math:`\bar z` and scale :math:`s_z / \sqrt{n}` (Benavoli et
    al., JMLR 2017, the correlated t-test with no correlation), so
    :math:`P(\text{worse}) = P(\mu < -r)`, :math:`P(\text{better}) = P(\mu > r)` and the rest
    is equivalence (:func:`t_posterior_probs`); the verdict is :func:`decide`'s, so
    "equivalent" is exactly "TOST p < 1 - threshold" (:func:`tost_paired`).

    It speaks of the mean difference, as the effect sizes and the TOST do, which is what a rope
    over users means; the signed-rank test (:func:`bayesian_signed_rank`) judges pairs of units
    instead, and over users of a binary metric (Hit@K), where most differences are exactly 0, it
    calls a difference of many ropes "equivalent".

    Examples
    --------
    >>> v = bayesian_paired_t([1, 1, 0, 1, 0, 1, 1, 0], [0, 1, 0, 0, 0, 1, 0, 0], rope=0.01)
    >>> v.verdict, round(v.p_better, 3)  # better needs 0.975
    ('undecided', 0.957)
    >>> v = bayesian_paired_t([1, 1, 0, 1, 1, 1, 1, 0], [0, 1, 0, 0, 0, 1, 0, 0], rope=0.01)
    >>> v.verdict, round(v.p_better, 3)
    ('better', 0.982)
    """
    func = "bayesian_paired_t"
    x, y = _paired(a, b, func)
    threshold = check_unit_open(threshold, "threshold", func)
    r = resolve_rope(rope, float(y.mean()) if y.size else math.nan)
    n = int(x.size)
    pw, pe, pb, _ = t_posterior_probs(x - y, r)
    return BayesianVerdict(pw, pe, pb, decide(pw, pe, pb, threshold), r, n)


def tost_paired(
    a: ArrayLike, b: ArrayLike, rope: float | str, *, test_train_ratio: float = 0.0
) -> tuple[float, float, float]:
    """Two one-sided paired t-tests of equivalence within ``[-rope, rope]`` (Schuirmann 1987;
    Lakens 2017).

    .. math:: t_- = (\\bar d + r) / se,\\; p_- = P(T_{n-1} > t_-);\\quad
              t_+ = (\\bar d - r) / se,\\; p_+ = P(T_{n-1} < t_+)

    with ``se = s_d / sqrt(n)``, or over replicates that share training data
    ``se = sqrt((1/n + test_train_ratio) s_d^2)`` (Nadeau & Bengio's correction, as
    :func:`corrected_resampled_t`).

    Returns
    -------
    (p, p_lower, p_upper)
        ``p = max(p_lower, p_upper)``; equivalence is shown at level alpha when ``p < alpha``.
        NaN with fewer than two pairs. With no spread (every difference ``d``), each one-sided
        p is 0 when ``d`` lies strictly inside its bound, else 1.

    Examples
    --------
    >>> tost_paired([0.31, 0.32, 0.33], [0.30, 0.31, 0.32], 0.05)  # every difference 0.01
    (0.0, 0.0, 0.0)
    """
    from scipy import stats

    func = "tost_paired"
    x, y = _paired(a, b, func)
    ratio = check_float(test_train_ratio, "test_train_ratio", func, minimum=0.0)
    r = resolve_rope(rope, float(y.mean()) if y.size else math.nan)
    d = x - y
    n = d.size
    if n < 2:
        return math.nan, math.nan, math.nan
    m, sd = float(d.mean()), float(d.std(ddof=1))
    tol = _tolerance(d, r)
    if sd <= tol:  # no spread: inside a bound or not (on it is not inside)
        p_low = 0.0 if m + r > tol else 1.0
        p_up = 0.0 if m - r < -tol else 1.0
        return max(p_low, p_up), p_low, p_up
    se = math.sqrt(1.0 / n + ratio) * sd
    p_low = float(stats.t.sf((m + r) / se, n - 1))
    p_up = float(stats.t.cdf((m - r) / se, n - 1))
    return max(p_low, p_up), p_low, p_up
