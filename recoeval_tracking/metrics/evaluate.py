"""``evaluate()``: the native API, from any score source to a :class:`Results`.

An evaluation runs in three steps, each a function here:

1. :func:`plan`: check the options against the data and resolve the metrics into kernel slots;
2. :func:`run`: the engine backend chosen by ``EvalOptions.backend`` scores bounded blocks of
   users and fills the kernel metrics;
3. :func:`shape`: the per-user table, the @1..K curves, the list and aggregate metrics of the
   registry, and the definitions with their fingerprint.

``calc_reco_metrics`` shares steps 1 and 2 (:func:`compute`) and shapes recometrics' output.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections import ChainMap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from .._validation import InputError, checked_sparse, param_error
from ..engine.backends import get_backend
from ..engine.codes import N_AT_K, N_WHOLE, REASONS, Reason, Tie, Whole
from ..engine.driver import EngineInput, factors_finite
from ..options import EvalOptions
from ..scores import BiasScores, DenseScores, FactorScores, RankedLists
from . import inputs, profile_inputs, protocol
from .beyond import AUC_AVERAGE_TIES, ListContext
from .definitions import (
    NAN_RULES,
    definitions_record,
    fingerprint,
    metric_fingerprints,
    options_definitions,
)
from .inputs import Prepared, lists_without_train, prepare, score_source, user_reasons, with_gains
from .profiles import apply_profile
from .protocol import _a_set, _named, plan_for_source
from .registry import MetricSpec, column_name, curve_name, resolve_metrics
from .remote import remote_runner
from .results import Results, warn_if_nothing_evaluated
from .sampling import candidate_problem

__all__ = [
    "evaluate",
    "compute",
    "plan",
    "plan_for_source",
    "run",
    "shape",
    "Plan",
    "RawResult",
    "TIE_POLICIES",
    "NAN_RULES",
    "definitions_record",
    "fingerprint",
    "metric_fingerprints",
]

#: Tie policies available to every rank-based metric.
TIE_POLICIES = {t.name.lower(): int(t) for t in Tie} | {"implicit": int(Tie.INDEX)}

# -- 1. plan --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """What an evaluation computes: the resolved options, the metrics in output order and the
    kernel's view of them (slots per code, tie mode, whether top-K lists are extracted)."""

    options: EvalOptions
    specs: tuple[MetricSpec, ...]
    tie_mode: int
    topk_only: bool
    want_topk: bool
    left_out: dict[str, str] = field(default_factory=dict)

    @property
    def topk_specs(self) -> list[MetricSpec]:
        return [s for s in self.specs if s.kind == "at_k"]

    @property
    def whole_specs(self) -> list[MetricSpec]:
        return [s for s in self.specs if s.kind == "whole"]

    def slots(self) -> tuple[np.ndarray, np.ndarray]:
        """Output row of each @k code and of each whole-ranking code (-1: not computed)."""
        slots = np.full(N_AT_K, -1, dtype=np.int64)
        for row, s in enumerate(self.topk_specs):
            slots[s.code] = row
        wslots = np.full(N_WHOLE, -1, dtype=np.int64)
        for row, s in enumerate(self.whole_specs):
            wslots[s.code] = row
        if self.auc_average_ties_row is not None:
            wslots[Whole.ROC_AUC_AVG] = self.auc_average_ties_row
        return slots, wslots

    @property
    def auc_average_ties_row(self) -> int | None:
        """The extra whole-ranking output row of gauc's per-user ROC-AUC under average ranks
        for ties (filled in the same pass from the raw-score counts), when gauc is asked under
        another tie policy; None otherwise."""
        if self.options.ties == "average" or not any(s.name == "gauc" for s in self.specs):
            return None
        return len(self.whole_specs)


def _tie_mode(ties: str, func: str) -> int:
    if ties not in TIE_POLICIES:
        raise param_error("ties", func, f"one of {list(TIE_POLICIES)}", ties)
    return TIE_POLICIES[ties]


