"""``recoeval-track-agree``: the agreement table of ranked lists on the command line.

Usage::

    recoeval-track-agree --train train.tsv --test test.tsv --ranked recs.tsv --k 10 \\
        --profiles recbole,elliot,warprec --markdown agreement.md --html agreement.html

The three files hold ``user, item, value`` rows (the ranked file ``user, item, score``, or
``user, item, rank`` with ``--rank``), tab- or comma-separated, without a header unless
``--header`` says so: the canonical files of the WarpRec paper's reproduction package. Every
test row is a relevant item, its value its gain; an item of the ranked file that neither train
nor test holds is outside the catalogue. The explanations are printed; ``--markdown`` and
``--html`` write the report section (:mod:`recoeval_tracking.reporting.agreement_page`). A bad
argument or file exits with status 2 and one paragraph on stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["main", "read_inputs"]

_PROG = "recoeval-track-agree"


def _read(path: str, header: bool, names: list[str]) -> Any:
    import pandas as pd

    df = pd.read_csv(path, sep=None, engine="python", header=0 if header else None)
    if df.shape[1] < 3:
        raise ValueError(f"{path}: expected 3 columns ({', '.join(names)}), got {df.shape[1]}")
    df = df.iloc[:, :3]
    df.columns = names
    return df


def read_inputs(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """Train and test matrices over the users and items of both, and the ranked rows with
    item indices (an item unknown to train and test past the last index)."""
    import numpy as np
    import pandas as pd
    import scipy.sparse as sp

    train = _read(args.train, args.header, ["user", "item", "value"])
    test = _read(args.test, args.header, ["user", "item", "value"])
    order = "rank" if args.rank else "score"
    ranked = _read(args.ranked, args.header, ["user", "item", order])
    users = pd.Index(pd.unique(pd.concat([train["user"], test["user"]]).astype(str)))
    items = pd.Index(pd.unique(pd.concat([train["item"], test["item"]]).astype(str)))
    shape = (len(users), len(items))

    def matrix(df: Any) -> Any:
        rows = users.get_indexer(df["user"].astype(str))
        cols = items.get_indexer(df["item"].astype(str))
        return sp.csr_array((df["value"].to_numpy(dtype=float), (rows, cols)), shape=shape)

    rows = users.get_indexer(ranked["user"].astype(str))
    if (rows < 0).any():
        bad = ranked["user"].to_numpy()[np.flatnonzero(rows < 0)[0]]
        raise ValueError(f"{args.ranked}: user {bad!r} is in neither train nor test")
    cols = items.get_indexer(ranked["item"].astype(str))
    cols = np.where(cols < 0, len(items), cols)  # outside the catalogue
    out = pd.DataFrame({"user": rows, "item": cols, order: ranked[order].to_numpy()})
    return matrix(train), matrix(test), out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=_PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--train", required=True)
    p.add_argument("--test", required=True)
    p.add_argument("--ranked", required=True)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--profiles", default=None, help="comma-separated; every profile by default")
    p.add_argument("--metrics", default=None, help="comma-separated registered metrics")
    p.add_argument("--rank", action="store_true", help="the ranked file's third column is a rank")
    p.add_argument("--header", action="store_true", help="the files start with a header")
    p.add_argument("--markdown", default=None)
    p.add_argument("--html", default=None)
    return p


def main(argv: list[str] | None = None) -> int:
    from .._validation import InputError

    args = _parser().parse_args(argv)
    try:
        from ..metrics.agreement import compare_profiles
        from ..reporting.agreement_page import write_agreement

        train, test, ranked = read_inputs(args)
        split = lambda x: x.split(",") if x else None  # noqa: E731
        ag = compare_profiles(
            train, test, ranked=ranked, k=args.k, profiles=split(args.profiles),
            metrics=split(args.metrics),
        )  # fmt: skip
    except (InputError, ValueError, OSError) as err:
        print(f"{_PROG}: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    print(ag.summary())
    if args.markdown or args.html:
        for kind, path in write_agreement(ag, args.html, args.markdown).items():
            print(f"{kind}: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
