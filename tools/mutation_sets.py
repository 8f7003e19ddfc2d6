"""Named sets of hand-made mutations for tools/mutate.py (``--set NAME``).

Each mutation is one plausible wrong edit of the package (or of a config file it ships): a list
of ``(old, new)`` source replacements, each ``old`` found exactly once in the file. ``tests``
names the test files that must catch it (run with ``-m "not slow"`` like the drawn mutants).

``issue18``: the 21 wrong edits that an earlier suite let pass (one per kind of blind spot:
engine paths small inputs never reach, profiles, splits, report statistics and settings, sweeps
and the app's seeds). Every one of them must be killed by the current suite.

``security``: the hostile-input check's findings (secrets shortest first, a path-valued
environment variable taken for a secret, ``resolve_under`` by text, ``model_allow=[]`` as no
limit, a ``_target_`` checked by its text only...): 8 of 8 killed.

``fair``: the fair study's protocol (the choice's direction, the validation items in the test
ranking, the objective read on test, the baselines' budget, the refit, a whole smaller search
space): every one killed.
"""

from __future__ import annotations

# Each mutation runs the test files written to catch that kind of fault (a whole area's tests
# take an hour for this set on a busy 2-core machine); ``--tests tests`` runs the whole suite.
PATHS = ("tests/engine/test_paths.py", "tests/engine/test_engine_edges.py")
PROFILES = ("tests/metrics/test_profile_formulas.py",)
SPLITS = ("tests/splitting/test_split_properties.py",)
REPORT = ("tests/reporting/test_report_settings.py",)