def plan(options: EvalOptions, prep: Prepared, func: str = "evaluate") -> Plan:
    """Check resolved ``options`` against the data and resolve the metrics.

    Metrics without an expectation under ``ties="average"`` are refused when named and left out
    of ``"all"`` (as the definitions then record); under another tie policy ``"all"`` leaves
    out the metrics whose AUC gives ties their average rank (``gauc``), computed when named.
    """
    n = prep.n_items
    if options.k > n:
        raise param_error("k", func, f"an int between 1 and the number of items ({n})", options.k)
    tie_mode = _tie_mode(options.ties, func)
    specs = resolve_metrics(options.metrics, func)
    if options.ties == "average":
        named = _named(options.metrics)
        refused = [s.name for s in specs if not s.average_ties and s.name in named]
        if refused:
            raise param_error(
                "ties",
                func,
                "'noise', 'index', 'optimistic' or 'pessimistic' "
                f"when '{refused[0]}' is asked (its expectation over tie orderings "
                "is not implemented)",
                options.ties,
            )
        specs = [s for s in specs if s.average_ties]
    elif _a_set(options.metrics):  # average-rank ties beside another policy: only when named
        specs = [s for s in specs if not s.extra_pass or s.name in _named(options.metrics)]
    want_topk = options.return_topk or any(
        s.kind == "list" or (s.kind == "aggregate" and not s.needs) for s in specs
    )
    return Plan(options, tuple(specs), tie_mode, False, want_topk)


# -- 2. run ---------------------------------------------------------------------------------


@dataclass
class RawResult:
    """Kernel outputs before they are shaped into a table."""

    plan: Plan
    out: np.ndarray  # (n_topk, m, K or 1)
    whole: np.ndarray  # (n_whole, m)
    topk: np.ndarray  # (m, K) top-K items when asked, else (0, K)
    n_tied: np.ndarray  # (m,) pool items tied with a listed item when asked, else (0,)
    reason: np.ndarray  # (m,) int8
    n_train: np.ndarray
    n_test: np.ndarray
    prep: Prepared
    seconds: float
    source: Any = None
    judged: sp.csr_array | None = None
    aux: dict[str, np.ndarray] = field(default_factory=dict)
    zero_users: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def specs(self) -> list[MetricSpec]:
        return list(self.plan.specs)

    @property
    def topk_specs(self) -> list[MetricSpec]:
        return self.plan.topk_specs

    @property
    def whole_specs(self) -> list[MetricSpec]:
        return self.plan.whole_specs

    @property
    def topk_only(self) -> bool:
        return self.plan.topk_only


def _engine_input(
    p: Plan, prep: Prepared, train: sp.csr_array, user_base: int, source: Any = None
) -> EngineInput:
    opts = p.options
    slots, wslots = p.slots()
    return EngineInput(
        tr_ptr=np.ascontiguousarray(train.indptr, dtype=np.int64),
        tr_idx=np.ascontiguousarray(train.indices, dtype=np.int64),
        te_ptr=np.ascontiguousarray(prep.test.indptr, dtype=np.int64),
        te_idx=np.ascontiguousarray(prep.test.indices, dtype=np.int64),
        te_val=np.ascontiguousarray(prep.test.data, dtype=np.float64),
        n_items=prep.n_items,
        K=opts.k,
        cumulative=opts.cumulative,
        slots=slots,
        wslots=wslots,
        tie_mode=p.tie_mode,
        seed=opts.seed,
        want_topk=p.want_topk and not p.topk_only,
        user_base=user_base,
        inf_nan=bool(getattr(source, "in_engine", False)),
        finite=_finite(source),
    )


def _finite(source: Any) -> bool:
    """Whether every score of ``source`` is known to be finite, so that the engine does not read
    each row for a NaN: factors whose products cannot overflow, or finite item biases (through
    ``inf_scores``'s wrapper too). False for any other source."""
    inner = getattr(source, "inner", source)
    if isinstance(inner, FactorScores):
        return factors_finite(inner.A, inner.B, ones=inner._ones)
    if isinstance(inner, BiasScores):
        return bool(np.isfinite(inner.item_biases).all())
    return False


