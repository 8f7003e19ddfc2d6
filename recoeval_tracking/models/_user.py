"""The user's own model: any object that keeps the small, duck-typed model protocol.

The protocol, checked before any data is read (the methods) and right after ``fit`` (what they
return), before any evaluation starts:

* ``fit(train)`` learns from ``train``, a ``scipy.sparse.csr_array`` of shape
  (n_users, n_items) in the split's index space (rows and columns are the dataset's users and
  items in the order of its id maps; stored values are the interactions' values, sorted
  indices, no duplicates), and returns the fitted model (returning ``None`` is taken as
  "fitted in place"). When ``fit`` also accepts ``user_ids`` and ``item_ids`` (as keywords, or
  ``**kwargs``), it gets the original id of every row and column too;
* then any one of, looked for in this order:

  - ``score_users(user_indices) -> (len(user_indices), n_items)`` array of scores (higher is
    better; numpy, anything ``numpy.asarray`` reads, or a CuPy / PyTorch CUDA array on the GPU
    backend), called one bounded block of users at a time. A ``score_users(user_indices,
    out=None)`` gets the CPU engine's block buffer as ``out``: writing the scores there and
    returning it (or None) spares an array and a copy per block. The CPU engine calls it one
    block at a time unless the model says ``score_users_thread_safe = True`` (then from all its
    threads at once, each with single-threaded BLAS);
  - ``factors() -> (A, B)`` or ``(A, B, item_biases)``: user factors (n_users x p), item factors
    (n_items x p), optional item biases (n_items,); scores are ``A @ B.T + item_biases``;
  - ``recommend(user_indices, k) -> lists``: for each user, up to ``k`` item indices best first
    (a list of lists, or a 2-d integer array padded with -1). Only the top-K metrics are defined
    for such lists; the whole-ranking ones are left out and the run says so.

:class:`UserModel` adapts such an object to what the evaluator takes, so the app and
:func:`recoeval_tracking.evaluate` see the user's model exactly as they see the baselines.
Errors are one paragraph naming the class, the method and what was expected:
:class:`ModelProtocolError` when the class breaks the protocol (a usage error), and
:class:`ModelCodeError` when the user's own code raised (with its message and the file and
line where it was raised).
"""

from __future__ import annotations

import inspect
import sys
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import InputError, describe
from ..scores import CallableScores, RankedLists, takes_out
from ._base import Model

#: Users per call of a model's ``recommend``.
_RECOMMEND_BLOCK = 4096

__all__ = [
    "UserModel",
    "UserScores",
    "ModelProtocolError",
    "ModelCodeError",
    "PROTOCOL_METHODS",
    "protocol_method",
    "check_protocol",
    "raised_where",
]

#: The scoring methods of the protocol, in the order they are looked for.
PROTOCOL_METHODS = ("score_users", "factors", "recommend")

_EXPECTED = {
    "score_users": "an array of shape (len(user_indices), n_items) = {shape}",
    "score_users:dtype": "real numbers (a bool, int or float array of scores)",
    "factors": "a tuple (A, B) or (A, B, item_biases) with A of shape (n_users, p) = "
    "({n_users}, p), B of shape (n_items, p) = ({n_items}, p) and item_biases of "
    "shape (n_items,)",
    "recommend": "one list of at most k = {k} item indices in [0, {n_items}) per user, best "
    "first (a list of lists, or a 2-d integer array padded with -1), for the "
    "{n} users asked",
}


class ModelProtocolError(InputError):
    """The user's model class does not keep the model protocol (a method is missing, or returns
    the wrong shape or type). The message names the class, the method and what was expected."""


class ModelCodeError(RuntimeError):
    """The user's own code raised while the model was built, fitted or asked for scores.

    Attributes
    ----------
    where : str
        ``file:line in function`` of the innermost frame of the user's code, or ``""``.
    """

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(message)
        self.where = where


def qualified_name(obj: Any) -> str:
    """``module.Class`` of an object's class (or of a class)."""
    cls = obj if isinstance(obj, type) else type(obj)
    module = getattr(cls, "__module__", "") or ""
    return f"{module}.{cls.__qualname__}" if module and module != "builtins" else cls.__qualname__


