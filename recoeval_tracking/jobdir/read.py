"""Reading a job directory back: :func:`read_job_dir`, :class:`JobDir`, and
:func:`job_dir_state` (complete, cut off while written, written by hand).

The layout is described in :mod:`recoeval_tracking.jobdir.io`; the markers in
:mod:`recoeval_tracking.jobdir.markers`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._validation import param_error
from .markers import FILES, INCOMPLETE, UPLOADED_FILES, read_marker

__all__ = ["JobDir", "read_job_dir", "job_dir_state", "check_job_dir", "artifact_sizes"]

_FUNC = "read_job_dir"


@dataclass
class JobDir:
    """A job directory read back by :func:`read_job_dir`.

    Attributes
    ----------
    path : Path
    metrics : dict of str to float
        Everything in ``metrics.json`` (NaN for ``null``).
    metric_columns : list of str
        The per-user metric columns (their means are ``metrics[c]``).
    curves : pandas.DataFrame
        ``curves.csv`` (empty frame when the job has no curves).
    k : int
    topk_only : bool
    fingerprint : str
        Fingerprint of the metric definitions.
    definitions : dict
    job : dict
        ``job.json`` (``job_uid``, ``created_at``, ``package_version``, ``git_commit``...).
    per_user : pandas.DataFrame or None
        ``per_user.parquet``, a file or a folder of parts (None when read with
        ``per_user=False``).
    dataset, config : dict or None
    config_yaml : str or None
        The text of ``config.yaml``.
    overrides : list of str or None
    metric_fingerprints : dict of str to str
        One fingerprint per metric column; empty for folders written before they were recorded
        (readers then derive them from ``definitions``).
    """

    path: Path
    metrics: dict[str, float]
    metric_columns: list[str]
    curves: pd.DataFrame
    k: int
    topk_only: bool
    fingerprint: str
    definitions: dict[str, Any]
    job: dict[str, Any]
    per_user: pd.DataFrame | None = None
    dataset: dict[str, Any] | None = None
    config: dict[str, Any] | None = None
    config_yaml: str | None = None
    overrides: list[str] | None = None
    plots: list[Path] = field(default_factory=list)
    metric_fingerprints: dict[str, str] = field(default_factory=dict)

    @property
    def job_uid(self) -> str:
        """The uid written at creation; for a directory written by hand (no ``job.json``), a
        uid derived from its content (``content-<sha256>``), so it too is uploaded once."""
        return str(self.job.get("job_uid", ""))

    @property
    def means(self) -> dict[str, float]:
        """Means at K of each metric column."""
        return {c: self.metrics.get(c, math.nan) for c in self.metric_columns}

    @property
    def curve_names(self) -> list[str]:
        """Curves of means (``ndcg_at_k``...), without their CI columns."""
        return [
            c
            for c in self.curves.columns
            if c != "k" and not c.endswith("_ci95_low") and not c.endswith("_ci95_high")
        ]


def job_dir_state(path: str | Path) -> str:
    """What ``path`` holds: ``"complete"`` (written by
    :func:`~recoeval_tracking.jobdir.write_job_dir` to the end), ``"incomplete"`` (its writing
    was cut off: a killed job, a full disk), ``"handwritten"`` (``metrics.json`` and
    ``definitions.json`` without ``job.json``) or ``"missing"`` (no results)."""
    root = Path(path)
    job_path = root / FILES["job"]
    try:
        started = read_marker(root / INCOMPLETE)
    except ValueError:
        started = {}
    if started is not None:
        try:
            job = json.loads(job_path.read_text(encoding="utf-8")) if job_path.is_file() else {}
        except ValueError:
            job = {}
        done = (
            isinstance(job, dict)
            and job.get("job_uid")
            and job.get("job_uid") == started.get("job_uid")
        )
        return "complete" if done else "incomplete"
    if job_path.is_file():
        return "complete"
    if all((root / FILES[n]).is_file() for n in ("metrics", "definitions")):
        return "handwritten"
    return "missing"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise param_error(
            "path",
            _FUNC,
            "a job directory with readable files",
            f"{path.name} of '{path.parent}', which is not valid JSON ({err})",
            "Run the job again, or remove the folder.",
            got_is_text=True,
        ) from None


def _content_uid(root: Path) -> str:
    """A uid for a directory written by hand: the hash of its results files."""
    h = hashlib.sha256()
    for name in ("metrics", "definitions", "per_user", "curves"):
        p = root / FILES[name]
        if p.is_file():
            h.update(name.encode() + b"\0" + p.read_bytes())
    return "content-" + h.hexdigest()[:24]


def _check_state(root: Path) -> str:
    if root.exists() and not root.is_dir():  # its markers would be looked for inside a file
        raise param_error(
            "path",
            _FUNC,
            "a job directory (a folder)",
            f"'{root}', which is a file",
            "Give the job's folder, the one that holds metrics.json.",
            got_is_text=True,
        )
    state = job_dir_state(root)
    if state == "incomplete":
        raise param_error(
            "path",
            _FUNC,
            "a complete job directory",
            f"'{root}', marked {INCOMPLETE}: its writing was cut off (a killed job or a full disk)",
            "Run the job again, or remove the folder.",
            got_is_text=True,
        )
    if state == "missing":
        missing = [FILES[n] for n in ("metrics", "definitions") if not (root / FILES[n]).is_file()]
        raise param_error(
            "path",
            _FUNC,
            f"a job directory written by write_job_dir (with {', '.join(missing)})",
            str(root),
            "Write it with recoeval_tracking.jobdir.write_job_dir(results, path).",
        )
    return state


def _read_parquet(path: Path) -> pd.DataFrame:
    """The per-user table: one file, or a folder of parts (a distributed evaluation) read in
    the order of their names (the order of the rows)."""
    try:
        if path.is_dir():
            parts = sorted(path.glob("part-*.parquet"))
            if not parts:
                raise FileNotFoundError(f"no part-*.parquet in {path.name}/")
            return pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
        return pd.read_parquet(path)
    except Exception as err:  # noqa: BLE001 - pyarrow raises several types for a bad file
        raise param_error(
            "path",
            _FUNC,
            "a job directory with readable files",
            f"{path.name} of '{path.parent}', which cannot be read "
            f"({type(err).__name__}: {str(err)[:200]})",
            "Run the job again, or remove the folder.",
            got_is_text=True,
        ) from None


def _read_config(root: Path) -> tuple[str | None, dict | None, list[str] | None]:
    """``config.yaml`` (text and dict) and ``overrides.yaml``, each None when absent."""
    config_path = root / FILES["config"]
    overrides_path = root / FILES["overrides"]
    config_yaml = config_path.read_text(encoding="utf-8") if config_path.is_file() else None
    config = overrides = None
    if config_yaml is not None:
        loaded = _load_yaml(config_yaml)
        config = loaded if isinstance(loaded, dict) else None
    if overrides_path.is_file():
        overrides = [str(o) for o in (_load_yaml(overrides_path.read_text(encoding="utf-8")) or [])]
    return config_yaml, config, overrides


def _load_yaml(text: str) -> Any:
    """``yaml.safe_load`` of ``text``, with libyaml's parser when PyYAML has it (the same
    safe loader, about ten times faster than the pure-Python one)."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def read_job_dir(path: str | Path, *, per_user: bool = True) -> JobDir:
    """Read a job directory written by :func:`~recoeval_tracking.jobdir.write_job_dir`.

    Parameters
    ----------
    path : str or Path
    per_user : bool
        Also read ``per_user.parquet`` (default True; the tracking layer skips it, it uploads
        the file as it is).

    Returns
    -------
    JobDir

    Raises
    ------
    InputError
        ``path`` is not a job directory, was cut off while written (``INCOMPLETE``), or holds an
        unreadable file; the message names it.
    """
    if not isinstance(path, (str, Path)):
        raise param_error("path", _FUNC, "a str or pathlib.Path", path)
    root = Path(path)
    state = _check_state(root)
    metrics_file = _read_json(root / FILES["metrics"])
    if not isinstance(metrics_file, dict):
        raise param_error(
            "path", _FUNC, "a job directory whose metrics.json holds an object", str(root)
        )
    metrics = {k: (math.nan if v is None else float(v)) for k, v in metrics_file.items()}
    definitions_file = _read_json(root / FILES["definitions"])
    curves_path = root / FILES["curves"]
    curves = (
        pd.read_csv(curves_path)
        if curves_path.is_file()
        else pd.DataFrame({"k": np.array([], dtype=np.int64)})
    )
    job = (
        _read_json(root / FILES["job"]) if state == "complete" else {"job_uid": _content_uid(root)}
    )
    dataset_path = root / FILES["dataset"]
    config_yaml, config, overrides = _read_config(root)
    plots_dir = root / FILES["plots"]
    return JobDir(
        path=root,
        metrics=metrics,
        metric_columns=list(definitions_file.get("metric_columns", [])),
        curves=curves,
        k=int(definitions_file.get("k", 0)),
        topk_only=bool(definitions_file.get("topk_only", False)),
        fingerprint=str(definitions_file.get("fingerprint", "")),
        definitions=definitions_file.get("definitions", {}) or {},
        job=job,
        per_user=_read_parquet(root / FILES["per_user"]) if per_user else None,
        dataset=_read_json(dataset_path) if dataset_path.is_file() else None,
        config=config,
        config_yaml=config_yaml,
        overrides=overrides,
        plots=sorted(plots_dir.glob("*.png")) if plots_dir.is_dir() else [],
        metric_fingerprints={
            str(k): str(v) for k, v in (definitions_file.get("metric_fingerprints") or {}).items()
        },
    )