def run(
    p: Plan,
    prep: Prepared,
    source: Any,
    *,
    progress: Callable[[int], None] | None = None,
    func: str = "evaluate",
    user_base: int = 0,
) -> RawResult:
    """Run the engine backend of ``p.options.backend`` over the users the NaN rules leave."""
    t0 = time.perf_counter()
    opts = p.options
    m, n = prep.test.shape
    reason, n_train, n_test = user_reasons(
        prep, opts.min_pos_test, opts.min_items_pool, opts.consider_cold_start
    )
    train = prep.train if prep.train is not None else sp.csr_array((m, n), dtype=np.float64)
    inp = _engine_input(p, prep, train, user_base, source)
    rows = np.flatnonzero(reason == Reason.OK).astype(np.int64)
    backend = get_backend(opts.backend)
    with backend.thread_limits(opts.nthreads):
        if p.topk_only:
            out = backend.run_ranked(inp, source.items, rows)
            whole = np.full((0, m), np.nan)
            topk = np.full((m if p.want_topk else 0, opts.k), -1, dtype=np.int64)
            if p.want_topk:
                topk[rows] = lists_without_train(source.items, train, opts.k)[rows]
            n_tied = np.zeros(0, dtype=np.int64)
        else:
            if getattr(source, "n_users", None) not in (None, m):
                raise InputError(
                    f"The score source passed to {func} scores {source.n_users} "
                    f"users, but the test matrix has {m} users (rows)."
                )
            inner = getattr(source, "inner", source)
            safe = isinstance(inner, (FactorScores, BiasScores, DenseScores)) or (
                getattr(inner, "thread_safe", False) is True
            )
            out, whole, topk, n_tied = backend.run_scores(
                inp,
                source.block,
                source.dtype,
                rows,
                reason,
                block_rows=opts.block_rows,
                progress=progress,
                thread_safe=safe,
            )
    return RawResult(
        p, out, whole, topk, n_tied, reason, n_train, n_test, prep, time.perf_counter() - t0, source
    )


def compute(
    train: Any,
    test: Any,
    options: EvalOptions,
    *,
    A: Any = None,
    B: Any = None,
    item_biases: Any = None,
    scores: Any = None,
    scorer: Any = None,
    ranked: Any = None,
    user_ids: Any = None,
    progress: Callable[[int], None] | None = None,
    func: str = "evaluate",
    user_base: int = 0,
    missing_users: str | None = None,
) -> RawResult:
    """Check the inputs, plan and run. Shared by :func:`evaluate` and ``calc_reco_metrics``.
    The profile's list rules (:func:`.profile_inputs.for_profile`) apply to lists not yet
    read under them: a shard's lists, which a sharded run's driver prepared, are read as they
    are (:class:`.profile_inputs.ProfiledLists`)."""
    t0 = time.perf_counter()
    if progress is not None and not callable(progress):
        raise param_error(
            "progress",
            func,
            "None or a callable taking the number of users just evaluated",
            progress,
            "Pass e.g. a tqdm bar's update method (progress=bar.update), or leave it None.",
        )
    inputs.check_factor_rows(test, A, B, func)
    prep = prepare(train, test, user_ids, func)
    opts = apply_profile(options.checked(func), func)
    positives, judged, no_positive = protocol.split_judgements(prep.test, opts.relevance_level)
    prep = dataclasses.replace(prep, test=with_gains(positives, opts.gains))
    profile_inputs.refuse_repeats(ranked, opts, func)
    source = score_source(
        prep, A, B, item_biases, scores, scorer, ranked, func, opts.backend, missing_users
    )
    prep, source = profile_inputs.for_profile(prep, source, opts, func)
    full, cand = prep, None
    if opts.negatives is not None:
        prep, source, cand = candidate_problem(prep, source, opts.negatives, func)
    p = plan(opts, prep, func)
    source, flags = protocol.prepare_source(source, prep, opts)
    if isinstance(source, RankedLists):
        p = protocol.left_out_for_ranked(p, func)
    if cand is not None:
        p = protocol.left_out_for_candidates(p, func)
    raw = run(
        plan_for_source(p, source, func),
        prep,
        source,
        progress=progress,
        func=func,
        user_base=user_base,
    )
    raw.judged = judged
    if cand is not None:
        protocol.back_to_items(raw, full, cand)
    protocol.apply_flags(raw, flags)
    protocol.apply_no_positive(raw, no_positive, opts.no_positive)
    row = raw.plan.auc_average_ties_row
    if row is not None:  # gauc's AUC under average ranks, filled in the same engine pass
        raw.aux[AUC_AVERAGE_TIES] = np.where(raw.reason == Reason.OK, raw.whole[row], np.nan)
    raw.seconds = time.perf_counter() - t0
    return raw


