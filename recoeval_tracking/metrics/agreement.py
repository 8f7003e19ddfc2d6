"""Why libraries disagree: the same input scored under every library profile, and each
difference from the project's default split into the definition choices that make it.

:func:`compare_profiles` evaluates one input (scores, or ranked top-K lists) under the project's
default definitions and under each profile of :data:`~.profiles.PROFILES`. For every metric a
profile reports it gives the profile's value, the default value of the same measure (the
family's base metric: ``ndcg`` for RecBole's ``ndcg_bin``, ``ap`` for its ``tap``) and a
decomposition of the difference:

1. start from the default metric under the default options;
2. change one definition choice at a time from the default to the profile's, in the fixed order
   :data:`CHOICE_ORDER` (or the ``order`` given): first which test entries are relevant
   (``relevance_level``), then the metric's own choices (``gain``, ``ideal``, ``denominator``,
   ``precision_at``...: the keys of :attr:`MetricSpec.variant`), then the protocol
   (``no_positive``, ``inf_scores``, the generated-list rules ``out_of_catalogue`` and
   ``duplicates``, and ``ties``); each step is a registered variant or an option of
   :func:`~.evaluate.evaluate`, so its value is an ordinary evaluation;
3. report how much each step moved the value. The steps add up exactly to the difference (each
   starts where the previous one ended), but a step's size depends on the steps before it: the
   order matters (a gain changes nothing while every positive has the same value, and much once
   the relevance level lets graded ratings in), and the table says which order it used.

Two metric choices without a registered metric between them (Elliot's MAP changes both the
denominator and the ranks it averages over) are applied together, as one step. A choice that
cannot act on the input (ties with ranked lists, an out-of-catalogue rule when every listed item
is in the catalogue) is not a step. Every distinct configuration is evaluated once, all its
metrics in one engine pass.

Generated lists (an LLM's, a generative model's) break silent assumptions; with ``ranked=`` the
lists are checked per user first (:attr:`Agreement.lists`): items outside the catalogue,
repeated items, items of the user's train row and lists with fewer than ``k`` usable items. Each
profile applies its library's rule (:data:`LIST_RULES`); the project's default rule takes an
item outside the catalogue as a miss at its rank (``slot``) and counts a repeated item once,
at its first rank (``first``, as :func:`~.evaluate.evaluate` does).
"""

from __future__ import annotations

import dataclasses
import math
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from .._validation import InputError, param_error
from .profiles import PROFILES
from .registry import METRICS, MetricSpec, column_name

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "compare_profiles",
    "Agreement",
    "CHOICE_ORDER",
    "METRIC_CHOICES",
    "LIST_RULES",
    "DEFAULT_OPTIONS",
]

#: The definition choices of a metric (the keys of ``MetricSpec.variant``).
METRIC_CHOICES = (
    "gain",
    "ideal",
    "denominator",
    "precision_at",
    "average",
    "scope",
    "normalise",
    "orientation",
    "recall",
    "discount",
    "short_list",
    "cutoff",
)
#: The order in which a decomposition applies the choices, one at a time.
CHOICE_ORDER = (
    "relevance_level",
    *METRIC_CHOICES,
    "no_positive",
    "inf_scores",
    "out_of_catalogue",
    "duplicates",
    "ties",
)
_OPTION_CHOICES = ("relevance_level", "no_positive", "inf_scores", "out_of_catalogue", "duplicates")
#: The options a profile's ``choices`` may set for one metric alone.
_METRIC_OPTIONS = ("relevance_level", "no_positive", "inf_scores")

#: What each rule for generated lists does (a profile's ``lists``).
LIST_RULES = {
    "out_of_catalogue": {
        "slot": "an item outside the catalogue is a miss at its rank (the project's rule)",
        "drop": "an item outside the catalogue is removed and the items below it move up "
        "(WarpRec: its ProxyRecommender maps ids and drops unknown ones)",
        "cut_then_drop": "the list is cut at k, then items outside the catalogue are removed: "
        "the list gets shorter (Elliot: its ProxyRecommender keeps the first k entries, then "
        "the candidate items)",
    },
    "duplicates": {
        "first": "a repeated item counts once, at its first rank; the later copies are removed "
        "and the items below move up (the project's rule, as evaluate)",
        "slot": "a later copy of an item is a miss at its rank",
        "sum": "the copies' scores are summed into one entry, re-ranked by that sum (WarpRec: "
        "a sparse score matrix sums duplicate entries); with ranks and no score, as 'first'",
    },
}