# ---------------------------------------------------------------------------------------------
# Checking a whole folder before it is uploaded
# ---------------------------------------------------------------------------------------------

_PNG = b"\x89PNG\r\n\x1a\n"


def _uploaded_paths(root: Path) -> list[Path]:
    """Every path of ``root`` that an upload sends: its files, the parts of a per-user folder
    and the entries of ``plots/`` (links included: they are refused, not followed)."""
    out = []
    for name in UPLOADED_FILES:
        p = root / name
        if p.is_symlink() or p.is_file():
            out.append(p)
        elif p.is_dir():
            out += sorted(p.iterdir())
    plots = root / FILES["plots"]
    if plots.is_dir() and not plots.is_symlink():
        out += sorted(plots.iterdir())
    elif plots.is_symlink():
        out.append(plots)
    return out


def artifact_sizes(root: str | Path) -> dict[str, int]:
    """The size in bytes of every file of the job directory an upload sends (but ``job.json``),
    by its path relative to ``root`` (``per_user.parquet``, ``plots/curves.png``...): recorded
    in ``job.json`` when the folder is written, compared by :func:`check_job_dir`."""
    base = Path(root)
    return {
        p.relative_to(base).as_posix(): p.stat().st_size
        for p in _uploaded_paths(base)
        if p.name != FILES["job"] and p.is_file() and not p.is_symlink()
    }