#: name -> (file relative to the repository root, [(old, new), ...], tests, what it breaks)
ISSUE18: dict[str, tuple[str, list[tuple[str, str]], tuple[str, ...], str]] = {
    "topk_rank_off_by_one": (
        "recoeval_tracking/engine/ranks.py",
        [
            (
                "if eq[i] > 1 and (plan.full_ranks or gt[i] < plan.K):",
                "if eq[i] > 1 and (plan.full_ranks or gt[i] < plan.K - 1):",
            )
        ],
        PATHS,
        "top-K-only path: a positive tied at rank K skips its tie-breaking count",
    ),
    "early_stop_bound": (
        "recoeval_tracking/engine/ranks.py",
        [("while start < n and g < stop_at:", "while start < n and g < stop_at - 1:")],
        PATHS,
        "the chunked scan stops one item early (gt may end at K - 1)",
    ),
    "binary_search_gt": (
        "recoeval_tracking/engine/ranks.py",
        [("acc += hist[t + 1]", "acc += hist[t]")],
        PATHS,
        "binary-search counting path: gt counts the wrong bucket",
    ),
    "average_rr": (
        "recoeval_tracking/engine/fill.py",
        [("pj *= (t - j - c + 1) / (t - j)", "pj *= (t - j - c) / (t - j)")],
        PATHS,
        "ties=average RR: wrong hypergeometric law of the first positive",
    ),
    "topk_list_ignores_noise": (
        "recoeval_tracking/engine/topk.py",
        [
            (
                "mode = tie_mode if tie_mode in TOTAL_ORDERS else TIE_INDEX",
                "mode = tie_mode if tie_mode in TOTAL_ORDERS[1:] else TIE_INDEX",
            )
        ],
        PATHS,
        "the beyond-accuracy top-K list orders ties by index under ties=noise",
    ),
    "nan_rule_order": (
        "recoeval_tracking/metrics/inputs.py",
        [
            (
                "    reason[pool < min_items_pool] = Reason.MIN_ITEMS_POOL\n"
                "    if prep.train is not None and not consider_cold_start:\n"
                "        reason[n_train == 0] = Reason.COLD_START\n",
                "    if prep.train is not None and not consider_cold_start:\n"
                "        reason[n_train == 0] = Reason.COLD_START\n"
                "    reason[pool < min_items_pool] = Reason.MIN_ITEMS_POOL\n",
            )
        ],
        ("tests/metrics/test_nan_rule_order.py",),
        "min_items_pool takes precedence over cold_start",
    ),
    "recbole_map_over_T": (
        "recoeval_tracking/metrics/profiles.py",
        [
            (
                '            "r",\n            "tap",\n            "gauc",\n',
                '            "r",\n            "ap",\n            "gauc",\n',
            ),
            (
                '"recall": "r",\n            "map": "tap",\n            "gauc": "gauc",',
                '"recall": "r",\n            "map": "ap",\n            "gauc": "gauc",',
            ),
        ],
        PROFILES,
        "recbole MAP divided by |T| instead of min(K, |T|)",
    ),
    "recbole_ndcg_linear": (
        "recoeval_tracking/metrics/profiles.py",
        [
            (
                '            "rr",\n            "ndcg_bin",\n            "p",\n',
                '            "rr",\n            "ndcg",\n            "p",\n',
            ),
            (
                '"ndcg": "ndcg_bin",\n            "precision": "p",\n            "recall": "r",\n'
                '            "map": "tap",',
                '"ndcg": "ndcg",\n            "precision": "p",\n            "recall": "r",\n'
                '            "map": "tap",',
            ),
        ],
        PROFILES,
        "recbole NDCG with linear instead of binary gains",
    ),
    "kfold_seed_ignored": (
        "recoeval_tracking/splitting/_strategies.py",
        [
            (
                "    rng = np.random.default_rng(seed)\n    rank = random_row_rank(X, rng)\n"
                "    rows = X.row_of_entries()\n    offset = rng.integers(0, n_folds, X.n_users)",
                "    rng = np.random.default_rng(0)\n    rank = random_row_rank(X, rng)\n"
                "    rows = X.row_of_entries()\n    offset = rng.integers(0, n_folds, X.n_users)",
            )
        ],
        SPLITS,
        "kfold ignores its seed",
    ),
    "temporal_user_seed_ignored": (
        "recoeval_tracking/splitting/_strategies.py",
        [
            (
                "    rng = np.random.default_rng(seed)\n"
                "    rank = within_row_rank(X, -ts, random_ties=rng.random(X.nnz))\n"
                "    n_test, capped",
                "    rng = np.random.default_rng(0)\n"
                "    rank = within_row_rank(X, -ts, random_ties=rng.random(X.nnz))\n"
                "    n_test, capped",
            )
        ],
        SPLITS,
        "per-user temporal split breaks boundary ties without its seed",
    ),
    "kfold_deals_from_fold0": (
        "recoeval_tracking/splitting/_strategies.py",
        [
            (
                "offset = rng.integers(0, n_folds, X.n_users)",
                "offset = 0 * rng.integers(0, n_folds, X.n_users)",
            )
        ],
        SPLITS,
        "kfold deals every user's entries from fold 0 (fold 0 the largest)",
    ),
    "user_kfold_no_shuffle": (
        "recoeval_tracking/splitting/_strategies.py",
        [("group[rng.permutation(active)] = ", "group[active] = ")],
        SPLITS,
        "user k-fold assigns users to groups in id order",
    ),
    "bh_no_step_up": (
        "recoeval_tracking/stats/_corrections.py",
        [("stepped = np.minimum.accumulate(ranked[::-1])[::-1]", "stepped = ranked")],
        ("tests/stats/test_paired_and_intervals.py", "tests/reporting/test_report_settings.py"),
        "Benjamini-Hochberg without its step-up minimum",
    ),
    "report_ignores_correction": (
        "recoeval_tracking/reporting/report.py",
        [
            (
                "st.adjust_pvalues(raw[idx], correction) if len(idx) else raw[idx]",
                'st.adjust_pvalues(raw[idx], "holm") if len(idx) else raw[idx]',
            )
        ],
        REPORT,
        "the report adjusts p-values with holm whatever `correction` says",
    ),
    "mark_threshold": (
        "recoeval_tracking/reporting/stats.py",
        [("or p >= alpha or diff == 0:", "or p >= 0.05 or diff == 0:")],
        REPORT,
        "significance marks at 0.05 whatever alpha",
    ),
    "mark_ignores_lower": (
        "recoeval_tracking/reporting/stats.py",
        [("better = (diff < 0) if lower_is_better else (diff > 0)", "better = diff > 0")],
        REPORT,
        "significance marks ignore lower-is-better",
    ),
    "interval_wrong_column": (
        "recoeval_tracking/reporting/report.py",
        [
            (
                '"boot_low": float(boot_low[offset + R + c])',
                '"boot_low": float(boot_low[offset + c])',
            )
        ],
        REPORT,
        "the difference's bootstrap interval read from a run's column",
    ),
    "leaderboard_best_direction": (
        "recoeval_tracking/tracking/sweeps.py",
        [
            (
                "idx = values.idxmin() if _lower_is_better(m, lower_is_better) else values.idxmax()",
                "idx = values.idxmax()",
            )
        ],
        ("tests/reporting/test_report_settings.py",),
        "the sweep's best ignores lower-is-better",
    ),
    "metrics_seed_ignored": (
        "recoeval_tracking/options.py",
        [
            (
                "values = {keys[k]: v for k, v in section.items()}",
                'values = {keys[k]: v for k, v in section.items() if k != "seed"}',
            )
        ],
        ("tests/test_options.py", "tests/app/test_config_seeds.py"),
        "metrics.seed from the config is ignored",
    ),
    "kfold_top_level_seed": (
        "configs/split/kfold.yaml",
        [("seed: ${seed}", "seed: 0")],
        ("tests/app/test_config_seeds.py",),
        "the kfold split does not follow the top-level seed",
    ),
    "sweep_parent_name": (
        "recoeval_tracking/app/callbacks.py",
        [("run_name=name if swept else None,", "run_name=None,")],
        ("tests/app/test_sweep_parent_name.py",),
        "the sweep parent is not named after the sweep",
    ),
}

