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


def _read(option: str, path: str, header: bool, names: list[str]) -> Any:
    from pathlib import Path

    import pandas as pd

    expected = f"{option} must be a file of {', '.join(names)} rows (tab- or comma-separated)"
    if not Path(path).is_file():
        raise ValueError(f"{expected}; got {path!r}, which is no file")
    df = pd.read_csv(path, sep=None, engine="python", header=0 if header else None)
    if df.shape[1] < 3:
        raise ValueError(f"{expected}; got {path!r}, whose rows have {df.shape[1]} columns")
    df = df.iloc[:, :3]
    df.columns = names
    return df


def read_inputs(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """Train and test matrices over the users and items of both, and the ranked rows with
    item indices (an item unknown to train and test past the last index)."""
    import numpy as np
    import pandas as pd
    import scipy.sparse as sp

    train = _read("--train", args.train, args.header, ["user", "item", "value"])
    test = _read("--test", args.test, args.header, ["user", "item", "value"])
    order = "rank" if args.rank else "score"
    ranked = _read("--ranked", args.ranked, args.header, ["user", "item", order])
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


_DESCRIPTION = """\
Score one set of top-k lists as each library's profile scores it (RecBole, Elliot, WarpRec,
trec_eval, ...) and split every difference from the project's default into the definition
choices that make it (gain, AP's denominator, relevance level, list rules...). The files hold
rows without a header (unless --header): train and test user, item, value (every test row is a
relevant item, its value its gain), the lists user, item, score (or user, item, rank with
--rank); an item that neither train nor test holds is outside the catalogue. The explanations
are printed; --markdown and --html write them as a report section."""
_EXAMPLE = """\
example:
  recoeval-track-agree --train train.tsv --test test.tsv --ranked recs.tsv --k 10 \\
      --profiles recbole,elliot,warprec --markdown agreement.md --html agreement.html"""


def _parser() -> argparse.ArgumentParser:
    from ..metrics.profiles import PROFILES

    p = argparse.ArgumentParser(
        prog=_PROG,
        description=_DESCRIPTION,
        epilog=_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--train", required=True, help="the train rows: user, item, value")
    p.add_argument("--test", required=True, help="the test rows: user, item, value")
    p.add_argument("--ranked", required=True, help="the lists: user, item, score (or rank)")
    p.add_argument("--k", type=int, default=10, help="the cutoff (default 10)")
    p.add_argument(
        "--profiles",
        default=None,
        help=f"comma-separated, among {', '.join(PROFILES)}; every one by default",
    )
    p.add_argument(
        "--metrics",
        default=None,
        help="comma-separated registered metrics (ndcg,ap keeps their variants too); every "
        "metric of the profiles by default",
    )
    p.add_argument("--rank", action="store_true", help="the ranked file's third column is a rank")
    p.add_argument("--header", action="store_true", help="the files start with a header")
    p.add_argument("--markdown", default=None, help="write the section as Markdown to this file")
    p.add_argument("--html", default=None, help="write the section as HTML to this file")
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