#: The files :func:`read_job_dir` parses (so :func:`check_job_dir` does not parse them again).
_READ_BY_READ_JOB_DIR = frozenset(
    FILES[n] for n in ("metrics", "definitions", "curves", "dataset", "config", "overrides", "job")
)


def _problem(root: Path, path: Path, sizes: dict[str, Any], parsed: bool = False) -> str | None:
    """What is wrong with one file an upload would send (None when it reads well); ``parsed``:
    its content was read well already, only its kind and size are left to check."""
    rel = path.relative_to(root).as_posix()
    if path.is_symlink():
        return (
            f"{rel} is a symbolic link (to {os.readlink(path)}); only regular files inside "
            "the job directory are uploaded"
        )
    if not path.is_file():
        return f"{rel} is not a regular file"
    size = path.stat().st_size
    want = sizes.get(rel)
    if isinstance(want, int) and want != size:
        return f"{rel} has {size} bytes where job.json recorded {want} (cut off or changed)"
    if parsed:
        return None
    try:
        if path.suffix == ".json":
            json.loads(path.read_text(encoding="utf-8"))
        elif path.suffix == ".yaml":
            _load_yaml(path.read_text(encoding="utf-8"))
        elif path.suffix == ".csv":
            pd.read_csv(path)
        elif path.suffix == ".parquet":
            import pyarrow.parquet as pq

            pq.ParquetFile(path).metadata  # noqa: B018 - opening reads the footer
        elif path.suffix == ".png":
            with path.open("rb") as f:
                if f.read(8) != _PNG:
                    return f"{rel} is not a PNG image"
        else:
            with path.open("rb") as f:
                f.read(1)
    except Exception as err:  # noqa: BLE001 - every reader raises its own types
        return f"{rel} cannot be read ({type(err).__name__}: {' '.join(str(err).split())[:200]})"
    return None


def check_job_dir(path: str | Path) -> JobDir:
    """Check that every file an upload of the job directory ``path`` would send can be read as
    it is, before anything is sent: the JSON files parse, the YAML files load, ``curves.csv``
    reads, every Parquet file opens, every plot is a PNG, no file is a symbolic link (its
    target could lie outside the folder), and each file has the size ``job.json`` recorded
    for it (folders written before sizes were recorded skip that check).

    Returns
    -------
    JobDir
        The folder read (without its per-user table).

    Raises
    ------
    InputError
        Naming every file that fails, with the reason; nothing is changed in the folder.
    """
    root = Path(path)
    try:
        job = read_job_dir(root, per_user=False)
        sizes = job.job.get("files") if isinstance(job.job.get("files"), dict) else {}
        paths = _uploaded_paths(root)
        problems = [
            text
            for p in paths
            if (
                text := _problem(
                    root, p, sizes, p.parent == root and p.name in _READ_BY_READ_JOB_DIR
                )
            )
            is not None
        ]
        sent = {p.relative_to(root).as_posix() for p in paths}
        for rel in sorted(set(sizes) - sent):  # recorded when written, not uploadable now
            gone = not ((root / rel).exists() or (root / rel).is_symlink())
            problems.append(f"{rel} is missing" if gone else f"{rel} is not a regular file")
    except OSError as err:  # a folder or file this user may not read
        problems = [f"it cannot be read ({type(err).__name__}: {err})"]
    if problems:
        raise param_error(
            "path",
            "check_job_dir",
            "a job directory whose files can all be uploaded as they are",
            f"'{root}', where " + "; ".join(problems),
            "Nothing was uploaded. Run the job again, or remove the folder.",
            got_is_text=True,
        )
    return job