# -- 3. shape -------------------------------------------------------------------------------


def _item_vectors(raw: RawResult, item_features: Any) -> np.ndarray | None:
    n = raw.prep.n_items
    if item_features is not None:
        vectors = (
            checked_sparse(item_features, "item_features", "evaluate").toarray()
            if sp.issparse(item_features)
            else np.asarray(item_features, dtype=np.float64)
        )
        if vectors.ndim != 2 or vectors.shape[0] != n:
            raise param_error(
                "item_features",
                "evaluate",
                f"an array with one row per item ({n} rows)",
                item_features,
            )
        return vectors
    if isinstance(raw.source, FactorScores):
        B = raw.source.B
        return B[:, :-1] if raw.source._ones else B
    return None


def _list_metrics(
    raw: RawResult,
    columns: dict[str, Any],
    curves: dict[str, np.ndarray] | None,
    item_features: Any,
    popularity: Any = None,
) -> tuple[dict[str, float], set[str]]:
    """Fill the list metrics' per-user columns (and their @1..K curves when ``curves`` is given)
    and compute the aggregates, each with its registry function; return the aggregates and the
    names left out for want of item vectors."""
    specs = [s for s in raw.plan.specs if s.kind in ("list", "aggregate")]
    aggregates: dict[str, float] = {}
    skipped: set[str] = set()
    if not specs:
        return aggregates, skipped
    opts = raw.plan.options
    m, n = raw.prep.test.shape
    ctx = ListContext(
        topk=raw.topk,
        n_items=n,
        k=opts.k,
        ok=raw.reason == Reason.OK,
        n_test=raw.n_test,
        train=raw.prep.train if raw.prep.train is not None else sp.csr_array((m, n)),
        test=raw.prep.test,
        columns=ChainMap(columns, raw.aux),
        vectors=_item_vectors(raw, item_features),
        serendipity_top_n=opts.serendipity_top_n,
        popularity=popularity,
        rbp_persistence=opts.rbp_persistence,
        tail_ratio=opts.tail_ratio,
        short_head_share=opts.short_head_share,
        judged=raw.judged,
    )
    zero = raw.zero_users
    for s in specs:
        col = column_name(s, opts.k)
        if s.needs_item_vectors and ctx.vectors is None:
            skipped.add(s.name)
        elif s.kind == "aggregate":
            aggregates[col] = s.compute(ctx)
        else:
            columns[col] = s.compute(ctx, ctx.topk)
            if curves is not None:
                curves[curve_name(s)] = np.stack(
                    [s.compute(ctx, ctx.topk[:, :j]) for j in range(1, opts.k + 1)], axis=1
                )
            if s.name in protocol.RANK_LIST_METRICS and zero.size:  # no_positive="zero"
                columns[col][zero] = 0.0
                if curves is not None:
                    curves[curve_name(s)][zero] = 0.0
    return aggregates, skipped