#: ``audit``: the wrong edits an independent audit found the suite letting through, and the
#: three departures from peers' numbers it found, undone. Each must fail the tests named, which
#: need only the ``dev`` extra (no peer library).
DEFS = ("tests/metrics/test_definitions_by_hand.py",)
AUDIT: dict[str, tuple[str, list[tuple[str, str]], tuple[str, ...], str]] = {
    "split_fingerprint_ignores_data": (
        "recoeval_tracking/splitting/_split.py",
        [("    h.update(X.fingerprint().encode())\n", "")],
        ("tests/splitting/test_split_sizes.py",),
        "two datasets split with the same settings share a split fingerprint",
    ),
    "validation_cap_ignores_test": (
        "recoeval_tracking/splitting/_strategies.py",
        [
            (
                "allowed = np.maximum(n - n_test - min_train, 0)",
                "allowed = np.maximum(n - min_train, 0)",
            )
        ],
        ("tests/splitting/test_split_sizes.py",),
        "random_holdout's validation part can eat the min_train entries",
    ),
    "duplicates_keep_first_time": (
        "recoeval_tracking/data/_build.py",
        [
            (
                'ts = ts[ends - 1] if duplicates == "last" else np.maximum.reduceat(ts, starts)',
                'ts = ts[ends - 1] if duplicates == "last" else ts[starts]',
            )
        ],
        ("tests/data/test_duplicates.py",),
        "pairs merged by sum or max keep the first timestamp, not the latest",
    ),
    "replicate_mean_nan": (
        "recoeval_tracking/reporting/replicates.py",
        [("row[c] = float(np.nanmean(v)) if", "row[c] = float(np.mean(v)) if")],
        ("tests/reporting/test_replicates.py",),
        "one NaN user makes a replicate's mean NaN",
    ),
    "pending_keeps_uploading": (
        "recoeval_tracking/tracking/pending.py",
        [("    set_marker(root, UPLOADING, None)\n    return record", "    return record")],
        ("tests/tracking/test_pending_markers.py",),
        "UPLOADING left beside PENDING",
    ),
    "numeric_secret_kept": (
        "recoeval_tracking/jobdir/redact.py",
        [
            (
                "REDACTED if is_secret_key(str(k)) and v is not None else",
                "REDACTED if is_secret_key(str(k)) and isinstance(v, str) else",
            )
        ],
        ("tests/jobdir/test_redact.py",),
        "a numeric value of a secret key is kept",
    ),
    "precheck_k_boundary": (
        "recoeval_tracking/app/precheck.py",
        [("    if k > n_items:", "    if k >= n_items:")],
        ("tests/app/test_precheck.py",),
        "metrics.k equal to the number of items refused",
    ),
    "bpref_denominator_R": (
        "recoeval_tracking/metrics/listrank.py",
        [("/ np.minimum(N, R)[:, None]", "/ R[:, None]")],
        DEFS,
        "bpref divides by R instead of min(N, R)",
    ),
    "gm_map_without_floor": (
        "recoeval_tracking/metrics/listrank.py",
        [("np.log(np.maximum(ap, MIN_GEO_MEAN))", "np.log(ap)")],
        DEFS,
        "gm_map without trec_eval's 1e-5 floor",
    ),
    "ranx_profile_takes_zero_as_relevant": (
        "recoeval_tracking/metrics/profiles.py",
        [
            (
                '        "relevance_level": 1.0,\n        "no_positive": "zero",\n'
                '        "aliases": {\n            "precision": "p",\n            "recall": "r",\n'
                '            "map": "ap",',
                '        "aliases": {\n            "precision": "p",\n            "recall": "r",\n'
                '            "map": "ap",',
            )
        ],
        ("tests/metrics/test_peer_unit_values.py",),
        "ranx profile: every judgement a positive, a query without one NaN",
    ),
    "bpref_rbp_nan_on_empty_list": (
        "recoeval_tracking/metrics/listrank.py",
        [
            (
                "    return np.where(ctx.ok & (R > 0), out, np.nan)",
                "    return np.where((topk >= 0).any(axis=1) & (R > 0), out, np.nan)",
            ),
            (
                "    out = (1.0 - p) * (np.where(found, vals, 0.0) * weights).sum(axis=1)\n"
                "    return np.where(ctx.ok, out, np.nan)",
                "    out = (1.0 - p) * (np.where(found, vals, 0.0) * weights).sum(axis=1)\n"
                "    return np.where((topk >= 0).any(axis=1), out, np.nan)",
            ),
        ],
        ("tests/metrics/test_trec_eval_empty_run.py",),
        "bpref and rbp NaN (no reason) for an evaluated user with an empty list",
    ),
    "calc_reco_metrics_ranks_inf": (
        "recoeval_tracking/metrics/compat.py",
        [('    inf_scores: str = "nan",', '    inf_scores: str = "rank",')],
        ("tests/metrics/test_peer_unit_values.py",),
        "the drop-in ranks +-inf scores where recometrics makes the user NA",
    ),
}

