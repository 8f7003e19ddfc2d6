"""Per-user results written by other tools, read as :class:`~recoeval_tracking.reporting.runs.
RunData`, so that :func:`~recoeval_tracking.reporting.compare.compare` and the report command
give their intervals, paired tests and effect sizes on them.

Each format is read as its tool writes it (the layouts below cite the tool's code):

=========  ======================================================================================
format     layout
=========  ======================================================================================
trec_eval  ``trec_eval -q``: one ``measure<TAB>qid<TAB>value`` line per measure and query, the
           measure padded to 22 characters and the value printed ``%6.4f``
           (usnistgov/trec_eval ``meas_print_single.c``); the ``all`` rows (the summary) are
           dropped and the ``runid`` row names the system.
ranx       JSON of ``{metric: {query id: value}}``: the per-query scores ``ranx.evaluate`` keeps
           in ``Run.scores`` (AmenRa/ranx ``ranx/meta/evaluate.py``), saved with ``json.dump``.
           ranx writes no per-query file itself: ``Report.save`` holds the means only, and is
           refused naming that.
pyterrier  ``qid, measure, value`` and the system's ``name``: ``pt.Experiment(...,
           perquery=True)`` and the ``perquery.csv`` of its ``save_dir`` (terrier-org/pyterrier
           ``_evaluation/_rendering.py`` ``perquery``, ``_experiment.py``), several systems in
           one file.
lenskit    ``user_id`` and one column per metric label (``NDCG@10``, ``Recall@10``...): the
           per-list frame of ``RunAnalysis.measure(...).list_metrics()`` or
           ``MeasurementCollector.list_metrics()`` (lenskit/lkpy ``metrics/bulk.py``,
           ``metrics/_collect.py``), saved with ``to_csv()`` or ``to_parquet()``.
warprec    ``<model>_k_<k>_per_user_<time>.tsv``: ``user_id`` and one column per metric class
           name, tab-separated, the cutoff in the file's name (sisinflab/warprec
           ``data/writer/base_writer.py`` ``write_results_per_user``, with
           ``evaluation.save_per_user``).
long       a table ``user, metric, value`` (CSV, TSV or Parquet), optionally a system column.
wide       a table of a user column and one column per metric (CSV, TSV or Parquet).
=========  ======================================================================================

A file is recognised by its content (and a WarpRec file by its name); ``format=`` forces one.
The user column may be called ``user_id``, ``user``, ``userId``, ``uid``, ``qid`` or
``query_id``, the system column ``name``, ``system``, ``model`` or ``run``. User ids are kept as
text, or as integers when every id is one written plainly (``301``, not ``0301``).

Metric names become this project's where the tool's definition is clearly the same
(:func:`project_name`: trec_eval's ``ndcg_cut_10`` is ``ndcg_at_10``, ``P_10`` ``p_at_10``,
``recip_rank`` ``rr``; the trec_eval, ranx, LensKit and WarpRec names come from their profiles'
``aliases`` in :mod:`recoeval_tracking.metrics.profiles`, so LensKit's ``Precision@10`` is
``p_list_at_10``, hits over the list's own length); any other name is kept as the tool wrote it.

A run read from a file records its format (``source``, the tag ``recoeval.source_format``), the
file's fingerprint (``fingerprints["file"]``, a SHA-256 of its bytes) and its users'
(``fingerprints["users"]``, :func:`~recoeval_tracking.reporting.comparability.
users_fingerprint`), which the comparability rule compares when no data or split fingerprint is
recorded: files of the same users compare, files of different users are refused naming both
(:func:`check_same_users`). Each metric's fingerprint is its tool and the tool's own name for
it, so a metric is compared across files of one tool and left out, named, across tools.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import InputError, param_error
from ..metrics.profiles import PROFILES
from ..metrics.registry import spec_for_key
from .comparability import users_fingerprint
from .runs import RunData

__all__ = [
    "FORMATS",
    "read_per_user",
    "read_per_user_runs",
    "read_per_user_files",
    "project_name",
    "check_same_users",
    "SOURCE_FORMAT_TAG",
]

#: The formats read, each with what it looks like (named in the error for a file of none).
FORMATS: dict[str, str] = {
    "trec_eval": "trec_eval -q output, lines 'measure<TAB>qid<TAB>value'",
    "ranx": "ranx per-query scores as JSON, {metric: {query id: value}} (Run.scores)",
    "pyterrier": "PyTerrier per-query table (perquery=True, perquery.csv): qid, measure, value",
    "lenskit": "LensKit per-user metrics (list_metrics()): user_id and one column per "
    "LensKit metric label (NDCG@10, Recall@10...), CSV or Parquet",
    "warprec": "WarpRec per-user file <model>_k_<k>_per_user_<time>.tsv: user_id and one "
    "column per metric",
    "long": "a table user, metric, value (CSV, TSV or Parquet)",
    "wide": "a table of a user column and one column per metric (CSV, TSV or Parquet)",
}
#: The tag a run read from a per-user file carries: the file's format.
SOURCE_FORMAT_TAG = "recoeval.source_format"
_LABELS = {
    "trec_eval": "trec_eval -q",
    "ranx": "ranx per-query",
    "pyterrier": "PyTerrier per-query",
    "lenskit": "LensKit per-user",
    "warprec": "WarpRec per-user",
    "long": "per-user (long)",
    "wide": "per-user (wide)",
}
_USER_COLUMNS = ("user_id", "user", "userid", "uid", "qid", "query_id", "q_id")
_SYSTEM_COLUMNS = ("name", "system", "model", "run")
_WARPREC_NAME = re.compile(r"^(?P<model>.+)_k_(?P<k>\d+)_per_user_.*$")
_FUNC = "read_per_user"

# ---------------------------------------------------------------------------------------------
# Metric names
# ---------------------------------------------------------------------------------------------

#: Tool names -> registered metrics that no profile holds: the reader's own. A tool with a
#: profile (trec_eval, ranx, LensKit, WarpRec) is read with the profile's ``aliases``, the one
#: mapping of its names (:mod:`recoeval_tracking.metrics.profiles`); these only add names its
#: profile does not compute, never another meaning for one it has.
_READER_ALIASES: dict[str, dict[str, str]] = {
    # trec_eval's success_k: 1 when a relevant document is in the top k (m_success.c): hit
    "trec_eval": {"success": "hit"},
    # ir_measures' names, as PyTerrier writes them (nDCG@10 is trec_eval's ndcg_cut_10, AP@10
    # its map_cut_10, AP its map, RR its recip_rank, Success@10 its success_10)
    "ir_measures": {
        "P": "p",
        "R": "r",
        "nDCG": "ndcg",
        "AP": "ap",
        "RR": "rr",
        "Success": "hit",
        "Rprec": "rprec",
    },
}
#: LensKit's labels of metrics its profile does not compute (kept as written): a frame whose
#: columns are all LensKit labels is read as LensKit's.
_LENSKIT_OTHER_LABELS = {"DCG", "RBP"}
#: Names without a cutoff that are the metric over the whole ranking (the reciprocal rank of
#: the first relevant item, wherever it is).
_UNCUT = {
    "trec_eval": {"recip_rank": "rr"},
    "ranx": {"mrr": "rr"},
    "ir_measures": {"RR": "rr"},
    "lenskit": {"RecipRank": "rr"},
}
_TREC_CUT = re.compile(r"^(?P<base>[A-Za-z][A-Za-z_]*?)_(?P<k>\d+)$")
_AT_CUT = re.compile(r"^(?P<base>[A-Za-z][A-Za-z0-9_\-]*?)(?:@(?P<k>\d+))?$")


def _aliases(tool: str) -> dict[str, str]:
    return {**_READER_ALIASES.get(tool, {}), **PROFILES.get(tool, {}).get("aliases", {})}


def _mapped(tool: str, base: str, k: str | None) -> str | None:
    """The registered name of ``base`` at cutoff ``k`` (None: no cutoff) in ``tool``'s names,
    or None when it has none."""
    target = _aliases(tool).get(base)
    if target is None:
        return None
    spec = spec_for_key(target)
    if spec is None:
        return None
    if k is not None:
        return f"{target}_at_{int(k)}" if spec.at_k else None
    if base in _UNCUT.get(tool, {}):
        return _UNCUT[tool][base]
    # a cutoff metric named without a cutoff (trec_eval's set_P, num_rel_ret) is at the run's
    # depth, which the file does not say, and so is trec_eval's map (PR-AUC only over a run
    # that ranks every item): kept as given
    return target if not spec.at_k and target != "pr_auc" else None


def project_name(format: str, name: str, k: int | None = None) -> str:
    """This project's name of the metric ``name`` as written by ``format``'s tool, or ``name``
    itself when none is clearly the same.

    Parameters
    ----------
    format : str
        One of :data:`FORMATS`.
    name : str
        The metric's name in the file (``ndcg_cut_10``, ``nDCG@10``, ``ndcg@10``,
        ``Recall@10``...).
    k : int, optional
        The cutoff, for WarpRec (whose file name holds it).

    Returns
    -------
    str
        ``ndcg_at_10`` for trec_eval's ``ndcg_cut_10``, PyTerrier's ``nDCG@10`` and ranx's
        ``ndcg@10``; ``rr`` for ``recip_rank``; ``tp_at_10`` for LensKit's ``Recall@10``
        (hits / min(|T|, 10)); a name of no known meaning unchanged (with ``@k`` for WarpRec's).
    """
    name = str(name)
    if format in ("trec_eval", "pyterrier"):
        m = _TREC_CUT.match(name)
        got = _mapped("trec_eval", m["base"], m["k"]) if m else _mapped("trec_eval", name, None)
        if got is None and format == "pyterrier" and (m := _AT_CUT.match(name)):
            got = _mapped("ir_measures", m["base"], m["k"])
        return got or name
    if format in ("ranx", "lenskit") and (m := _AT_CUT.match(name)):
        return _mapped(format, m["base"], m["k"]) or name
    if format == "warprec" and k is not None:
        return _mapped("warprec", name, str(k)) or f"{name}@{k}"
    return name


# ---------------------------------------------------------------------------------------------
# Recognising and parsing a file
# ---------------------------------------------------------------------------------------------


def _first_line(data: bytes) -> str:
    if data[:4] == b"PAR1":
        return "<a Parquet file>"
    text = data[:2000].decode("utf-8", errors="replace").lstrip("\ufeff")
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[0][:120] if lines else "<empty>"


def _text(data: bytes, path: Path, fmt: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _not_format(path, fmt, "it is not UTF-8 text") from None


def _not_format(path: Path, fmt: str, why: str) -> InputError:
    return InputError(
        f"The per-user file {path} was read as {fmt} ({FORMATS[fmt]}), but {why}. "
        f"Pass the format it is in (format= one of {', '.join(FORMATS)}), or give the file "
        "as its tool writes it."
    )


def _looks_trec_eval(line: str) -> bool:
    parts = line.rstrip("\r\n").split("\t")
    if len(parts) != 3 or not parts[0].strip() or " " in parts[0].strip() or not parts[1]:
        return False
    try:
        float(parts[2])
    except ValueError:
        return parts[0].strip() == "runid"
    return True


def _sniff(path: Path, data: bytes) -> tuple[str | None, pd.DataFrame | None]:
    """The format of ``data`` and, for a table, the table; (None, None) when none fits."""
    if data[:4] != b"PAR1":
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return None, None
        line = next((x for x in text.splitlines() if x.strip()), "")
        if _looks_trec_eval(line):
            return "trec_eval", None
        if line.lstrip().startswith("{"):
            return "ranx", None
    try:
        table = _table(path, data)
    except (InputError, ValueError, OSError):
        return None, None
    return _table_format(table, path), table


def _table(path: Path, data: bytes) -> pd.DataFrame:
    """A CSV, TSV or Parquet file as a frame (a named index, LensKit's ``user_id``, becomes a
    column), every text column as text."""
    if data[:4] == b"PAR1":
        table = pd.read_parquet(io.BytesIO(data))
        if any(n is not None for n in table.index.names):
            table = table.reset_index()
        return table
    text = data.decode("utf-8-sig")
    header = next((x for x in text.splitlines() if x.strip()), "")
    counts = {sep: header.count(sep) for sep in ("\t", ",", ";", "|")}
    sep = max(counts, key=lambda s: counts[s])
    if not counts[sep]:
        raise InputError(f"{path}: no column separator in its first line")
    return pd.read_csv(io.StringIO(text), sep=sep, dtype=str, quoting=csv.QUOTE_MINIMAL)


def _column(table: pd.DataFrame, names: Iterable[str]) -> str | None:
    lower = {str(c).lower(): c for c in table.columns}
    return next((lower[n] for n in names if n in lower), None)


def _index_column(name: Any) -> bool:
    """A frame's unnamed index written by ``to_csv()`` (``Unnamed: 0`` when read back)."""
    return bool(re.fullmatch(r"Unnamed: \d+", str(name)))


def _is_lenskit_label(name: str) -> bool:
    base = str(name).split("@", 1)[0]
    known = {*PROFILES["lenskit"]["aliases"], *_LENSKIT_OTHER_LABELS}
    return base in known and bool(_AT_CUT.match(str(name)))


def _table_format(table: pd.DataFrame, path: Path) -> str | None:
    cols = {str(c).lower() for c in table.columns}
    if {"qid", "measure", "value"} <= cols:
        return "pyterrier"
    user = _column(table, _USER_COLUMNS)
    if user is None:
        return None
    if _column(table, ("metric", "measure")) is not None and "value" in cols:
        return "long"
    if _WARPREC_NAME.match(path.stem):
        return "warprec"
    metrics = [
        c
        for c in table.columns
        if c != user and str(c).lower() not in _SYSTEM_COLUMNS and not _index_column(c)
    ]
    if not metrics:
        return None
    if str(user) == "user_id" and all(_is_lenskit_label(c) for c in metrics):
        return "lenskit"
    return "wide"


def _values(column: pd.Series, path: Path, fmt: str, what: str) -> np.ndarray:
    values = pd.to_numeric(column, errors="coerce")
    bad = values.isna() & column.notna() & (column.astype(str).str.strip() != "")
    if bad.any():
        raise _not_format(path, fmt, f"{what} holds {str(column[bad].iloc[0])!r}, not a number")
    return values.to_numpy(dtype=np.float64)


def _long(system: Any, user: Any, metric: Any, value: Any) -> pd.DataFrame:
    return pd.DataFrame({"system": system, "user": user, "metric": metric, "value": value})


def _parse_trec_eval(path: Path, data: bytes) -> tuple[pd.DataFrame, str]:
    """``trec_eval -q`` lines (``measure<TAB>qid<TAB>value``) without the ``all`` rows, and the
    ``runid`` (empty when absent)."""
    rows = []
    for i, line in enumerate(_text(data, path, "trec_eval").splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.rstrip("\r\n").split("\t")
        if len(parts) != 3:
            raise _not_format(
                path, "trec_eval", f"line {i} has {len(parts)} tab-separated fields: {line[:80]!r}"
            )
        rows.append([p.strip() for p in parts])
    frame = pd.DataFrame(rows, columns=["metric", "user", "value"])
    runid = frame.loc[frame["metric"].eq("runid"), "value"]
    frame = frame[frame["user"].ne("all") & frame["metric"].ne("runid")]
    if frame.empty:
        raise _not_format(path, "trec_eval", "it holds no per-query line (run trec_eval with -q)")
    values = _values(frame["value"], path, "trec_eval", "a value")
    return _long("", frame["user"].to_numpy(), frame["metric"].to_numpy(), values), (
        str(runid.iloc[0]) if len(runid) else ""
    )


def _parse_ranx(path: Path, data: bytes) -> pd.DataFrame:
    """ranx's ``Run.scores`` saved as JSON: ``{metric: {query id: value}}``."""
    try:
        obj = json.loads(_text(data, path, "ranx"))
    except json.JSONDecodeError as err:
        raise _not_format(path, "ranx", f"it is not JSON ({err})") from None
    if isinstance(obj, Mapping) and "model_names" in obj and "metrics" in obj:
        raise _not_format(
            path,
            "ranx",
            "it is a ranx Report (Report.save), which holds each model's means only, no "
            "per-query value; save the per-query scores of each run instead: "
            "json.dump(run.scores, f) after ranx.evaluate(qrels, run, metrics)",
        )
    if (
        not isinstance(obj, Mapping)
        or not obj
        or not all(isinstance(v, Mapping) for v in obj.values())
    ):
        raise _not_format(path, "ranx", "it is not a mapping of metric to {query id: value}")
    parts = [
        _long("", list(map(str, scores)), str(metric), list(scores.values()))
        for metric, scores in obj.items()
    ]
    frame = pd.concat(parts, ignore_index=True)
    frame["value"] = _values(frame["value"], path, "ranx", "a score")
    return frame


def _parse_table(path: Path, table: pd.DataFrame, fmt: str) -> pd.DataFrame:
    """A frame of ``fmt`` (pyterrier, long, lenskit, warprec, wide) as the long frame."""
    if fmt == "pyterrier":
        user = _column(table, ("qid",))
        metric, value = _column(table, ("measure",)), _column(table, ("value",))
    else:
        user = _column(table, _USER_COLUMNS)
        metric = _column(table, ("metric", "measure")) if fmt == "long" else None
        value = _column(table, ("value",)) if fmt == "long" else None
    if user is None or (fmt in ("pyterrier", "long") and (metric is None or value is None)):
        need = {
            "pyterrier": "qid, measure and value columns",
            "long": "user, metric and value columns",
        }.get(fmt, f"a user column ({', '.join(_USER_COLUMNS)})")
        raise _not_format(path, fmt, f"it has no {need} (its columns: {list(table.columns)})")
    system = _column(table, _SYSTEM_COLUMNS)
    systems = table[system].astype(str).to_numpy() if system is not None else ""
    if metric is not None and value is not None:
        values = _values(table[value], path, fmt, f"column {value!r}")
        return _long(systems, table[user].to_numpy(), table[metric].astype(str), values)
    metrics = [c for c in table.columns if c not in (user, system) and not _index_column(c)]
    if not metrics:
        raise _not_format(path, fmt, f"it has no metric column besides {user!r}")
    parts = [
        _long(
            systems, table[user].to_numpy(), str(c), _values(table[c], path, fmt, f"column {c!r}")
        )
        for c in metrics
    ]
    return pd.concat(parts, ignore_index=True)


def _user_ids(users: pd.Series) -> pd.Series:
    """Ids as text, or as integers when every one is an integer written plainly (so that
    ``301`` and a job's user 301 are one user, and ``0301`` is never taken for ``301``)."""
    text = users.astype(str).str.strip()
    if text.str.fullmatch(r"-?(0|[1-9]\d{0,17})").all():
        return text.astype(np.int64)
    return text


# ---------------------------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------------------------


def _metric_print(fmt: str, name: str) -> str:
    """A metric's fingerprint: its tool and the tool's name for it."""
    return hashlib.sha256(f"{fmt}\n{name}".encode()).hexdigest()[:16]


def _names(fmt: str, metrics: Sequence[str], k: int | None, path: Path) -> dict[str, str]:
    """The file's metric names -> this project's, refusing two that become one."""
    mapping = {m: project_name(fmt, m, k) for m in metrics}
    seen: dict[str, str] = {}
    for original, name in mapping.items():
        if name in seen:
            raise InputError(
                f"The per-user file {path} holds {seen[name]!r} and {original!r}, which are both "
                f"{name}: keep one of them in the file."
            )
        seen[name] = original
    return mapping


def _runs(
    path: Path, data: bytes, fmt: str, frame: pd.DataFrame, default: str, k: int | None
) -> list[RunData]:
    frame = frame.assign(user=_user_ids(frame["user"]))
    metrics = [str(m) for m in pd.unique(frame["metric"])]
    mapping = _names(fmt, metrics, k, path)
    digest = hashlib.sha256(data).hexdigest()[:16]
    systems = [str(s) for s in pd.unique(frame["system"])]
    runs = []
    for system in systems:
        part = frame[frame["system"].astype(str) == system]
        dup = part.duplicated(["user", "metric"])
        if dup.any():
            row = part[dup].iloc[0]
            where = f" of system {system!r}" if system else ""
            raise InputError(
                f"The per-user file {path} gives user {row['user']}{where} several values of "
                f"{row['metric']}: each user needs one value per metric."
            )
        wide = part.pivot(index="user", columns="metric", values="value")
        have = [m for m in metrics if m in wide.columns]
        per_user = wide[have].rename(columns=mapping).rename_axis(columns=None)
        per_user = per_user.rename_axis("user_id").reset_index()
        runs.append(
            RunData(
                run_id=str(path) if len(systems) == 1 else f"{path}#{system}",
                name=system or default,
                per_user=per_user,
                fingerprints={"users": users_fingerprint(per_user), "file": digest},
                source=f"{_LABELS[fmt]} file {path} (sha256 {digest})",
                tags={SOURCE_FORMAT_TAG: fmt},
                metric_fingerprints={mapping[m]: _metric_print(fmt, m) for m in have},
            )
        )
    return runs


def read_per_user_runs(
    path: str | Path, format: str | None = None, *, func: str = _FUNC, param: str = "path"
) -> list[RunData]:
    """Every system of a per-user file, as runs (one for most files; PyTerrier's
    ``perquery.csv`` and a table with a system column hold several).

    Parameters
    ----------
    path : str or Path
        The file, in one of :data:`FORMATS`.
    format : str, optional
        Its format; default: recognised by its content (a WarpRec file by its name).
    func, param : str
        The function and parameter named in errors.

    Returns
    -------
    list of RunData
        One run per system, named by the system (trec_eval's ``runid``, WarpRec's model, else
        the file's stem), with ``user_id`` and one column per metric (:func:`project_name`).

    Raises
    ------
    InputError
        For a file in none of the formats (the message lists those tried and shows its first
        line), a file that is not of the ``format`` forced, or a user given two values of one
        metric.
    """
    if format is not None and format not in FORMATS:
        raise param_error("format", func, f"one of {list(FORMATS)} or None", format)
    p = Path(path)
    if not p.is_file():
        raise param_error(
            param, func, "a per-user file", f"{str(path)!r}, no file", got_is_text=True
        )
    data = p.read_bytes()
    fmt, table = (format, None) if format else _sniff(p, data)
    if fmt is None:
        tried = "; ".join(f"{k}: {v}" for k, v in FORMATS.items())
        raise param_error(
            param,
            func,
            f"a per-user file in a format read here (tried {tried})",
            f"{p}, whose first line is {_first_line(data)!r}",
            f"Pass format= (one of {', '.join(FORMATS)}) if it is one of these.",
            got_is_text=True,
        )
    default, k = p.stem, None
    if fmt == "trec_eval":
        frame, runid = _parse_trec_eval(p, data)
        default = runid or default
    elif fmt == "ranx":
        frame = _parse_ranx(p, data)
    else:
        if table is None:
            try:
                table = _table(p, data)
            except (ValueError, OSError) as err:
                raise _not_format(p, fmt, f"it is no table ({err})") from None
        frame = _parse_table(p, table, fmt)
        if fmt == "warprec" and (m := _WARPREC_NAME.match(p.stem)):
            default, k = m["model"], int(m["k"])
    return _runs(p, data, fmt, frame, default, k)


def _pick(runs: list[RunData], system: str | None, path: Any, func: str, param: str) -> RunData:
    """The run of ``system`` among a file's runs (the only one when ``system`` is None)."""
    if system is None and len(runs) == 1:
        return runs[0]
    found = [r for r in runs if r.name == system]
    if len(found) == 1:
        return found[0]
    held = ", ".join(r.name for r in runs)
    raise param_error(
        param,
        func,
        "the name of one system the per-user file holds",
        f"{system!r} for {path}, which holds {held}" if system else f"{path}, which holds {held}",
        "Name one of them (a dict key of compare), or give the file in a list to compare them all.",
        got_is_text=True,
    )


def read_per_user(
    path: str | Path,
    format: str | None = None,
    *,
    system: str | None = None,
    name: str | None = None,
    train: Any = None,
) -> RunData:
    """One system of a per-user file written by another tool, as a run that
    :func:`~recoeval_tracking.reporting.compare.compare` takes, and whose per-user values the
    functions of :mod:`recoeval_tracking.stats` take.

    Parameters
    ----------
    path : str or Path
        trec_eval ``-q`` output, ranx per-query JSON, PyTerrier ``perquery.csv``, LensKit's
        per-user frame (CSV or Parquet), a WarpRec per-user file, or a ``user, metric, value``
        / ``user, <metric>...`` table (:data:`FORMATS`).
    format : str, optional
        Force a format instead of recognising it by its content.
    system : str, optional
        The system to read from a file that holds several (PyTerrier's ``name`` column).
    name : str, optional
        The run's name (default: the system's).
    train : interactions, DataFrame or scipy.sparse matrix, optional
        The train data the tool's run was fitted on, for the users' train counts: a file holds
        none, so the report's slices by activity (``activity``, ``cold_warm``: ``n_train``) need
        it. An interactions container (``split.train``), a frame of one row per train entry with
        a user column (named as the file's may be) and optionally an item column (entries then
        count once per item), or a matrix whose row ``u`` is user id ``u``. A user of the file
        without a train entry counts 0; a ``train`` that holds none of the file's users is
        refused. The users' fingerprint stays that of their ids, so files read with and
        without ``train`` compare.

    Returns
    -------
    RunData
        With ``user_id`` (and ``n_train`` when ``train`` is given) and one column per metric.

    Examples
    --------
    >>> import recoeval_tracking as rt  # doctest: +SKIP
    >>> a = rt.read_per_user("bm25.txt")  # trec_eval -q output  # doctest: +SKIP
    >>> b = rt.read_per_user("dph.txt")  # doctest: +SKIP
    >>> rt.stats.paired_comparison(b.per_user["ndcg_at_10"], a.per_user["ndcg_at_10"])
    ... # doctest: +SKIP
    >>> rt.compare({"bm25": a, "dph": b}, slices=[{"kind": "activity"}])  # doctest: +SKIP
    """
    run = _pick(read_per_user_runs(path, format), system, path, _FUNC, "system")
    if name is not None:
        run.name = str(name)
    if train is not None:
        counts = _train_counts(train)
        keys = run.per_user["user_id"].astype(str).str.strip()
        if not keys.isin(counts.index).any():
            raise param_error(
                "train",
                _FUNC,
                "the train data of the file's users (their ids as in the file)",
                f"train users {_shown(counts.index)} for the file's {_shown(keys)}",
                got_is_text=True,
            )
        found = counts.reindex(keys).fillna(0).to_numpy(dtype=np.int64)
        run.per_user.insert(1, "n_train", found)
    return run


def _shown(ids: Iterable[Any]) -> str:
    some = sorted(map(str, ids))
    return ", ".join(some[:5]) + (", ..." if len(some) > 5 else "")


def _train_counts(train: Any) -> pd.Series:
    """Each user's train entries, by the user's id as text."""
    import scipy.sparse as sp

    from ..data import Interactions

    if isinstance(train, Interactions):
        ids, counts = train.user_ids, np.diff(train.matrix.indptr)
    elif isinstance(train, (sp.sparray, sp.spmatrix)):
        counts = np.diff(sp.csr_array(train).indptr)
        ids = np.arange(counts.size)
    elif isinstance(train, pd.DataFrame) and _column(train, _USER_COLUMNS) is not None:
        user = _column(train, _USER_COLUMNS)
        item = _column(train, ("item_id", "item", "itemid", "iid"))
        rows = train.drop_duplicates([user, item]) if item is not None else train
        per = rows.groupby(rows[user].astype(str).str.strip(), sort=False).size()
        return per.astype(np.int64)
    else:
        raise param_error(
            "train",
            _FUNC,
            "interactions, a DataFrame with a user column "
            f"({', '.join(_USER_COLUMNS)}) or a scipy.sparse matrix (users x items)",
            train,
        )
    keys = pd.Index(pd.Series(ids).astype(str).str.strip())
    return pd.Series(np.asarray(counts, dtype=np.int64), index=keys).groupby(level=0).sum()


def runs_of_file(
    path: str | Path, name: str | None, format: str | None, func: str
) -> list[RunData]:
    """The runs a per-user file stands for in :func:`compare`'s input: under a dict key
    (``name``), its one system named so, or the system of that name; in a list, all of them."""
    runs = read_per_user_runs(path, format, func=func, param="runs")
    if name is None:
        return runs
    if len(runs) == 1:
        runs[0].name = name
        return runs
    return [_pick(runs, name, path, func, "runs")]


def read_per_user_files(
    paths: Sequence[str | Path], format: str | None, base: Path, func: str
) -> list[RunData]:
    """Every system of each file of ``paths`` (relative ones taken from ``base``): the
    report's ``select.files``, in ``select.format``."""
    if format is not None and format not in FORMATS:
        raise param_error("select.format", func, f"one of {list(FORMATS)} or null", format)
    runs: list[RunData] = []
    for p in paths:
        path = Path(p) if Path(p).is_absolute() else base / p
        runs += read_per_user_runs(path, format, func=func, param="select.files")
    return runs


def check_same_users(runs: Sequence[RunData], func: str) -> None:
    """Refuse runs read from per-user files that hold different users, naming both files and
    the users only one of them holds (paired statistics pair a user's values)."""
    files = [r for r in runs if SOURCE_FORMAT_TAG in r.tags]
    if len(files) < 2:
        return
    first = files[0]
    users = set(first.per_user["user_id"].tolist())
    for other in files[1:]:
        theirs = set(other.per_user["user_id"].tolist())
        if theirs == users:
            continue
        only_a, only_b = users - theirs, theirs - users
        parts = [
            f"{len(ids)} only in {r.name} ({_shown(ids)})"
            for ids, r in ((only_a, first), (only_b, other))
            if ids
        ]
        raise InputError(
            f"The runs given to {func} are not comparable: {first.name} ({first.source}, "
            f"{len(users)} users) and {other.name} ({other.source}, {len(theirs)} users) hold "
            f"different users: {'; '.join(parts)}. Paired statistics need every system "
            "evaluated on the same users (for trec_eval -q, the same queries in every run): "
            "give files of the same users, or pass allow_mismatch=True (report config: "
            "allow_mismatch=true) to compare them anyway; the tables are then marked."
        )
