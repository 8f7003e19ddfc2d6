"""Judgements and runs, as the trec_eval family of libraries (pytrec_eval, ranx) take them."""

from __future__ import annotations

from typing import Any

import numpy as np


def qrels_and_run(
    tr: Any, te: Any, S: np.ndarray, lists: Any = None, qid: str = "u{}"
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """``qrels`` and ``run`` of each user with test items: the test values as relevance, and the
    scores of the user's pool (its train items left out), or of its listed items (``lists``, -1
    padded). Documents are ``i00012`` (zero-padded: string order is index order); queries are
    ``qid.format(u)``."""
    qrels, run = {}, {}
    n = S.shape[1]
    for u in range(tr.shape[0]):
        lo, hi = te.indptr[u], te.indptr[u + 1]
        if lo == hi:
            continue
        train = set(tr.indices[tr.indptr[u] : tr.indptr[u + 1]].tolist())
        q = qid.format(u)
        qrels[q] = {f"i{j:05d}": int(v) for j, v in zip(te.indices[lo:hi], te.data[lo:hi])}
        items = (
            [j for j in range(n) if j not in train]
            if lists is None
            else [j for j in lists[u] if j >= 0]
        )
        run[q] = {f"i{j:05d}": float(S[u, j]) for j in items}
    return qrels, run