#: The hostile-input check's findings (security): wrong edits that would let a secret, a
#: foreign ``_target_`` or a write outside the report's folder through.
SECURITY: dict[str, tuple[str, list[tuple[str, str]], tuple[str, ...], str]] = {
    "secrets_shortest_first": (
        "recoeval_tracking/jobdir/redact.py",
        [("key=lambda v: (-len(v), v))", "key=lambda v: (len(v), v))")],
        ("tests/jobdir/test_redact_hostile.py",),
        "known secret values replaced shortest first: a longer secret's tail leaks",
    ),
    "env_path_is_secret": (
        "recoeval_tracking/jobdir/redact.py",
        [
            (
                "is_secret_key(name) and looks_like_secret_value(value):",
                "is_secret_key(name) and len(value) >= _MIN_ENV_SECRET:",
            )
        ],
        ("tests/jobdir/test_redact_hostile.py",),
        "a secret-named variable holding a folder redacts every path under it",
    ),
    "pem_block_kept": (
        "recoeval_tracking/jobdir/redact.py",
        [("out = _PEM_PRIVATE_KEY.sub(REDACTED, str(text))", "out = str(text)")],
        ("tests/jobdir/test_redact_hostile.py",),
        "a PEM private key under an innocent key is kept",
    ),
    "secret_last_component_only": (
        "recoeval_tracking/jobdir/redact.py",
        [
            (
                'return any(_is_secret_component(part) for part in str(key).split("."))',
                'return _is_secret_component(str(key).rsplit(".", 1)[-1])',
            )
        ],
        ("tests/jobdir/test_redact_hostile.py",),
        "a key under a secret section (secrets.github) is not secret",
    ),
    "resolve_under_text_prefix": (
        "recoeval_tracking/_validation.py",
        [
            (
                "if path.is_relative_to(root):  # by components: /out2 is not inside /out",
                "if str(path).startswith(str(root)):",
            )
        ],
        ("tests/app/test_report_paths.py",),
        "report2/ counted inside report/",
    ),
    "figures_through_links": (
        "recoeval_tracking/app/report.py",
        [("        if link.is_symlink():", "        if False:")],
        ("tests/app/test_report_paths.py",),
        "the report's figures written through a link leaving output.dir",
    ),
    "model_allow_empty_no_limit": (
        "recoeval_tracking/app/user_model.py",
        [("    if allow is None:\n        return\n", "    if not allow:\n        return\n")],
        ("tests/app/test_model_allow.py",),
        "model_allow=[] read as no limit",
    ),
    "model_allow_text_only": (
        "recoeval_tracking/app/user_model.py",
        [
            (
                "for obj in _resolutions(target, _where(label, target), base_dir):",
                "for obj in []:",
            )
        ],
        ("tests/app/test_model_allow.py",),
        "only the text of _target_ checked: my_models.ease.np.save passes",
    ),
}

