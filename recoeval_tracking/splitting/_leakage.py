r"""How much a split lets training see the future: :func:`measure_leakage` and its one line of
text, :func:`leakage_line`.

A random (or per-user) split of timestamped data trains on entries made after the entries it is
tested on: the model learns from the future it is asked to predict (Ji, Sun, Zhang & Li 2023,
"A Critical Study on Data Leakage in Recommender System Offline Evaluation", ACM TOIS 41(3);
Meng, McCreadie, Macdonald & Ounis 2020, "Exploring Data Splitting Strategies for the
Evaluation of Recommendation Models", RecSys). Libraries warn about it; this module measures it,
so that every job records how much of its test set lies in its training set's past.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from .._validation import param_error
from ..data import Interactions
from ._split import Split

__all__ = ["measure_leakage", "leakage_line", "LEAKAGE_PHASES"]

#: The evaluations a record can hold, in the order a line shows them.
LEAKAGE_PHASES = ("test", "validation")

_FUNC = "measure_leakage"


_INT64 = np.iinfo(np.int64)


def _row_extreme(part: Interactions, ufunc: np.ufunc) -> tuple[np.ndarray, np.ndarray]:
    """``ufunc`` (``np.maximum`` or ``np.minimum``) of each row's timestamps, and which rows
    have entries; an empty row holds the ufunc's identity on int64 (the smallest int64 for a
    maximum, the largest for a minimum), so that maxima of several parts combine."""
    assert part.timestamps is not None
    indptr = np.asarray(part.matrix.indptr, dtype=np.int64)
    data = np.asarray(part.timestamps.data, dtype=np.int64)
    has = np.diff(indptr) > 0
    fill = _INT64.min if ufunc is np.maximum else _INT64.max
    out = np.full(part.n_users, fill, dtype=np.int64)
    if data.size:
        # one segment per non-empty row: consecutive starts of non-empty rows bound exactly the
        # row's entries (the empty rows between them add nothing)
        out[has] = ufunc.reduceat(data, indptr[:-1][has])
    return out, has


def _share(count: int, total: int) -> float | None:
    return count / total if total else None


def _phase(training: list[Interactions], evaluated: Interactions, label: str) -> dict[str, Any]:
    """The leakage of evaluating ``evaluated`` after fitting on the union of ``training``."""
    assert evaluated.timestamps is not None
    n_users = evaluated.n_users
    newest = np.full(n_users, _INT64.min, dtype=np.int64)
    has_train = np.zeros(n_users, dtype=bool)
    for part in training:
        row_max, has = _row_extreme(part, np.maximum)
        np.maximum(newest, row_max, out=newest)
        has_train |= has
    first, has_eval = _row_extreme(evaluated, np.minimum)
    ts = np.asarray(evaluated.timestamps.data, dtype=np.int64)
    newest_training = int(newest[has_train].max()) if has_train.any() else None
    older = int(np.count_nonzero(ts < newest_training)) if newest_training is not None else 0
    users = has_eval & has_train
    leaking = users & (newest > first)
    n_entries = int(ts.shape[0])
    n_users_measured = int(np.count_nonzero(users))
    n_leaking = int(np.count_nonzero(leaking))
    return {
        "training": label,
        "entries": n_entries,
        "entries_older": older,
        "entries_share": _share(older, n_entries),
        "newest_training": newest_training,
        "users": n_users_measured,
        "users_leaking": n_leaking,
        "users_share": _share(n_leaking, n_users_measured),
        "users_without_training": int(np.count_nonzero(has_eval & ~has_train)),
    }


def measure_leakage(split: Split) -> dict[str, Any] | None:
    r"""How much the split lets training see the future, for each evaluation it serves.

    Let :math:`T` be the training entries, :math:`E` the evaluated entries and :math:`t(e)`
    the timestamp of entry :math:`e`; :math:`T_u` and :math:`E_u` are user :math:`u`'s.

    * **Entries** (a global time leak): an evaluated entry is *older than the newest training
      entry* when :math:`t(e) < t_{\max}` with :math:`t_{\max} = \max_{e' \in T} t(e')`
      (strictly: an entry made at the same second as the newest training entry does not
      count). ``entries_share`` :math:`= |\{e \in E : t(e) < t_{\max}\}| \,/\, |E|`: the
      share of the evaluated entries for which training holds at least one entry made after
      them, by anyone.
    * **Users** (a per-user leak): the users measured are those with at least one evaluated
      and at least one training entry, :math:`U = \{u : |E_u| \ge 1,\ |T_u| \ge 1\}` (the
      others are counted in ``users_without_training``). User :math:`u` leaks when
      :math:`\max_{e \in T_u} t(e) > \min_{e \in E_u} t(e)` (strictly: a training entry at
      the same second as the user's first evaluated entry does not count).
      ``users_share`` :math:`= |\{u \in U : u \text{ leaks}\}| \,/\, |U|`: the share of users
      whose own training history continues past the first entry they are evaluated on.

    Which entries train depends on the evaluation: for the **test** evaluation, training is
    ``train`` plus ``validation`` when the split has a validation part (the configuration
    chosen on validation is refit on both, :meth:`Split.test_split`); for the **validation**
    evaluation (only when there is a validation part), training is ``train`` and the evaluated
    entries are ``validation`` (:meth:`Split.validation_split`). A split that is itself a
    phase view (``details["evaluated_on"] == "validation"``) is recorded under
    ``"validation"``.

    What to expect: a temporal global split (:func:`~recoeval_tracking.splitting.temporal_global`:
    every training entry strictly before the cut, every test entry at or after it) gives 0 and
    0. A leave-last-out split by timestamp per user (``leave_one_out(order="latest")``,
    :func:`~recoeval_tracking.splitting.temporal_user`) gives 0 users (each user's training is
    no later than their test) but usually many entries: one user's last entry is older than
    another user's training. A random split leaks on both counts.

    Parameters
    ----------
    split : Split
        A split from :func:`~recoeval_tracking.make_split` (or a phase view of one).

    Returns
    -------
    dict or None
        None when the data have no timestamps. Otherwise ``split_fingerprint`` and, for
        ``"test"`` and (with a validation part) ``"validation"``, a dict: ``training``
        (``"train"`` or ``"train + validation"``), ``entries`` (:math:`|E|`),
        ``entries_older``, ``entries_share``, ``newest_training`` (:math:`t_{\max}`, None
        without training entries), ``users`` (:math:`|U|`), ``users_leaking``,
        ``users_share`` and ``users_without_training``. A share is None when its denominator
        is 0. Plain Python numbers (JSON-able).

    Raises
    ------
    InputError
        ``split`` is not a :class:`Split`.

    References
    ----------
    Ji, Sun, Zhang & Li (2023), "A Critical Study on Data Leakage in Recommender System Offline
    Evaluation", ACM Transactions on Information Systems 41(3), article 75. Meng, McCreadie,
    Macdonald & Ounis (2020), "Exploring Data Splitting Strategies for the Evaluation of
    Recommendation Models", RecSys '20.

    Examples
    --------
    >>> import recoeval_tracking as rt
    >>> X = rt.make_synthetic(n_users=200, n_items=50, n_interactions=3000, seed=0)
    >>> cut = rt.make_split("temporal_global", X, quantile=0.8)
    >>> leak = measure_leakage(cut)
    >>> leak["test"]["entries_share"], leak["test"]["users_share"]
    (0.0, 0.0)
    """
    if not isinstance(split, Split):
        raise param_error(
            "split",
            _FUNC,
            "a recoeval_tracking.Split (from make_split)",
            split,
            "Split the data with recoeval_tracking.make_split first.",
        )
    parts = [split.train, split.test] + ([split.validation] if split.has_validation else [])
    if any(p is None or p.timestamps is None for p in parts):
        return None
    out: dict[str, Any] = {"split_fingerprint": split.fingerprint}
    if split.has_validation:
        assert split.validation is not None
        out["test"] = _phase([split.train, split.validation], split.test, "train + validation")
        out["validation"] = _phase([split.train], split.validation, "train")
    else:
        # a phase view (Split.validation_split, Split.test_split) says what it evaluates; the
        # train of a test view is train + validation already
        on = split.details.get("evaluated_on")
        part = "validation" if on == "validation" else "test"
        label = "train + validation" if on == "test" else "train"
        out[part] = _phase([split.train], split.test, label)
    return out


def _pct(share: Any) -> str:
    """A share as a percentage with one decimal, or more where one would round a share that is
    not 0 or 1 to 0.0% or 100.0% (19,999 of 20,000 is 99.995%, not 100.0%)."""
    if isinstance(share, bool) or not isinstance(share, (int, float)) or not math.isfinite(share):
        return "n/a"
    for digits in range(1, 5):
        text = f"{100 * share:.{digits}f}"
        if (float(text) != 0 or share == 0) and (float(text) != 100 or share == 1):
            return f"{text}%"
    return "<0.0001%" if share < 0.5 else ">99.9999%"


def _leaks(phase: Mapping[str, Any]) -> bool:
    return bool(phase.get("entries_older") or phase.get("users_leaking"))


def leakage_line(record: Mapping[str, Any] | None) -> str:
    """One line of text for the terminal and the report: how much the split leaks.

    Parameters
    ----------
    record : dict or None
        What :func:`measure_leakage` returned (``dataset.json``'s ``leakage``).

    Returns
    -------
    str
        ``leakage: 41.3% of test entries are older than the newest training entry; 88.0% of
        test users have training entries newer than their first test entry`` (the validation
        evaluation's figures follow when the split has one), ``no leakage: ...`` when no
        entry and no user leaks, or ``leakage: not measured (the data has no timestamps)``.

    Raises
    ------
    InputError
        ``record`` is neither None nor a mapping.
    """
    if record is None:
        return "leakage: not measured (the data has no timestamps)"
    if not isinstance(record, Mapping):
        raise param_error("record", "leakage_line", "a dict from measure_leakage, or None", record)
    phases = [
        (name, record[name]) for name in LEAKAGE_PHASES if isinstance(record.get(name), Mapping)
    ]
    if not phases:
        return "leakage: not measured (the data has no timestamps)"
    if not any(_leaks(p) for _, p in phases):
        names = " and ".join(name for name, _ in phases)
        return (
            f"no leakage: no {names} entry is older than the newest training entry and no "
            f"{names} user has training entries newer than their first {names} entry"
        )
    texts = []
    for i, (name, p) in enumerate(phases):
        if i == 0:
            texts.append(
                f"{_pct(p.get('entries_share'))} of {name} entries are older than the newest "
                f"training entry; {_pct(p.get('users_share'))} of {name} users have training "
                f"entries newer than their first {name} entry"
            )
        else:
            texts.append(
                f"{name}: {_pct(p.get('entries_share'))} of entries, "
                f"{_pct(p.get('users_share'))} of users"
            )
    return "leakage: " + "; ".join(texts)
