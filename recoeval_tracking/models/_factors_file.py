"""Precomputed factors loaded from ``.npz``, ``.npy`` or ``.parquet`` files, matched to the
dataset by id."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._validation import InputError, check_file, param_error
from ..scores import FactorScores, ScoreSource
from ._base import Model

__all__ = ["FactorsFileModel"]

logger = logging.getLogger(__name__)

_FUNC = "FactorsFileModel"
_PATH_FIX = "Check the path (relative paths are read from the working directory)."


class FactorsFileModel(Model):
    r"""Scores :math:`\hat r_{ui} = a_u^\top b_i (+ \beta_i)` from factors trained elsewhere.

    Either one ``.npz`` archive (``path``) with the keys

    * ``user_factors`` (m x p) and ``item_factors`` (n x p), required;
    * ``item_biases`` (n,), optional;
    * ``user_ids`` (m,) and ``item_ids`` (n,), optional: the original id of each row;

    or two files (``user_factors`` and ``item_factors``, plus an optional ``item_biases``), which
    carry no ids: ``.npy`` matrices, or Parquet files with one row per user or item in the
    dataset's order (the factors in one list column or one float column per factor, as
    :class:`~recoeval_tracking.data.FactorRows` reads them).

    When the file has ids and ``fit`` is given the dataset's ``user_ids`` / ``item_ids``, rows are
    matched by id: dataset users or items missing from the file get zero factors (and a zero
    bias), with a logged warning that counts them; rows of the file that the dataset lacks are
    ignored. Otherwise the factor shapes must equal the training matrix's shape exactly. ``fit``
    uses the training matrix for nothing else.

    Every parameter is a file path (annotated ``str | Path``): in a config, a relative path is
    taken from the directory the command was started from. None (the default) means "not
    given".

    Parameters
    ----------
    path : str or Path, optional
        An ``.npz`` archive.
    user_factors, item_factors : str or Path, optional
        Two ``.npy`` or ``.parquet`` files, instead of ``path``.
    item_biases : str or Path, optional
        An ``.npy`` file of item biases, with ``user_factors`` / ``item_factors``.
    """

    name = "factors_file"

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        user_factors: str | Path | None = None,
        item_factors: str | Path | None = None,
        item_biases: str | Path | None = None,
    ) -> None:
        super().__init__()
        for name, value in (
            ("path", path),
            ("user_factors", user_factors),
            ("item_factors", item_factors),
            ("item_biases", item_biases),
        ):
            if value is not None and not isinstance(value, (str, Path)):
                raise param_error(name, _FUNC, "a file path (str)", value)
        if path is not None:
            if user_factors is not None or item_factors is not None or item_biases is not None:
                raise InputError(
                    f"{_FUNC} takes either 'path' (an .npz archive) or 'user_factors' and "
                    f"'item_factors' (.npy files), not both. Got path={str(path)!r} and "
                    f"user_factors={user_factors!r}, item_factors={item_factors!r}, "
                    f"item_biases={item_biases!r} instead."
                )
            check_file(path, "path", _FUNC, suffix=".npz", fix=_PATH_FIX)
        else:
            if user_factors is None or item_factors is None:
                raise InputError(
                    f"{_FUNC} needs either 'path' (an .npz archive with user_factors and "
                    f"item_factors) or both 'user_factors' and 'item_factors' (.npy files). "
                    f"Got user_factors={user_factors!r} and item_factors={item_factors!r} instead."
                )
            _check_factor_file(user_factors, "user_factors")
            _check_factor_file(item_factors, "item_factors")
            if item_biases is not None:
                check_file(item_biases, "item_biases", _FUNC, suffix=".npy", fix=_PATH_FIX)
        self.path = None if path is None else str(path)
        self.user_factors = None if user_factors is None else str(user_factors)
        self.item_factors = None if item_factors is None else str(item_factors)
        self.item_biases = None if item_biases is None else str(item_biases)
        self.user_factors_: np.ndarray | None = None
        self.item_factors_: np.ndarray | None = None
        self.item_biases_: np.ndarray | None = None

    def _load(self) -> tuple[dict[str, np.ndarray], str]:
        if self.path is not None:
            with np.load(self.path, allow_pickle=False) as z:
                arrays = {key: np.asarray(z[key]) for key in z.files}
            for key in ("user_factors", "item_factors"):
                if key not in arrays:
                    raise InputError(
                        f"The 'path' parameter of {_FUNC} must name an .npz archive with the key "
                        f"'{key}'. Got {self.path!r} with keys {sorted(arrays)} instead."
                    )
            return arrays, self.path
        from ..data._partitioned import read_whole

        arrays = {
            "user_factors": read_whole(self.user_factors, name="user_factors", func=_FUNC),
            "item_factors": read_whole(self.item_factors, name="item_factors", func=_FUNC),
        }
        if self.item_biases is not None:
            arrays["item_biases"] = read_whole(self.item_biases, name="item_biases", func=_FUNC)
        return arrays, f"{self.user_factors!r} / {self.item_factors!r}"

    def _fit(
        self, X: sp.csr_array, user_ids: np.ndarray | None, item_ids: np.ndarray | None
    ) -> None:
        arrays, where = self._load()
        A = _numeric(arrays["user_factors"], "user_factors", where, 2)
        B = _numeric(arrays["item_factors"], "item_factors", where, 2)
        if A.shape[1] != B.shape[1]:
            raise InputError(
                f"The factors in {where} (read by {_FUNC}) must have the same number of columns. "
                f"Got user_factors of shape {A.shape} and item_factors of shape {B.shape} instead."
            )
        bias = None
        if "item_biases" in arrays:
            bias = _numeric(arrays["item_biases"], "item_biases", where, 1)
            if bias.shape[0] != B.shape[0]:
                raise InputError(
                    f"The 'item_biases' in {where} (read by {_FUNC}) must have one value per row "
                    f"of item_factors ({B.shape[0]}). Got shape {bias.shape} instead."
                )
        m, n = X.shape
        A, _ = _match_rows(A, arrays.get("user_ids"), user_ids, m, "user", where)
        B, rows = _match_rows(B, arrays.get("item_ids"), item_ids, n, "item", where)
        if bias is not None:
            bias = _take_rows(bias, rows)
        self.user_factors_, self.item_factors_, self.item_biases_ = A, B, bias

    def _score_source(self) -> ScoreSource:
        return FactorScores(
            self.user_factors_,
            self.item_factors_,
            self.item_biases_,
            func="FactorsFileModel.score_source",
        )


def _numeric(a: np.ndarray, key: str, where: str, ndim: int) -> np.ndarray:
    if a.ndim != ndim or not (
        np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)
    ):
        raise InputError(
            f"The '{key}' in {where} (read by {_FUNC}) must be a {ndim}-d numeric array. "
            f"Got shape {a.shape} and dtype {a.dtype} instead."
        )
    if not np.all(np.isfinite(a)):
        raise InputError(
            f"The '{key}' in {where} (read by {_FUNC}) must be free of NaN and infinite values. "
            f"Got {int(np.sum(~np.isfinite(a)))} such values instead."
        )
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float64)
    return a


def _match_rows(
    F: np.ndarray,
    file_ids: np.ndarray | None,
    data_ids: np.ndarray | None,
    n: int,
    kind: str,
    where: str,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Rows of ``F`` in the dataset's order, and the file row of each (-1 for missing)."""
    if file_ids is None or data_ids is None:
        if F.shape[0] != n:
            hint = f"Store '{kind}_ids' in the .npz and pass {kind}_ids to fit to match rows by id."
            raise InputError(
                f"The {kind} factors in {where} (read by {_FUNC}) must have one row per {kind} "
                f"of the training data: expected {n} rows, got shape {F.shape} instead. {hint}"
            )
        return F, None
    file_ids = np.asarray(file_ids)
    if file_ids.ndim != 1 or file_ids.shape[0] != F.shape[0]:
        raise InputError(
            f"The '{kind}_ids' in {where} (read by {_FUNC}) must be 1-d with one id per row of "
            f"{kind}_factors ({F.shape[0]}). Got shape {file_ids.shape} instead."
        )
    index = pd.Index(file_ids)
    if not index.is_unique:
        dup = index[index.duplicated()][:3].tolist()
        raise InputError(
            f"The '{kind}_ids' in {where} (read by {_FUNC}) must be unique. "
            f"Got repeated ids such as {dup} instead."
        )
    rows = index.get_indexer(pd.Index(data_ids))
    missing = int(np.sum(rows < 0))
    if missing == n and n > 0:
        raise InputError(
            f"None of the {n} dataset {kind} ids was found among the '{kind}_ids' in {where} "
            f"(read by {_FUNC}). Got file ids of dtype {file_ids.dtype} (e.g. "
            f"{file_ids[:3].tolist()}) and dataset ids of dtype {np.asarray(data_ids).dtype} "
            f"(e.g. {np.asarray(data_ids)[:3].tolist()}) instead; check that both use the same ids."
        )
    if missing:
        logger.warning(
            "%d of %d %ss of the dataset are missing from %s; they get zero factors.",
            missing,
            n,
            kind,
            where,
        )
    return _take_rows(F, rows), rows


def _take_rows(F: np.ndarray, rows: np.ndarray | None) -> np.ndarray:
    """``F[rows]`` with zero rows where ``rows`` is -1 (``F`` itself when ``rows`` is None)."""
    if rows is None:
        return F
    out = np.zeros((rows.shape[0],) + F.shape[1:], dtype=F.dtype)
    ok = rows >= 0
    out[ok] = F[rows[ok]]
    return out


def _check_factor_file(path: str | Path, name: str) -> None:
    """An existing ``.npy`` or ``.parquet`` file."""
    if Path(path).suffix.lower() not in (".npy", ".parquet"):
        raise param_error(name, _FUNC, "a path to a .npy or .parquet file", str(path))
    check_file(path, name, _FUNC, suffix=_suffix(path), fix=_PATH_FIX)


def _suffix(path: str | Path) -> str:
    """The suffix a factor file must have: ``.parquet`` when it has it, else ``.npy``."""
    return ".parquet" if str(path).lower().endswith(".parquet") else ".npy"