#: The project's default options, the start of every decomposition.
DEFAULT_OPTIONS = {
    "ties": "noise",
    "no_positive": "nan",
    "inf_scores": "rank",
    "out_of_catalogue": "slot",
    "duplicates": "first",
}
_FAMILY_BASE = {"auc": "roc_auc"}
_FUNC = "compare_profiles"
_PHANTOM = -3
_OUTSIDE = -2


@dataclasses.dataclass
class Agreement:
    """The result of :func:`compare_profiles`.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (profile, metric): the library's name of the metric, the registered metric,
        the default metric it varies, both values, the difference (absolute and relative to the
        default value), the profile's choices that differ from the default and the sentence
        that explains the difference.
    steps : pandas.DataFrame
        The decomposition: per (profile, metric), each step's choice, its change, the metric
        evaluated after it, the value before and after, and the step's share of the difference.
    lists : pandas.DataFrame or None
        With ranked input, per user with a list: entries listed, items outside the catalogue,
        repeated copies, items of the user's train row, usable items and whether fewer than k.
    lists_summary : dict
        The run's totals of ``lists``.
    notes : list of str
        What the table cannot show: metrics left out, warnings, and each profile's rules that
        are not reproduced (its ``not_reproduced``): every one that acts on this input, with how
        much of it (users, entries or lists), then the ones with nothing to act on and why.
    k : int
        The cutoff.
    order : tuple of str
        The order of the choices in the decomposition.
    """

    table: pd.DataFrame
    steps: pd.DataFrame
    lists: pd.DataFrame | None
    lists_summary: dict[str, Any]
    notes: list[str]
    k: int
    order: tuple[str, ...]

    def pivot(self) -> pd.DataFrame:
        """The values side by side: one row per default metric, one column per profile (and
        ``default``); a profile with two variants of one metric shows the first."""
        t = self.table.drop_duplicates(["profile", "default_metric"])
        wide = t.pivot(index="default_metric", columns="profile", values="value")
        defaults = t.groupby("default_metric")["default"].first()
        wide.insert(0, "default", defaults)
        return wide[["default", *[p for p in dict.fromkeys(t["profile"])]]]

    def explain(self, profile: str, name: str) -> str:
        """The sentence of one row, found by profile and metric (library or registered
        name)."""
        t = self.table
        hit = t[(t["profile"] == profile) & ((t["name"] == name) | (t["metric"] == name))]
        if hit.empty:
            raise param_error(
                "name",
                "Agreement.explain",
                f"a metric of profile {profile!r} in the table "
                f"({sorted(set(t.loc[t['profile'] == profile, 'name']))})",
                name,
            )
        return str(hit.iloc[0]["explanation"])

    def summary(self) -> str:
        """The explanations, one line per row, then the notes."""
        lines = [f"Agreement at k={self.k} (choices applied in the order {', '.join(self.order)})"]
        lines += [f"  {s}" for s in self.table["explanation"]]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()


# -- inputs ---------------------------------------------------------------------------------


def _data_rule(train: Any, test: Any) -> tuple[float | None, str | None]:
    """The data's relevance rule ``(level, gains)`` (an interactions container's), or None."""
    from ..data import Relevance

    for x in (test, train):
        rule = getattr(x, "relevance", None)
        if isinstance(rule, Relevance):
            return rule.level, rule.gains
    return None, None


def _raw_lists(ranked: Any, prep: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """Each user's entries in rank order: item indices, ``-2`` for an item outside the
    catalogue, ``-1`` padding; and their scores when the input has a score column."""
    from ..scores import RankedLists

    n = prep.n_items
    if "pandas" in sys.modules and isinstance(ranked, sys.modules["pandas"].DataFrame):
        return _frame_lists(ranked, prep)
    arr = ranked.items if isinstance(ranked, RankedLists) else np.asarray(ranked)
    if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.integer):
        raise param_error(
            "ranked",
            _FUNC,
            "a 2-d integer array of item indices (users x L, -1 padding), RankedLists or a "
            "DataFrame with columns user, item and rank or score",
            ranked,
        )
    if arr.shape[0] != prep.test.shape[0]:
        raise param_error("ranked", _FUNC, f"one list per user ({prep.test.shape[0]} rows)", arr)
    out = np.where((arr >= n) | (arr < -1), _OUTSIDE, arr).astype(np.int64)
    return out, None


