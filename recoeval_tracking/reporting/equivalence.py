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

  (``H`` the Heaviside step with ``H(0) = 1/2``, ``r`` the rope) and ``θ_equivalent`` the rest.
  The probability of each verdict is the share of draws in which its ``θ`` is the largest. This
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
  p-value is the larger of the two one-sided p-values.

A rope is absolute (a float, in the metric's unit) or relative to the baseline's mean (a string
such as ``"2%"``); :func:`resolve_rope` turns either into an absolute width and accepts a dict
metric -> rope for per-metric widths.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._validation import check_float, check_int, check_seed, check_unit_open, param_error
from .effects import _paired

__all__ = [
    "BayesianVerdict",
    "bayesian_signed_rank",
    "bayesian_paired_t",
    "tost_paired",
    "resolve_rope",
    "VERDICTS",
]

#: The three verdicts, in the order of their probabilities.
VERDICTS = ("worse", "equivalent", "better")

_CHUNK = 4_000_000  # Dirichlet weights materialised at a time


@dataclass(frozen=True)
class BayesianVerdict:
    """Posterior probabilities that ``a`` is worse than, equivalent to or better than the
    baseline (they sum to 1), the verdict whose probability reaches ``threshold`` (else
    ``"undecided"``) and the rope used."""

    p_worse: float
    p_equivalent: float
    p_better: float
    verdict: str
    rope: float
    n: int


def resolve_rope(rope, baseline_mean: float = math.nan, metric: str | None = None) -> float:
    """Absolute rope width from ``rope``: a number >= 0 (absolute), a string ``"<x>%"``
    (relative: x percent of ``|baseline_mean|``), or a dict metric -> either (``metric`` picks
    the entry; a metric it lacks gets 0).

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
    # For each i: the sorted positions j with z_i + z_j > 2r (a suffix) and == 2r (half weight);
    # likewise z_i + z_j < -2r (a prefix).
    up_gt = np.searchsorted(zs, 2 * rope - zs, side="right")
    up_ge = np.searchsorted(zs, 2 * rope - zs, side="left")
    lo_lt = np.searchsorted(zs, -2 * rope - zs, side="left")
    lo_le = np.searchsorted(zs, -2 * rope - zs, side="right")
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
    a,
    b,
    rope=0.0,
    *,
    prior: float = 0.5,
    n_samples: int | None = None,
    seed: int = 0,
    threshold: float = 0.95,
) -> BayesianVerdict:
    """Bayesian signed-rank test of ``a`` against the baseline ``b`` (see the module text).

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
        Probability a verdict needs (default 0.95); below it the verdict is ``"undecided"``.

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
    counts = np.bincount(np.argmax(s, axis=1), minlength=3) / n_samples
    pw, pe, pb = (float(v) for v in counts)
    best = int(np.argmax(counts))
    verdict = VERDICTS[best] if counts[best] >= threshold else "undecided"
    return BayesianVerdict(pw, pe, pb, verdict, r, int(x.size))


def bayesian_paired_t(a, b, rope=0.0, *, threshold: float = 0.95) -> BayesianVerdict:
    r"""Bayesian paired t-test of ``a`` against the baseline ``b``: the posterior of the mean
    difference :math:`\mu` under the non-informative prior is Student's t with :math:`n - 1`
    degrees of freedom, location :math:`\bar z` and scale :math:`s_z / \sqrt{n}` (Benavoli et
    al., JMLR 2017, the correlated t-test with no correlation), so
    :math:`P(\text{worse}) = P(\mu < -r)`, :math:`P(\text{better}) = P(\mu > r)` and the rest
    is equivalence.

    It speaks of the mean difference, as the effect sizes and the TOST do, which is what a rope
    over users means; the signed-rank test (:func:`bayesian_signed_rank`) judges pairs of units
    instead, and over users of a binary metric (Hit@K), where most differences are exactly 0, it
    calls a difference of many ropes "equivalent".

    Examples
    --------
    >>> v = bayesian_paired_t([1, 1, 0, 1, 0, 1, 1, 0], [0, 1, 0, 0, 0, 1, 0, 0], rope=0.01)
    >>> v.verdict, round(v.p_better, 3)
    ('better', 0.957)
    """
    from scipy import stats

    func = "bayesian_paired_t"
    x, y = _paired(a, b, func)
    threshold = check_unit_open(threshold, "threshold", func)
    r = resolve_rope(rope, float(y.mean()) if y.size else math.nan)
    n = int(x.size)
    if n < 2:
        return BayesianVerdict(math.nan, math.nan, math.nan, "undecided", r, n)
    z = x - y
    m, sd = float(z.mean()), float(z.std(ddof=1))
    if sd == 0.0:
        pw, pb = float(m < -r), float(m > r)
    else:
        scale = sd / math.sqrt(n)
        pw = float(stats.t.cdf(-r, n - 1, m, scale))
        pb = float(stats.t.sf(r, n - 1, m, scale))
    pe = max(0.0, 1.0 - pw - pb)
    probs = np.array([pw, pe, pb])
    best = int(np.argmax(probs))
    verdict = VERDICTS[best] if probs[best] >= threshold else "undecided"
    return BayesianVerdict(pw, pe, pb, verdict, r, n)


def tost_paired(a, b, rope) -> tuple[float, float, float]:
    """Two one-sided paired t-tests of equivalence within ``[-rope, rope]``.

    .. math:: t_- = (\\bar d + r) / (s_d/\\sqrt n),\\; p_- = P(T_{n-1} > t_-);\\quad
              t_+ = (\\bar d - r) / (s_d/\\sqrt n),\\; p_+ = P(T_{n-1} < t_+)

    Returns
    -------
    (p, p_lower, p_upper)
        ``p = max(p_lower, p_upper)``; equivalence is shown at level alpha when ``p < alpha``.
        NaN with fewer than two pairs or no spread.
    """
    from scipy import stats

    func = "tost_paired"
    x, y = _paired(a, b, func)
    r = resolve_rope(rope, float(y.mean()) if y.size else math.nan)
    d = x - y
    n = d.size
    if n < 2:
        return math.nan, math.nan, math.nan
    se = float(d.std(ddof=1)) / math.sqrt(n)
    if se == 0:
        return math.nan, math.nan, math.nan
    m = float(d.mean())
    p_low = float(stats.t.sf((m + r) / se, n - 1))
    p_up = float(stats.t.cdf((m - r) / se, n - 1))
    return max(p_low, p_up), p_low, p_up
