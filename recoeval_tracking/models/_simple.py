"""Non-personalised and chance baselines: popularity and random."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._validation import check_bool, check_int
from ..scores import BiasScores, ScoreSource
from ._base import Model

__all__ = ["PopularityModel", "RandomModel"]


class PopularityModel(Model):
    r"""Most-popular items: every user gets the same item scores.

    The score of item :math:`i` is the number of training users who interacted with it,

    .. math:: s_i = \#\{u : r_{ui} \neq 0\},

    or, with ``weighted=True``, the sum of its training values :math:`s_i = \sum_u r_{ui}`.
    The scores go to the evaluator as item biases (:class:`~recoeval_tracking.scores.BiasScores`),
    the non-personalised path, so no per-user work is done.

    Parameters
    ----------
    weighted : bool, default False
        Sum the stored values (confidences) instead of counting users.
    """

    name = "popularity"

    def __init__(self, weighted: bool = False) -> None:
        super().__init__()
        self.weighted = check_bool(weighted, "weighted", "PopularityModel")
        self.item_scores_: np.ndarray | None = None

    def _fit(
        self, X: sp.csr_array, user_ids: np.ndarray | None, item_ids: np.ndarray | None
    ) -> None:
        n_items = X.shape[1]
        data = np.asarray(X.data, dtype=np.float64)
        if self.weighted:
            scores = np.bincount(X.indices, weights=data, minlength=n_items)
        else:
            scores = np.bincount(X.indices[data != 0], minlength=n_items).astype(np.float64)
        self.item_scores_ = scores

    def _score_source(self) -> ScoreSource:
        return BiasScores(self.item_scores_, func="PopularityModel.score_source")


class RandomModel(Model):
    """Uniform random scores: the chance baseline.

    The scores of user ``u`` are ``numpy.random.default_rng([seed, u]).random(n_items)``: they
    depend only on ``(seed, u)``, never on which block of users ``u`` is scored with, the block
    size or the thread count, so results are reproducible bit for bit.

    Parameters
    ----------
    seed : int, default 0
        Non-negative seed.
    """

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        super().__init__()
        self.seed = check_int(seed, "seed", "RandomModel", minimum=0)

    def _fit(
        self, X: sp.csr_array, user_ids: np.ndarray | None, item_ids: np.ndarray | None
    ) -> None:
        pass

    def scores(self, users: np.ndarray) -> np.ndarray:
        """Random scores of ``users`` (row indices) for every item, shape ``(len(users), n_items)``."""
        users = np.asarray(users, dtype=np.int64)
        n_items = int(self.n_items_ or 0)
        out = np.empty((users.shape[0], n_items), dtype=np.float64)
        for row, u in enumerate(users):
            np.random.default_rng([self.seed, int(u)]).random(out=out[row])
        return out

    def _score_source(self) -> ScoreSource:
        return self._blocks_of(self.scores)