def _frame_lists(df: Any, prep: Any) -> tuple[np.ndarray, np.ndarray | None]:
    import pandas as pd

    cols = set(df.columns)
    if not {"user", "item"} <= cols or not ({"rank", "score"} & cols):
        raise param_error(
            "ranked",
            _FUNC,
            "a DataFrame with columns 'user', 'item' and 'rank' (1 = best) or 'score'",
            f"columns {list(df.columns)}",
            got_is_text=True,
        )
    users = pd.Index(prep.user_ids).get_indexer(df["user"].to_numpy())
    if (users < 0).any():
        bad = df["user"].to_numpy()[np.flatnonzero(users < 0)[0]]
        raise param_error(
            "ranked", _FUNC, "users that are in the data's user ids", bad, got_is_text=False
        )
    items_in = df["item"].to_numpy()
    if prep.item_ids is not None:
        items = pd.Index(prep.item_ids).get_indexer(items_in)
    else:
        if items_in.dtype.kind not in "iu":
            raise param_error(
                "ranked",
                _FUNC,
                "item column indices (ints) when train and test are bare matrices, which carry "
                "no item ids",
                f"a column of dtype {items_in.dtype}",
                got_is_text=True,
                fix="Pass interactions (rt.from_dataframe) so that the ids are looked up.",
            )
        items = np.where((items_in >= 0) & (items_in < prep.n_items), items_in, -1)
    items = np.where(items < 0, _OUTSIDE, items).astype(np.int64)
    has_score = "rank" not in cols
    key = -df["score"].to_numpy(dtype=np.float64) if has_score else df["rank"].to_numpy()
    order = np.lexsort((np.arange(len(df)), key, users))
    users, items = users[order], items[order]
    m = prep.test.shape[0]
    counts = np.bincount(users, minlength=m)
    width = max(int(counts.max()) if counts.size else 1, 1)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    col = np.arange(users.shape[0]) - starts[users]
    lists = np.full((m, width), -1, dtype=np.int64)
    lists[users, col] = items
    if not has_score:
        return lists, None
    scores = np.full((m, width), np.nan)
    scores[users, col] = df["score"].to_numpy(dtype=np.float64)[order]
    return lists, scores


def _diagnose(raw: np.ndarray, train: sp.csr_array | None, k: int, user_ids: Any) -> Any:
    """Per user with a list: what a generator's list holds that a ranking never does."""
    import pandas as pd

    rows = []
    for u in np.flatnonzero((raw != -1).any(axis=1)):
        entries = raw[u][raw[u] != -1]
        inside = entries[entries >= 0]
        unique = np.unique(inside)
        seen = (
            set(train.indices[train.indptr[u] : train.indptr[u + 1]].tolist())
            if train is not None
            else set()
        )
        in_train = int(sum(1 for i in unique if int(i) in seen))
        usable = int(unique.size) - in_train
        rows.append(
            {
                "user_id": user_ids[u],
                "listed": int(entries.size),
                "out_of_catalogue": int((entries == _OUTSIDE).sum()),
                "duplicates": int(inside.size - unique.size),
                "in_train": in_train,
                "usable": usable,
                "short": usable < k,
            }
        )
    cols = ["user_id", "listed", "out_of_catalogue", "duplicates", "in_train", "usable", "short"]
    return pd.DataFrame(rows, columns=cols)


def _lists_summary(diag: Any) -> dict[str, Any]:
    return {
        "users_with_list": len(diag),
        "entries": int(diag["listed"].sum()),
        "out_of_catalogue": int(diag["out_of_catalogue"].sum()),
        "users_with_out_of_catalogue": int((diag["out_of_catalogue"] > 0).sum()),
        "duplicates": int(diag["duplicates"].sum()),
        "users_with_duplicates": int((diag["duplicates"] > 0).sum()),
        "in_train": int(diag["in_train"].sum()),
        "users_with_train_items": int((diag["in_train"] > 0).sum()),
        "short_lists": int(diag["short"].sum()),
    }


# -- list rules -----------------------------------------------------------------------------


def _one_list(seq: np.ndarray, score: np.ndarray | None, ooc: str, dup: str, k: int) -> list[int]:
    """One user's entries after the rules: item indices, and ``-3`` for a slot kept as a
    miss (duplicates first, then items outside the catalogue)."""
    keep = seq != -1
    seq = seq[keep]
    if dup == "sum" and score is not None:
        score = score[keep]
        total: dict[int, float] = {}
        first: dict[int, int] = {}
        for pos, (i, s) in enumerate(zip(seq.tolist(), score.tolist(), strict=True)):
            key = i if i >= 0 else -(pos + 10)  # each outside entry stays its own
            total[key] = total.get(key, 0.0) + s
            first.setdefault(key, pos)
        ranked = sorted(total, key=lambda x: (-total[x], first[x]))
        items = [i if i >= 0 else _OUTSIDE for i in ranked]
    else:
        items, seen = [], set()
        for i in seq.tolist():
            if i >= 0 and i in seen:
                if dup == "slot":
                    items.append(_PHANTOM)
                continue
            seen.add(i)
            items.append(i)
    if ooc == "cut_then_drop":
        items = items[:k]
    if ooc == "slot":
        return [_PHANTOM if i == _OUTSIDE else i for i in items]
    return [i for i in items if i != _OUTSIDE]


