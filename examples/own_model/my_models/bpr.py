"""BPR from the ``implicit`` library (pip install implicit), wrapped in four lines: a model of
another framework that hands over its factors."""

from __future__ import annotations

from typing import Any


class ImplicitBPR:
    """``implicit.bpr.BayesianPersonalizedRanking``; its scores are ``user_factors @
    item_factors.T`` (implicit keeps the item bias as one more factor)."""

    def __init__(
        self,
        factors: int = 64,
        learning_rate: float = 0.01,
        regularization: float = 0.01,
        iterations: int = 100,
        seed: int = 0,
    ) -> None:
        from implicit.cpu.bpr import BayesianPersonalizedRanking

        self.model = BayesianPersonalizedRanking(
            factors=factors,
            learning_rate=learning_rate,
            regularization=regularization,
            iterations=iterations,
            random_state=seed,
        )

    def fit(self, train: Any) -> ImplicitBPR:
        self.model.fit(train.tocsr(), show_progress=False)
        return self

    def factors(self) -> tuple[Any, Any]:
        return self.model.user_factors, self.model.item_factors
