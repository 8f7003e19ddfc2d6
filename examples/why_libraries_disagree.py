"""Why libraries disagree, on MovieLens 100K: one set of top-10 lists scored as RecBole, Elliot and
WarpRec score it, and every difference split into the definition choices that make it.

The setting of the WarpRec paper's cross-framework table (RecSys 2026, Table 5 of
sisinflab/warprec-benchmark-2026): item-KNN (10 neighbours, cosine) top-10 lists, a per-user
temporal holdout of 10%, every test rating a relevant item whose value is its rating (the
explicit ratings each library reads). Then the same lists as a generator (an LLM) might give
them: with hallucinated ids, repeated items and short lists. Usage::

    python examples/why_libraries_disagree.py path/to/ml-100k/u.data
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

import recoeval_tracking as rt

PROFILES = ["recbole", "elliot", "warprec"]
METRICS = ["ndcg", "ap", "p", "r", "rr", "gini"]
K = 10


def top_lists(split: rt.Split) -> np.ndarray:
    """Item-KNN's top-10 list of every user (train items left out, ties by item index)."""
    model = rt.make_model("item_knn", neighbours=10).fit(split.train.matrix)
    res = rt.evaluate(
        split.train, split.test, scores=model.score_source(), k=K, metrics=["p"],
        ties="index", return_topk=True,
    )  # fmt: skip
    return res.topk


def as_generator(split: rt.Split, lists: np.ndarray, seed: int = 0) -> pd.DataFrame:
    """The lists as (user, item, rank) rows with what a generator gets wrong: in a third of the
    users one title the catalogue does not have (an id past the last movie), in a fifth one
    item repeated, and in a tenth only the first six items."""
    rng = np.random.default_rng(seed)
    users, items = split.test.user_ids, split.test.item_ids
    rows = []
    for u in range(lists.shape[0]):
        listed = [int(items[i]) for i in lists[u] if i >= 0]
        if not listed:
            continue
        if rng.random() < 1 / 3:  # a hallucinated title
            listed.insert(int(rng.integers(0, len(listed))), 100_000 + u)
        if rng.random() < 1 / 5:  # the model repeats itself
            listed.insert(int(rng.integers(1, len(listed))), listed[0])
        if rng.random() < 1 / 10:  # it stops early
            listed = listed[:6]
        rows += [(users[u], item, r) for r, item in enumerate(listed[:K], start=1)]
    return pd.DataFrame(rows, columns=["user", "item", "rank"])


def show(title: str, text: str) -> None:
    print(f"\n## {title}\n\n{text}")


def main(path: str) -> object:
    X = rt.load_dataset("movielens_100k", path=path)
    split = rt.make_split("temporal_user", X, test_fraction=0.1)
    lists = top_lists(split)
    # bare matrices: every test rating is a relevant item, its value the rating (as in the
    # WarpRec package, where each library reads the explicit ratings)
    train, test = split.train.matrix, split.test.matrix
    t0 = time.perf_counter()
    ag = rt.compare_profiles(train, test, ranked=lists, k=K, profiles=PROFILES, metrics=METRICS)
    seconds = time.perf_counter() - t0
    pd.set_option("display.width", 120)
    show("Values", ag.pivot().round(4).to_string())
    show("Explanations", "\n".join(ag.table["explanation"]))
    # on the data's own rule (a rating >= 4 is relevant, gain 1) two choices move Elliot's
    # nDCG: the relevance level and the gain; their order changes the steps, not the sum
    order = [c for c in ag.order if c != "relevance_level"]
    order.insert(order.index("gain") + 1, "relevance_level")
    for title, chosen in (("relevance first", None), ("gain first", order)):
        one = rt.compare_profiles(
            split.train, split.test, ranked=lists, k=K, profiles="elliot", metrics="ndcg",
            order=chosen,
        )  # fmt: skip
        show(f"Elliot's nDCG on the data's relevance rule, {title}", one.table["explanation"][0])
    # the same lists as a generator gives them, on the data with its relevance rule
    gen = as_generator(split, lists)
    ag2 = rt.compare_profiles(
        split.train, split.test, ranked=gen, k=K, profiles=PROFILES, metrics=["ndcg", "p", "rr"]
    )
    show("Generated lists: per run", pd.Series(ag2.lists_summary).to_string())
    show("Generated lists: the first users with a problem", _problems(ag2.lists).to_string())
    show("Generated lists: explanations", "\n".join(ag2.table["explanation"]))
    show("Generated lists: notes", "\n".join(ag2.notes))
    print(f"\ncompare_profiles on ML-100K ranked lists: {seconds:.2f} s")
    return ag


def _problems(lists: pd.DataFrame) -> pd.DataFrame:
    bad = (lists["out_of_catalogue"] > 0) | (lists["duplicates"] > 0) | lists["short"]
    return lists[bad].head(6)


if __name__ == "__main__":
    main(sys.argv[1])