FAIR_TESTS = (
    "tests/sweeps/test_fair_study.py",
    "tests/app/test_protocol_job.py",
    "tests/splitting/test_split_phases.py",
)

#: The fair study (selection on validation, test once): wrong edits that would report a number
#: chosen on test, or a baseline tuned with another budget, as fair.
FAIR: dict[str, tuple[str, list[tuple[str, str]], tuple[str, ...], str]] = {
    "choice_direction_flipped": (
        "recoeval_tracking/app/study.py",
        [
            (
                "c.value > held if greater_is_better else c.value < held",
                "c.value < held if greater_is_better else c.value > held",
            )
        ],
        FAIR_TESTS,
        "the worst configuration on validation is chosen",
    ),
    "test_ranks_validation_items": (
        "recoeval_tracking/splitting/_split.py",
        [("merged = union_of(self.train, self.validation)", "merged = self.train")],
        FAIR_TESTS,
        "the test ranking does not exclude the validation items and the refit ignores them",
    ),
    "objective_read_on_test": (
        "recoeval_tracking/app/pipeline.py",
        [
            (
                '            cfg.get("objective"), means, val_means, extra, validation is not None\n',
                '            cfg.get("objective"), means, val_means, extra, False\n',
            )
        ],
        FAIR_TESTS,
        "a search's objective is read on test",
    ),
    "baseline_budget_ignored": (
        "recoeval_tracking/app/study.py",
        [
            (
                "extra = tuned_overrides(configurations, self.budget, int(seed or 0))",
                "extra = tuned_overrides(configurations, 1, int(seed or 0))",
            )
        ],
        FAIR_TESTS,
        "baselines get one configuration whatever the grid's budget",
    ),
    "no_refit": (
        "recoeval_tracking/app/pipeline.py",
        [("    if wanted.refit and can_refit:\n", "    if False:\n")],
        FAIR_TESTS,
        "the chosen configuration is tested without its refit on train + validation",
    ),
    "whole_space_not_counted": (
        "recoeval_tracking/app/study.py",
        [
            (
                "whole = [n for n, b in budgets.items() if b < top and sizes.get(n) == b]",
                "whole = []",
            )
        ],
        FAIR_TESTS,
        "a baseline that ran its whole, smaller space is called an unequal budget",
    ),
}

SETS = {"issue18": ISSUE18, "audit": AUDIT, "security": SECURITY, "fair": FAIR}


def apply(source: str, replacements: list[tuple[str, str]], where: str) -> str:
    """``source`` with each replacement made; each ``old`` must occur exactly once."""
    for old, new in replacements:
        n = source.count(old)
        if n != 1:
            raise LookupError(f"{where}: {old!r} occurs {n} times (expected once)")
        source = source.replace(old, new)
    return source