def raised_where(err: BaseException) -> str:
    """Where ``err`` was raised: ``file:line in function`` of its innermost frame outside this
    package (the user's code), or of the innermost frame when every frame is ours."""
    frames = traceback.extract_tb(err.__traceback__)
    if not frames:
        return ""
    ours = "recoeval_tracking"
    outside = [
        f
        for f in frames
        if f"{ours}/" not in f.filename.replace("\\", "/")
        and "/hydra/" not in f.filename.replace("\\", "/")
    ]
    frame = (outside or frames)[-1]
    return f"{frame.filename}:{frame.lineno} in {frame.name}"


def code_error(err: BaseException, what: str) -> ModelCodeError:
    """A :class:`ModelCodeError` for an exception the user's code raised during ``what``
    (e.g. ``EASE.fit``), with its type, message and place."""
    where = raised_where(err)
    at = f" (raised at {where})" if where else ""
    text = " ".join(str(err).split()) or type(err).__name__
    return ModelCodeError(f"{what} raised {type(err).__name__}: {text}{at}.", where)


def protocol_method(obj: Any) -> str | None:
    """The first scoring method of :data:`PROTOCOL_METHODS` that ``obj`` has, or None."""
    for name in PROTOCOL_METHODS:
        if callable(getattr(obj, name, None)):
            return name
    return None


def check_protocol(obj: Any, where: str = "") -> str:
    """Check that ``obj`` has ``fit`` and one scoring method; return that method's name.

    Raises
    ------
    ModelProtocolError
        Naming the class, what is missing and the protocol.
    """
    cls = qualified_name(obj)
    ctx = f" ({where})" if where else ""
    if isinstance(obj, type):
        raise ModelProtocolError(
            f"The model {cls}{ctx} must be an instance with fit(train); got the class itself. "
            "A config's _target_ names the class and its other keys are the arguments of its "
            "constructor."
        )
    missing = [] if callable(getattr(obj, "fit", None)) else ["fit(train)"]
    method = protocol_method(obj)
    if method is None:
        missing.append("one of score_users(user_indices), factors() or recommend(user_indices, k)")
    if missing:
        raise ModelProtocolError(
            f"The model {cls}{ctx} must have {' and '.join(missing)}. It has none of them "
            f"(its public methods: {_public_methods(obj) or 'none'}). The protocol: "
            "fit(train) returns the fitted model; then score_users(user_indices) returns a "
            "(len(user_indices), n_items) score array, or factors() returns (A, B[, "
            "item_biases]), or recommend(user_indices, k) returns item index lists."
        )
    return method


def _public_methods(obj: Any) -> str:
    names = [n for n in dir(obj) if not n.startswith("_") and callable(getattr(obj, n, None))]
    return ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")


def _takes_ids(fit: Callable[..., Any]) -> bool:
    try:
        params = inspect.signature(fit).parameters.values()
    except (TypeError, ValueError):
        return False
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return True
    names = {p.name for p in params}
    return {"user_ids", "item_ids"} <= names


def _shape_of(x: Any) -> tuple[int, ...] | None:
    shape = getattr(x, "shape", None)
    try:
        return tuple(int(s) for s in shape) if shape is not None else None
    except TypeError:
        return None


def _is_float32(x: Any) -> bool:
    return "float32" in str(getattr(x, "dtype", ""))