def shape(raw: RawResult, *, item_features: Any = None, popularity: Any = None) -> Results:
    """The :class:`Results` of a run: per-user table, curves, list and aggregate metrics,
    definitions and fingerprint."""
    opts = raw.plan.options
    k = opts.k
    columns: dict[str, Any] = {
        "user_id": raw.prep.user_ids,
        "n_train": raw.n_train,
        "n_test": raw.n_test,
        "nan_reason": np.asarray(REASONS, dtype=object)[raw.reason],
    }
    if raw.n_tied.shape[0]:
        columns["n_tied_topk"] = raw.n_tied
    curves: dict[str, np.ndarray] = {}
    for row, s in enumerate(raw.topk_specs):
        columns[column_name(s, k)] = raw.out[row, :, -1]
        if opts.cumulative:
            curves[curve_name(s)] = raw.out[row]
    for row, s in enumerate(raw.whole_specs):
        columns[column_name(s, k)] = raw.whole[row]
    aggregates, skipped = _list_metrics(
        raw, columns, curves if opts.cumulative else None, item_features, popularity
    )
    source = raw.source.describe() if hasattr(raw.source, "describe") else {}
    specs = [s for s in raw.specs if s.name not in skipped]
    left_out = {**raw.plan.left_out, **dict.fromkeys(sorted(skipped), protocol.VECTORS_REASON)}
    defs = options_definitions(opts, specs, source, left_out)
    protocol.record_missing(defs, raw.source)
    return Results(
        per_user=columns,  # the frame is made when first read (no pandas before)
        k=k,
        curves_per_user=curves,
        definitions=defs,
        fingerprint=fingerprint(defs),
        topk_only=raw.topk_only,
        timings={"eval": raw.seconds},
        topk=raw.topk if raw.topk.shape[0] else None,
        aggregates=aggregates,
    )


# -- the public function --------------------------------------------------------------------