def _rule_lists(
    raw: np.ndarray, scores: np.ndarray | None, ooc: str, dup: str, k: int, n: int
) -> tuple[np.ndarray, int]:
    """The lists under the rules, as item indices for evaluate: a slot kept as a miss becomes
    a phantom item ``n + j`` (the j-th such slot of the row), which no user has in train or
    test; returns the lists and the number of phantom items."""
    out = [
        _one_list(raw[u], None if scores is None else scores[u], ooc, dup, k)
        for u in range(raw.shape[0])
    ]
    width = max(k, max((len(x) for x in out), default=0))
    lists = np.full((raw.shape[0], width), -1, dtype=np.int64)
    phantoms = 0
    for u, items in enumerate(out):
        j = 0
        for r, i in enumerate(items):
            if i == _PHANTOM:
                lists[u, r] = n + j
                j += 1
            else:
                lists[u, r] = i
        phantoms = max(phantoms, j)
    return lists, phantoms


def _widen(X: sp.csr_array | None, extra: int) -> sp.csr_array | None:
    if X is None or not extra:
        return X
    return sp.csr_array(sp.hstack([X, sp.csr_array((X.shape[0], extra))], format="csr"))


# -- configurations -------------------------------------------------------------------------


def _family(spec: MetricSpec) -> str:
    return spec.family or spec.name


def _base(spec: MetricSpec) -> str:
    fam = _family(spec)
    return _FAMILY_BASE.get(fam, fam if fam in METRICS else spec.name)


def _variant_index() -> dict[tuple[str, frozenset], str]:
    return {(_family(s), frozenset(s.variant)): s.name for s in METRICS.values()}


def _metric_choices(prof: dict[str, Any], name: str) -> dict[str, str]:
    """The definition choices that make the registered metric ``name`` differ from the default
    metric of its family: its :attr:`MetricSpec.variant` where it differs from the base's (the
    profile's ``choices`` record states them too, with the rest of its definition)."""
    spec = METRICS[name]
    base = dict(METRICS[_base(spec)].variant)
    return {c: v for c, v in spec.variant if c in METRIC_CHOICES and base.get(c) != v}


def _options(prof: dict[str, Any], name: str, rule: tuple[Any, Any]) -> dict[str, Any]:
    """The options a profile evaluates ``name`` with (its own per-metric choices included)."""
    opts: dict[str, Any] = {key: prof.get(key, v) for key, v in DEFAULT_OPTIONS.items()}
    opts.update(prof.get("lists", {}))
    opts["relevance_level"] = (
        (float(prof["relevance_level"]), "graded") if "relevance_level" in prof else rule
    )
    own = prof.get("choices", {}).get(name, {})
    # a metric's own option (the profile's record also repeats the profile's tie order and its
    # rule for repeated items in words; those options come from the profile's entry)
    for c in _METRIC_OPTIONS:
        if c in own:
            opts[c] = own[c] if c != "relevance_level" else (float(own[c]), "graded")
    return opts


def _relevance_text(value: tuple[Any, Any]) -> str:
    level, gains = value
    if level is None:
        where = "every entry"
    elif level == math.ulp(0.0):
        where = "> 0"
    else:
        where = f">= {level:g}"
    return f"{where}, {gains or 'graded'}"


def _change_text(choice: str, before: Any, after: Any) -> str:
    if choice == "relevance_level":
        before, after = _relevance_text(before), _relevance_text(after)
    return f"{choice}: {before} -> {after}"


@dataclasses.dataclass
class _Input:
    """What every configuration is evaluated on."""

    prep: Any
    scores: Any
    raw: np.ndarray | None
    raw_scores: np.ndarray | None
    k: int
    seed: int | None
    nthreads: int
    has_outside: bool = False
    has_duplicates: bool = False
    has_inf: bool = False