class UserModel(Model):
    """Adapter of a user's model object to the evaluator's inputs.

    Parameters
    ----------
    model : object
        An instance with ``fit(train)`` and one of ``score_users``, ``factors``,
        ``recommend`` (see the module docstring).
    label : str, optional
        The model's name in records and run names (the config option, e.g. ``ease``); default
        the class name.
    where : str, optional
        Where the model came from, for messages (``model=ease, _target_ my_package.EASE``).

    Raises
    ------
    ModelProtocolError
        When ``model`` lacks ``fit`` or every scoring method.
    """

    def __init__(self, model: Any, *, label: str | None = None, where: str = "") -> None:
        super().__init__()
        self.method = check_protocol(model, where)
        self.model = model
        self.name = label or type(model).__name__  # type: ignore[misc]
        self.where = where
        self.cls = type(model).__name__

    @classmethod
    def fitted(
        cls, model: Any, n_users: int, n_items: int, *, label: str | None = None, where: str = ""
    ) -> UserModel:
        """A model the user fitted already, on a (``n_users``, ``n_items``) train matrix."""
        self = cls(model, label=label, where=where)
        self.n_users_, self.n_items_ = int(n_users), int(n_items)
        self._fitted = True
        return self

    # -- fit -----------------------------------------------------------------------------------
    def _fit(
        self, X: sp.csr_array, user_ids: np.ndarray | None, item_ids: np.ndarray | None
    ) -> None:
        fit = self.model.fit
        kwargs = {}
        if _takes_ids(fit) and user_ids is not None and item_ids is not None:
            kwargs = {"user_ids": user_ids, "item_ids": item_ids}
        try:
            fitted = fit(X, **kwargs)
        except Exception as err:  # noqa: BLE001 - the user's code: any exception, reported
            raise code_error(err, f"{self.cls}.fit ({self._ctx()})") from err
        if fitted is not None and fitted is not self.model:
            method = protocol_method(fitted)
            if method is None:
                raise ModelProtocolError(
                    f"{self.cls}.fit ({self._ctx()}) must return the fitted model (or "
                    f"None when it fits in place). Got {describe(fitted)} instead, which has "
                    "none of score_users, factors or recommend. End fit with 'return self'."
                )
            self.model, self.method = fitted, method

    def _ctx(self) -> str:
        return self.where or f"model {qualified_name(self.model)}"

    # -- what the evaluator takes -------------------------------------------------------------
    def eval_inputs(self, k: int, users: np.ndarray | None = None) -> dict[str, Any]:
        """The keyword arguments of :func:`recoeval_tracking.evaluate` that give this model's
        scores: ``scorer`` (a :class:`UserScores`), ``A``/``B``/
        ``item_biases``, or ``ranked`` (top-``k`` lists of ``users``; every user when None).

        The outputs are checked on the first users before anything is evaluated.
        """
        if not self._fitted:
            self.score_source()  # raises NotFittedError with the standard message
        n_users, n_items = int(self.n_users_ or 0), int(self.n_items_ or 0)
        probe = np.arange(min(2, n_users), dtype=np.int64)
        if self.method == "score_users":
            got = self._call("score_users", probe)
            self._check_scores(got, len(probe), n_items)
            source = UserScores(
                self._scorer(n_items),
                n_items,
                dtype=np.float32 if _is_float32(got) else np.float64,
                func=f"{self.cls}.score_users",
            )
            source.thread_safe = self._thread_safe()
            return {"scorer": source}
        if self.method == "factors":
            got = self._call("factors")
            ok = isinstance(got, (tuple, list)) and len(got) in (2, 3)
            shapes = [_shape_of(x) for x in got] if ok else []
            ok = (
                ok
                and shapes[0] is not None
                and shapes[1] is not None
                and len(shapes[0]) == 2
                and len(shapes[1]) == 2
                and shapes[0][0] == n_users
                and shapes[1][0] == n_items
                and shapes[0][1] == shapes[1][1]
                and (len(got) == 2 or got[2] is None or shapes[2] == (n_items,))
            )
            self._expect(ok, "factors", got, n_users=n_users, n_items=n_items)
            return {"A": got[0], "B": got[1], "item_biases": got[2] if len(got) == 3 else None}
        return {"ranked": self._ranked(k, n_users, n_items, users)}

    def _thread_safe(self) -> bool:
        """The model's ``score_users_thread_safe`` (False when it has none)."""
        safe = getattr(self.model, "score_users_thread_safe", False)
        if not isinstance(safe, (bool, np.bool_)):
            raise ModelProtocolError(
                f"{self.cls}.score_users_thread_safe ({self._ctx()}) must be True or False. "
                f"Got {safe!r} instead."
            )
        return bool(safe)

    def _score_source(self) -> Any:
        if self.method == "recommend":
            raise ModelProtocolError(
                f"{self.cls} ({self._ctx()}) recommends lists: its lists depend on K, so "
                "ask for them with eval_inputs(k) (the app and evaluate do)."
            )
        inputs = self.eval_inputs(1)
        if "scorer" in inputs:
            return inputs["scorer"]
        from ..scores import FactorScores

        return FactorScores(
            inputs["A"], inputs["B"], inputs["item_biases"], func=f"{self.cls}.factors"
        )

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(self.model, method)(*args, **kwargs)
        except Exception as err:  # noqa: BLE001 - the user's code: any exception, reported
            raise code_error(err, f"{self.cls}.{method} ({self._ctx()})") from err

    def _scorer(self, n_items: int) -> Callable[..., Any]:
        def scorer(user_indices: np.ndarray) -> Any:
            got = self._call("score_users", user_indices)
            self._check_scores(got, len(user_indices), n_items)
            return got

        def scorer_out(user_indices: np.ndarray, out: np.ndarray | None = None) -> Any:
            # the model writes into the engine's block buffer: None back means "written there"
            got = self._call("score_users", user_indices, **({} if out is None else {"out": out}))
            if got is None and out is not None:
                return None
            self._expect(
                _shape_of(got) == (len(user_indices), n_items),
                "score_users",
                got,
                shape=(len(user_indices), n_items),
            )
            return got

        return scorer_out if takes_out(self.model.score_users) else scorer

    def _check_scores(self, got: Any, n_users: int, n_items: int) -> None:
        """``score_users``'s output: its shape, then real numbers (strings, objects or complex
        values would fail, or lose their imaginary part, in the engine)."""
        self._expect(
            _shape_of(got) == (n_users, n_items), "score_users", got, shape=(n_users, n_items)
        )
        self._expect(_real_dtype(got), "score_users:dtype", got)

    def _expect(
        self, ok: bool, method: str, got: Any, shown: str | None = None, **fmt: Any
    ) -> None:
        if ok:
            return
        expected = _EXPECTED[method].format(
            **{
                "shape": None,
                "n_users": self.n_users_,
                "n_items": self.n_items_,
                "k": None,
                "n": None,
                **fmt,
            }
        )
        method = method.split(":")[0]
        if shown is None:
            shown = (
                f"a tuple of {', '.join(_describe(x) for x in got)}"
                if isinstance(got, (tuple, list)) and method == "factors"
                else _describe(got)
            )
        raise ModelProtocolError(
            f"{self.cls}.{method} ({self._ctx()}) must return {expected}. Got {shown} instead."
        )

    def _ranked(self, k: int, n_users: int, n_items: int, users: np.ndarray | None) -> RankedLists:
        asked = (
            np.arange(n_users, dtype=np.int64)
            if users is None
            else np.asarray(users, dtype=np.int64)
        )
        lists = np.full((n_users, k), -1, dtype=np.int64)
        for start in range(0, asked.shape[0], _RECOMMEND_BLOCK):
            block = asked[start : start + _RECOMMEND_BLOCK]
            lists[block] = self._lists(self._call("recommend", block, k), block, k, n_items)
        return RankedLists(lists, func=f"{self.cls}.recommend")

    def _lists(self, got: Any, block: np.ndarray, k: int, n_items: int) -> np.ndarray:
        """The lists ``recommend`` returned for ``block``, checked: one per user, integer item
        indices in [0, n_items) or -1 (padding, dropped); any other value is refused with the
        user and the value, never dropped."""
        fmt = {"k": k, "n_items": n_items, "n": len(block)}
        shown = None
        try:
            if len(got) != len(block):
                raise ValueError
            out = np.full((len(block), k), -1, dtype=np.int64)
            for r, row in enumerate(got):
                arr = np.asarray(row).ravel()
                if arr.size and not np.issubdtype(arr.dtype, np.integer):
                    raise ValueError
                bad = arr[(arr < -1) | (arr >= n_items)]
                if bad.size:
                    shown = (
                        f"the item index {int(bad[0])} in the list of user (row) {int(block[r])}"
                    )
                    raise ValueError
                arr = arr[arr >= 0][:k]
                out[r, : arr.size] = arr
        except (TypeError, ValueError):
            self._expect(False, "recommend", got, shown, **fmt)
        return out

    def params(self) -> dict[str, Any]:
        return {}

    def __repr__(self) -> str:
        text = repr(self.model)
        plain = type(self.model).__repr__ is object.__repr__
        return text if len(text) <= 120 and not plain else f"{qualified_name(self.model)}(...)"