def evaluate(
    train: Any,
    test: Any = None,
    *,
    A: Any = None,
    B: Any = None,
    item_biases: Any = None,
    scores: Any = None,
    scorer: Any = None,
    ranked: Any = None,
    metrics: str | Sequence[str] | None = None,
    k: int = 10,
    cumulative: bool = False,
    ties: str | None = None,
    seed: int | None = None,
    min_pos_test: int = 1,
    min_items_pool: int = 2,
    consider_cold_start: bool = True,
    user_ids: Any = None,
    nthreads: int = -1,
    block_rows: int | None = None,
    return_topk: bool = False,
    item_features: Any = None,
    serendipity_top_n: int = 100,
    profile: str | None = None,
    backend: str = "cpu",
    relevance_level: float | None = None,
    no_positive: str | None = None,
    inf_scores: str | None = None,
    rbp_persistence: float = 0.8,
    tail_ratio: float = 0.1,
    short_head_share: float = 0.8,
    negatives: dict[str, Any] | None = None,
    options: EvalOptions | None = None,
    gains: str | None = None,
    progress: Callable[[int], None] | None = None,
    client: Any = None,
    missing_users: str | None = None,
) -> Results:
    r"""Evaluate a model's full-catalog ranking of every user's items not in train.

    Parameters
    ----------
    train, test : scipy.sparse CSR (users x items) or an interactions container
        Train entries are excluded from each user's ranking; test entries are judged by the
        data's relevance rule (below). ``train`` may be None (nothing excluded). Or a
        :class:`~recoeval_tracking.splitting.Split` alone (``rt.evaluate(split, scores=...)``):
        its part the app's job evaluates, ``split.test_split()`` (with a validation part, test
        ranked with train and validation excluded; ``split.validation_split()`` for the
        validation part), and the results record its fingerprint
        (:attr:`Results.split_fingerprint`), so that ``rt.compare`` pairs them with the app's
        jobs of the same split.
    A, B, item_biases : array-like, optional
        User factors (m x p), item factors (n x p) and item biases:
        :math:`s_{ui} = \langle A_u, B_i \rangle + b_i`. ``item_biases`` alone is a
        non-personalised model. GPU arrays (CuPy, PyTorch CUDA tensors, any
        ``__cuda_array_interface__`` or CUDA DLPack array) are taken without a host copy with
        ``backend="cuda"`` and refused with ``backend="cpu"`` (``metrics.device_inputs``).
    scores : ndarray or ScoreSource, optional
        A dense (m x n) score array, or any :class:`~recoeval_tracking.ScoreSource`.
    scorer : callable, optional
        ``scorer(user_indices) -> (len(user_indices), n)`` scores; called one block at a time.
    ranked : ndarray or DataFrame, optional
        Top-K lists: an (m x L) array of item indices best first (-1 padded), or a DataFrame with
        columns user, item and rank or score. Gives the top-K metrics only. Two items of one
        user with the same score are listed lower item id first (the rule of ``evaluate_spark``);
        two items at one rank are refused.
    missing_users : {"zero", "skip", "error"}, optional
        With a ``ranked`` DataFrame, what an evaluated user without a row gets: an empty list,
        so 0 (the default); NaN with reason ``no_list``; an error. Always counted in a warning
        and in ``definitions["source"]``.
    metrics : list of str, "all" or "standard", optional
        Names from :data:`~recoeval_tracking.metrics.registry.METRICS`; by default the profile's
        metrics, or P, AP and NDCG without a profile.
    k : int
        The cutoff K (1 <= k <= number of items).
    cumulative : bool
        Also compute every metric at 1..K (``Results.curves_per_user``).
    ties : {"noise", "index", "index_desc", "warprec", "optimistic", "pessimistic", "average"}
        By default the profile's policy, or ``noise`` without a profile. How tied scores are
        ordered: a seeded random key per (user, item) that does not depend on
        the thread count; the item index (lower first, or higher first as trec_eval orders tied
        document ids); WarpRec's seeded 30-bit key per (user, item), larger first (its
        Evaluator's ``top_k_breaking_ties``: the user and the item are the row and the column
        here; equal keys, which WarpRec leaves to ``torch.topk``, by item index); tied
        positives before (optimistic) or after (pessimistic) tied negatives; or the exact
        expected value over every ordering of the tied items (average, McSherry & Najork 2008).
    seed : int, optional
        Seed of the tie break (``noise``, ``warprec``); by default 42 under ``warprec``
        (WarpRec's default seed) and 0 otherwise, as the app's top-level ``seed``, so that a
        notebook and a job of the same split break ties alike.
    min_pos_test, min_items_pool, consider_cold_start
        The recometrics thresholds: users below them get NaN (counted by reason).
    user_ids : array-like, optional
        Original id of each row, for the per-user table (taken from an interactions container
        when one is given).
    nthreads : int
        Threads for both numba and BLAS; -1 uses every core.
    block_rows : int, optional
        Users scored at a time (bounds memory); chosen from the catalogue size by default.
    return_topk : bool
        Also extract every user's top-K items (``Results.topk``) and count the pool items tied
        with them (per-user column ``n_tied_topk``). Implied by beyond-accuracy metrics.
    item_features : array-like (n_items x d), optional
        Item vectors for ``ils``/``diversity``; the item factors ``B`` are used when not given.
    serendipity_top_n : int
        Items among the N most popular in train count as expected for ``serendipity``.
    profile : str, optional
        A library profile (:data:`~recoeval_tracking.metrics.profiles.PROFILES`): selects the
        metrics and tie policy that reproduce that library's numbers; ``metrics`` or ``ties``
        given explicitly take precedence.
    backend : {"cpu", "cuda"}
        Where the engine runs (:data:`recoeval_tracking.options.BACKENDS`): ``"cuda"`` scores
        and ranks on an NVIDIA GPU (``pip install "recoeval_tracking[cuda]"``; the GPU
        guide), with the same per-user values.
    relevance_level, gains, no_positive, inf_scores : optional
        Test values below ``relevance_level`` are judged non-relevant; a positive's gain is its
        value (``gains="graded"``) or 1 (``"binary"``); None: the data's rule (``test.relevance``:
        MovieLens 4, binary; a matrix: every entry, values as gains). A user without a positive
        is NaN (``no_positive="nan"``) or 0 (``"zero"``); +-inf scores are ranked (``"rank"``) or
        make the user NaN (``"nan"``). None: the profile's (:class:`~.options.EvalOptions`).
    rbp_persistence, tail_ratio, short_head_share : float
        Parameters of ``rbp``, ``tailpercentage`` and the long tail of ``aplt``, ``aclt``,
        ``pop_rsp`` and ``pop_reo``.
    negatives : dict, optional
        A sampled-negative protocol ``{"n": 100, "by": "uniform" | "popularity", "seed": 0}``
        (:mod:`~recoeval_tracking.metrics.sampling`); by default the full catalogue.
    options : EvalOptions, optional
        Every option above at once; keyword options given explicitly are applied on top of it.
    progress : callable, optional
        Called with the number of users just evaluated after each block of users (e.g. a
        ``tqdm`` bar's ``update``); anything else but None is refused.
    client : dask.distributed.Client or str, optional
        Run on a Dask cluster (a client or a scheduler address): see
        :func:`recoeval_tracking.distributed.evaluate_on_dask`; the same values as locally.

    Returns
    -------
    Results

    Notes
    -----
    Definitions follow the recometrics ``calc.reco.metrics`` documentation; see
    :mod:`recoeval_tracking.metrics.registry` for every formula and the "differences from
    recometrics" section of docs/guides/profiles.md.
    """
    given = {name: value for name, value in locals().items() if name in _OPTION_NAMES}
    train, test, split_fp = _split_parts(train, test)
    opts = inputs.with_data_relevance(_merge_options(options, given), train, test)
    # what is scored, as both the local and the remote path take it
    model = {
        "A": A,
        "B": B,
        "item_biases": item_biases,
        "scores": scores,
        "scorer": scorer,
        "ranked": ranked,
        "user_ids": user_ids,
    }
    if client is not None:
        run_remote = remote_runner("dask")  # registered by recoeval_tracking.distributed
        if missing_users is not None:
            raise param_error(
                "missing_users",
                "evaluate",
                "None with a Dask client (give "
                "the lists as RankedLists.from_pairs(..., missing_users=...))",
                missing_users,
            )
        done = run_remote(client, train, test, opts, **model, item_features=item_features)
        if hasattr(done, "split_fingerprint"):
            done.split_fingerprint = split_fp
            done.parts_fingerprint = _parts_fingerprint(train, test)
        return done
    raw = compute(train, test, opts, **model, progress=progress, missing_users=missing_users)
    results = shape(raw, item_features=item_features)
    results.split_fingerprint = split_fp
    results.parts_fingerprint = _parts_fingerprint(train, test)
    return warn_if_nothing_evaluated(results, "evaluate")