def _canonical(opts: dict[str, Any], inp: _Input) -> tuple[tuple[str, Any], ...]:
    """The options that can act on this input (the others set to the default), as a key."""
    out = dict(opts)
    ranked = inp.raw is not None
    if ranked:  # the list order is given: no tie to break
        out["ties"] = None
    if ranked or not inp.has_inf:
        out["inf_scores"] = DEFAULT_OPTIONS["inf_scores"]
    if not ranked or not inp.has_outside:
        out["out_of_catalogue"] = DEFAULT_OPTIONS["out_of_catalogue"]
    if not ranked or not inp.has_duplicates:
        out["duplicates"] = DEFAULT_OPTIONS["duplicates"]
    level, gains = out["relevance_level"]
    values = inp.prep.test.data
    if level is not None and (values.size == 0 or bool((values >= level).all())):
        level = None  # a level below every stored value keeps them all
    out["relevance_level"] = (level, gains or "graded")
    if not _has_no_positive(inp.prep.test, level):
        out["no_positive"] = DEFAULT_OPTIONS["no_positive"]
    return tuple(sorted(out.items()))


def _users_without_positive(test: sp.csr_array, level: float | None) -> int:
    """Users with a test entry and none at or above ``level`` (0 without a level)."""
    if level is None:
        return 0
    rows = np.repeat(np.arange(test.shape[0]), np.diff(test.indptr))
    pos = np.bincount(rows[test.data >= level], minlength=test.shape[0])
    return int(((np.diff(test.indptr) > 0) & (pos == 0)).sum())


def _has_no_positive(test: sp.csr_array, level: float | None) -> bool:
    return _users_without_positive(test, level) > 0