class UserScores(CallableScores):
    """A user's ``score_users`` as the engine's score source: a block the model returns as a
    new array that nothing else refers to is evaluated where it lies, without a copy.

    The engine masks each row's train items in place, so a block is copied into the engine's
    buffer unless it is the model's fresh result: a C-contiguous, writable numpy array of the
    source's dtype that owns its memory and has no other reference than this call's
    (:func:`_exclusive`), so that no one can see the masking. A model that keeps or shares its
    result (an attribute, a cache, a view of its own matrix) gets its block copied, as before.
    At 50,000 users x 20,000 items the copy was about one GEMM floor's worth of memory traffic.
    ``score_users(user_indices, out=None)`` writes into the engine's buffer instead (as
    :class:`~recoeval_tracking.scores.CallableScores` does).

    ``thread_safe`` (a model's ``score_users_thread_safe = True``): the engine may call the
    model from all its threads at once, each scoring and evaluating blocks of its own with
    single-threaded BLAS, as it does with factors; otherwise it calls the model one block at a
    time, from one thread.
    """

    thread_safe: bool = False

    def block(self, users: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        if self.accepts_out:
            return super().block(users, out)
        got = self.scorer(users)
        if _exclusive(got) and _fits(got, self.dtype, len(users), self.n_items):
            return got
        if hasattr(got, "toarray"):
            got = got.toarray()
        if out is None:
            return np.array(got, dtype=self.dtype, order="C", copy=True)
        out[...] = got
        return out


def _fits(x: np.ndarray, dtype: np.dtype, rows: int, n_items: int) -> bool:
    """Whether ``x`` is a block the engine evaluates as it is (dtype, shape, layout)."""
    f = x.flags
    return (
        x.dtype == dtype
        and x.shape == (rows, n_items)
        and f.c_contiguous
        and f.writeable
        and f.aligned
        and f.owndata
    )


def _references(x: Any) -> int:
    """The references to ``x`` seen by the caller of :func:`_exclusive`."""
    return sys.getrefcount(x)


def _exclusive(x: Any) -> bool:
    """Whether ``x`` is a plain numpy array that owns its memory and that nothing refers to but
    the caller's one local variable: a count of references measured the same way, on an array
    made here (:data:`_ALONE`), so that the count does not depend on the interpreter's own
    bookkeeping of arguments."""
    return type(x) is np.ndarray and x.base is None and _references(x) <= _ALONE


def _calibrate() -> int:
    """The count :func:`_references` gives for an array held by one local variable of
    :func:`_exclusive`'s caller and nothing else (measured through the same two calls)."""

    def caller() -> int:
        got = np.empty(1)
        return _counted(got)

    return caller()


def _counted(x: Any) -> int:
    return _references(x)


_ALONE = _calibrate()


def _real_dtype(x: Any) -> bool:
    """Whether an array's dtype holds real numbers (numpy, or a GPU array's dtype by name);
    True when there is no dtype (a list: numpy reads it, and the evaluator checks it)."""
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return True
    try:
        return np.dtype(dtype).kind in "biuf"
    except TypeError:  # torch.float32 and the like
        return not any(word in str(dtype) for word in ("complex", "str", "object"))


def _describe(x: Any) -> str:
    shape = _shape_of(x)
    if shape is not None and not isinstance(x, np.ndarray):
        return f"a {type(x).__name__} of shape {shape}"
    return describe(x)