def _parts_fingerprint(train: Any, test: Any) -> str:
    """A hash of the train and test interactions' fingerprints (``""`` unless both are
    interactions containers: matrices carry none, and hashing them would cost a pass)."""
    fps = [getattr(x, "fingerprint", None) for x in (train, test)]
    if not all(callable(f) for f in fps):
        return ""
    import hashlib

    text = "/".join(str(f()) for f in fps)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _split_parts(train: Any, test: Any) -> tuple[Any, Any, str]:
    """``(train, test, split fingerprint)``: a Split given as ``train`` (and no ``test``) gives
    the part a job evaluates and its fingerprint; otherwise the matrices as given and ``""``."""
    # a Split exists only once its module is loaded: no import (of pandas) for matrices
    split_module = sys.modules.get("recoeval_tracking.splitting._split")
    if split_module is not None and isinstance(train, split_module.Split):
        if test is not None:
            raise param_error(
                "test",
                "evaluate",
                "None when a Split is given (its test part is evaluated: "
                "rt.evaluate(split, scores=...))",
                test,
            )
        part = train.test_split()  # the split itself when it has no validation part
        return part.train, part.test, str(part.fingerprint)
    if test is None:
        raise param_error(
            "test", "evaluate", "the test matrix or interactions (or a Split as train)", test
        )
    return train, test, ""


_OPTION_NAMES = frozenset(f.name for f in dataclasses.fields(EvalOptions))
_OPTION_DEFAULTS = {f.name: f.default for f in dataclasses.fields(EvalOptions)}


def _merge_options(options: EvalOptions | None, given: dict[str, Any]) -> EvalOptions:
    """``options`` (or the defaults) with the keyword options that differ from the defaults."""
    if options is None:
        return EvalOptions(**given)
    if not isinstance(options, EvalOptions):
        raise param_error("options", "evaluate", "an EvalOptions", options)
    changed = {k: v for k, v in given.items() if v != _OPTION_DEFAULTS[k]}
    return dataclasses.replace(options, **changed)