def _evaluate(key: tuple, names: set[str], inp: _Input, notes: list[str]) -> dict[str, float]:
    """Every metric of ``names`` under the options ``key``: one evaluation (two with phantom
    items: the catalogue metrics count real items only)."""
    from .evaluate import evaluate

    opts = dict(key)
    level, gains = opts["relevance_level"]
    kw = {
        "k": inp.k,
        "seed": inp.seed,
        "nthreads": inp.nthreads,
        "ties": opts["ties"] or "index",
        "relevance_level": level,
        "gains": gains,
        "no_positive": opts["no_positive"],
        "inf_scores": opts["inf_scores"],
    }
    prep = inp.prep
    specs = [METRICS[x] for x in names]
    catalogue = {s.name for s in specs if s.kind == "aggregate" and not s.needs}
    calls: list[tuple[list[str], dict[str, Any]]] = []
    if inp.raw is None:
        calls.append((sorted(names), {"scores": inp.scores}))
    else:
        lists, extra = _rule_lists(
            inp.raw,
            inp.raw_scores,
            opts["out_of_catalogue"],
            opts["duplicates"],
            inp.k,
            prep.n_items,
        )
        if extra and catalogue:
            real = np.where(lists >= prep.n_items, -1, lists)
            calls.append((sorted(catalogue), {"ranked": real}))
            names = names - catalogue
        if names:
            calls.append((sorted(names), {"ranked": lists, "extra": extra}))
    out: dict[str, float] = {}
    for metrics, source in calls:
        extra = source.pop("extra", 0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = evaluate(
                _widen(prep.train, extra),
                _widen(prep.test, extra),
                metrics=metrics,
                **source,
                **kw,
            )
        for w in caught:
            text = " ".join(str(w.message).split())
            if text not in notes:
                notes.append(text)
        means = res.means
        out.update({x: means.get(column_name(METRICS[x], inp.k), math.nan) for x in metrics})
    return out


# -- decomposition --------------------------------------------------------------------------


def _plan_row(
    prof: dict[str, Any], name: str, rule: tuple, inp: _Input, order: tuple[str, ...]
) -> tuple[str, list[tuple[str, str, str, tuple]]]:
    """The default metric of ``name`` and the decomposition's states: ``(choices, change text,
    metric, options key)``, the first being the default."""
    spec = METRICS[name]
    own = _metric_choices(prof, name)
    base = _base(spec) if own else name
    variants = _variant_index()
    metric = base
    opts = _options({}, base, rule)
    states = [("", "", metric, _canonical(opts, inp))]
    target = _options(prof, name, rule)
    pending: dict[str, str] = {}
    changes: list[str] = []
    for choice in order:
        if choice in METRIC_CHOICES:
            if choice not in own:
                continue
            current = dict(METRICS[metric].variant)
            changes.append(_change_text(choice, current.get(choice, "none"), own[choice]))
            pending[choice] = own[choice]
            config = {**current, **pending}
            found = variants.get((_family(METRICS[metric]), frozenset(config.items())))
            if found is None:
                continue
            metric = found
            states.append((" + ".join(pending), "; ".join(changes), metric, _canonical(opts, inp)))
            pending, changes = {}, []
            continue
        if target[choice] == opts[choice]:
            continue
        before = opts[choice]
        opts = {**opts, choice: target[choice]}
        key = _canonical(opts, inp)
        if key == states[-1][3]:
            continue  # the choice cannot act on this input
        states.append((choice, _change_text(choice, before, target[choice]), metric, key))
    if pending or metric != name:
        raise InputError(
            f"The choices of metric {name!r} in its profile do not lead from {base!r} to "
            f"{name!r} through registered metrics (stopped at {metric!r} with {pending})."
        )
    return base, states


def _percent(delta: float, default: float) -> float:
    return delta / default if default and np.isfinite(default) else math.nan


def _signed(x: float) -> str:
    return "n/a" if not np.isfinite(x) else f"{x:+.1%}"


def _label(profile: str, prof: dict[str, Any], name: str) -> str:
    aliases = [a for a, m in prof.get("aliases", {}).items() if m == name]
    return aliases[0] if aliases else name


def _explanation(
    profile: str, label: str, value: float, default: float, steps: list[dict[str, Any]]
) -> str:
    total = _percent(value - default, default)
    head = f"{profile} {label} = {value:.4f} vs default {default:.4f}"
    if not steps:
        return f"{head}: the same definition"
    if value == default:
        parts = "; ".join(s["change"] for s in steps)
        return f"{head} (+0.0%): its choices ({parts}) do not move it on this input"
    parts = ", ".join(f"{_signed(s['relative'])} from {s['change']}" for s in steps)
    return f"{head} ({_signed(total)}): {parts}"


def _computable(spec: MetricSpec, ranked: bool) -> bool:
    if not ranked:
        return True
    return spec.kind != "whole" and all(METRICS[x].kind == "at_k" for x in spec.needs)


def _profile_rows(
    chosen: Sequence[str], wanted: set[str] | None, ranked: bool, notes: list[str]
) -> list[tuple[str, str]]:
    rows, left = [], set()
    for profile in chosen:
        for name in PROFILES[profile]["metrics"]:
            spec = METRICS[name]
            if wanted is not None and name not in wanted and _base(spec) not in wanted:
                continue
            own = _metric_choices(PROFILES[profile], name)
            base = METRICS[_base(spec)] if own else spec
            if not (_computable(spec, ranked) and _computable(base, ranked)):
                left.add(name)
                continue
            rows.append((profile, name))
    if left:
        notes.append(
            "left out with ranked lists (they, or the default metric they vary, need a score "
            f"for every item): {sorted(left)}"
        )
    return rows


def _check_profiles(profiles: Any) -> list[str]:
    if profiles is None:
        return list(PROFILES)
    names = [profiles] if isinstance(profiles, str) else list(profiles)
    for name in names:
        if not isinstance(name, str) or name not in PROFILES:
            raise param_error("profiles", _FUNC, f"profile names among {list(PROFILES)}", name)
    if not names:
        raise param_error("profiles", _FUNC, f"at least one of {list(PROFILES)}", profiles)
    return names


def _check_order(order: Any) -> tuple[str, ...]:
    if order is None:
        return CHOICE_ORDER
    got = tuple(order)
    if sorted(got) != sorted(CHOICE_ORDER):
        raise param_error(
            "order", _FUNC, f"an ordering of every choice of {list(CHOICE_ORDER)}", order
        )
    return got


def _check_metrics(metrics: Any) -> set[str] | None:
    if metrics is None:
        return None
    names = {metrics} if isinstance(metrics, str) else set(metrics)
    unknown = sorted(str(x) for x in names if x not in METRICS)
    if unknown:
        raise param_error(
            "metrics", _FUNC, f"registered metric names ({', '.join(METRICS)})", unknown
        )
    return names


def _make_input(
    train: Any, test: Any, scores: Any, ranked: Any, k: int, seed: int | None, nthreads: int
) -> _Input:
    from .._validation import check_int
    from .inputs import prepare

    if (scores is None) == (ranked is None):
        raise param_error(
            "scores",
            _FUNC,
            "given alone or ranked= alone (one input, scored under every profile)",
            "both" if scores is not None else "neither",
            got_is_text=True,
        )
    k = check_int(k, "k", _FUNC, minimum=1)
    prep = prepare(train, test, None, _FUNC)
    inp = _Input(prep, scores, None, None, k, seed, nthreads)
    if ranked is not None:
        inp.raw, inp.raw_scores = _raw_lists(ranked, prep)
        inp.has_outside = bool((inp.raw == _OUTSIDE).any())
        inside = np.where(
            inp.raw >= 0, inp.raw, -np.arange(inp.raw.size).reshape(inp.raw.shape) - 10
        )
        srt = np.sort(inside, axis=1)
        inp.has_duplicates = bool((srt[:, 1:] == srt[:, :-1]).any())
    elif isinstance(scores, np.ndarray) and np.issubdtype(scores.dtype, np.floating):
        inp.has_inf = bool(np.isinf(scores).any())
    else:
        inp.has_inf = True  # a score source: its blocks are not read here
    return inp


def compare_profiles(
    train: Any,
    test: Any,
    *,
    scores: Any = None,
    ranked: Any = None,
    k: int = 10,
    profiles: str | Sequence[str] | None = None,
    metrics: str | Sequence[str] | None = None,
    order: Sequence[str] | None = None,
    seed: int | None = None,
    nthreads: int = -1,
) -> Agreement:
    r"""Score one input under the project's defaults and under each library profile, and split
    every difference into the definition choices that make it.

    Parameters
    ----------
    train, test : scipy.sparse CSR (users x items) or interactions containers
        As for :func:`~recoeval_tracking.evaluate`; the data's relevance rule (MovieLens: a
        rating >= 4 is relevant, with gain 1) is the default's, replaced by a profile's own
        relevance level (trec_eval, ranx, Elliot, WarpRec) as ``evaluate(profile=...)`` does.
    scores : ndarray or ScoreSource, optional
        Scores for every (user, item); ties are broken by each profile's tie policy.
    ranked : ndarray, RankedLists or DataFrame, optional
        Top lists, best first: an (m x L) array of item indices (-1 padding; an index outside
        ``[0, n_items)`` is an item outside the catalogue) or a DataFrame with columns
        ``user``, ``item`` and ``rank`` or ``score`` (an item id unknown to the data is outside
        the catalogue). Items outside the catalogue and repeated items are kept for the rules
        of :data:`LIST_RULES`; the whole-ranking metrics are left out.
    k : int
        The cutoff.
    profiles : str or list of str, optional
        Profiles of :data:`~recoeval_tracking.metrics.profiles.PROFILES`; every one by default.
    metrics : list of str, optional
        Keep the rows of these registered metrics, or of variants of them (``["ndcg", "ap"]``
        keeps RecBole's ``ndcg_bin`` and ``tap``); every metric by default.
    order : list of str, optional
        The order in which the choices are applied: a permutation of :data:`CHOICE_ORDER`
        (the default). A step's size depends on the order, their sum does not.
    seed, nthreads
        As for :func:`~recoeval_tracking.evaluate` (``seed`` draws the default's random tie
        order and WarpRec's; by default 0, and 42 under WarpRec's tie policy).

    Returns
    -------
    Agreement
        ``table`` (one row per profile and metric, with its explanation), ``steps`` (the
        decomposition), ``lists`` (per-user checks of ranked lists) and ``notes``.

    Notes
    -----
    With :math:`v_0` the default value, :math:`v_P` the profile's and :math:`v_1, \dots,
    v_{n-1}` the values after each choice in turn, step :math:`j` moves the value by
    :math:`v_j - v_{j-1}`, shown relative to :math:`v_0`; the steps sum to :math:`v_P - v_0`.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> import recoeval_tracking as rt
    >>> train = sp.csr_array(np.array([[1.0, 0, 0, 0, 0]]))
    >>> test = sp.csr_array(np.array([[0, 5.0, 0, 1.0, 0]]))
    >>> ag = rt.compare_profiles(train, test, ranked=np.array([[3, 2, 1]]), k=3,
    ...                          profiles=["recbole"], metrics=["ndcg"])
    >>> print(ag.explain("recbole", "ndcg"))
    recbole ndcg = 0.9197 vs default 0.6216 (+48.0%): +48.0% from gain: linear -> binary
    """
    chosen = _check_profiles(profiles)
    wanted = _check_metrics(metrics)
    order_used = _check_order(order)
    inp = _make_input(train, test, scores, ranked, k, seed, nthreads)
    rule = _data_rule(train, test)
    notes: list[str] = []
    rows = _profile_rows(chosen, wanted, inp.raw is not None, notes)
    plans = {(p, n): _plan_row(PROFILES[p], n, rule, inp, order_used) for p, n in rows}
    needed: dict[tuple, set[str]] = {}
    for _, states in plans.values():
        for _, _, metric, key in states:
            needed.setdefault(key, set()).add(metric)
    values = {key: _evaluate(key, names, inp, notes) for key, names in needed.items()}
    table, steps = _assemble(plans, values)
    lists, summary = None, {}
    if inp.raw is not None:
        lists = _diagnose(inp.raw, inp.prep.train, inp.k, inp.prep.user_ids)
        summary = _lists_summary(lists)
    notes += _not_reproduced_notes(chosen, inp, summary)
    return Agreement(table, steps, lists, summary, notes, inp.k, order_used)


def _assemble(plans: dict, values: dict) -> tuple[Any, Any]:
    import pandas as pd

    rows, step_rows = [], []
    for (profile, name), (base, states) in plans.items():
        prof = PROFILES[profile]
        seq = [values[key][metric] for _, _, metric, key in states]
        default, value = seq[0], seq[-1]
        label = _label(profile, prof, name)
        steps = []
        for j in range(1, len(states)):
            choice, change, metric, _ = states[j]
            delta = seq[j] - seq[j - 1]
            steps.append(
                {
                    "profile": profile,
                    "name": label,
                    "step": j,
                    "choice": choice,
                    "change": change,
                    "metric": metric,
                    "before": seq[j - 1],
                    "after": seq[j],
                    "delta": delta,
                    "relative": _percent(delta, default),
                }
            )
        step_rows += steps
        rows.append(
            {
                "profile": profile,
                "name": label,
                "metric": name,
                "default_metric": base,
                "value": value,
                "default": default,
                "difference": value - default,
                "relative": _percent(value - default, default),
                "choices": "; ".join(s["change"] for s in steps),
                "explanation": _explanation(profile, label, value, default, steps),
            }
        )
    step_cols = ["profile", "name", "step", "choice", "change", "metric", "before", "after"]
    return pd.DataFrame(rows), pd.DataFrame(step_rows, columns=[*step_cols, "delta", "relative"])


#: The ``not_reproduced`` entries about generated lists: the count in the lists' summary.
_LIST_COUNTS = {
    "out_of_catalogue": ("out_of_catalogue", "entries outside the catalogue"),
    "duplicates": ("duplicates", "repeated entries"),
    "short_list": ("short_lists", "lists shorter than k"),
    "train_items": ("in_train", "train items listed"),
}

#: Why a ``not_reproduced`` entry can have nothing to act on in an input, by entry.
_ABSENT = {
    "out_of_catalogue": "no item outside the catalogue",
    "duplicates": "no repeated item",
    "short_list": "no list shorter than k",
    "train_items": "no train item listed",
    "ties": "ranked input: the lists' order is given",
    "negative_values": "no test value < 0",
    "no_positive_lists": "every user with a test entry has a positive",
    "pool_le_k": "every user with a test entry has more than k items outside train",
}


def _applies(what: str, prof: dict[str, Any], inp: _Input, summary: dict[str, Any]) -> str:
    """How much of this input a ``not_reproduced`` entry ``what`` of a profile concerns
    (``"users without a positive: 3"``), ``""`` when none of it, or ``"not checked against
    this input"`` for an entry no count covers."""
    train, test = inp.prep.train, inp.prep.test
    if what in _LIST_COUNTS:
        key, unit = _LIST_COUNTS[what]
        n = summary.get(key, 0)  # scored input: no list, an empty summary
    elif what == "ties":
        return "scored input" if inp.raw is None else ""
    elif what == "negative_values":
        n, unit = int((test.data < 0).sum()), "test values < 0"
    elif what == "no_positive_lists":
        level = prof.get("relevance_level")
        n, unit = _users_without_positive(test, level), "users without a positive"
    elif what == "pool_le_k":
        pool = test.shape[1] - np.diff(train.indptr)
        n = int(((np.diff(test.indptr) > 0) & (pool <= inp.k)).sum())
        unit = f"users with at most k = {inp.k} items outside train"
    else:
        return "not checked against this input"
    return f"{unit}: {n}" if n else ""


def _why_absent(what: str, inp: _Input) -> str:
    if what in _LIST_COUNTS and inp.raw is None:
        return "scored input: no list"
    return _ABSENT.get(what, "absent")


def _not_reproduced_notes(chosen: Sequence[str], inp: _Input, summary: dict[str, Any]) -> list[str]:
    """Every entry of each profile's ``not_reproduced`` that acts on this input, with how much
    of the input it concerns, then, per profile, the entries that have nothing to act on and
    why; and what a profile's list rules cannot do with lists that have ranks only."""
    notes = []
    for profile in chosen:
        prof = PROFILES[profile]
        absent = []
        for what, text in prof.get("not_reproduced", {}).items():
            amount = _applies(what, prof, inp, summary)
            if amount:
                notes.append(f"{profile}: {text} ({amount})")
            else:
                absent.append(f"{what} ({_why_absent(what, inp)})")
        if absent:
            notes.append(f"{profile}: not reproduced, absent from this input: {'; '.join(absent)}")
        if prof.get("lists", {}).get("duplicates") == "sum" and inp.raw_scores is None:
            if summary.get("duplicates"):
                notes.append(
                    f"{profile}: repeated items are summed by score, and these lists have "
                    "ranks only: counted once at their first rank"
                )
    return notes
