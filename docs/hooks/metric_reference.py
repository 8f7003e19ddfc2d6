"""MkDocs hook: the metric reference, written from the registry at build time.

``docs/reference/metrics.md`` holds the markers ``<!-- metric-table -->``,
``<!-- metric-details -->`` and ``<!-- nan-rules -->``; :func:`on_page_markdown` replaces them with
what :func:`metric_table`, :func:`metric_details` and :func:`nan_rules` write from
:data:`recoeval_tracking.metrics.registry.METRICS`, :data:`recoeval_tracking.metrics.profiles.PROFILES`
and :data:`recoeval_tracking.metrics.definitions.NAN_RULES`. Nothing about a metric is typed by hand
on the page, so the page cannot drift from the code (``tests/docs/test_metric_reference.py``
checks that every registered metric and every profile's use of it appears).
"""

from __future__ import annotations

import re
from typing import Any

from recoeval_tracking.metrics.definitions import NAN_RULES
from recoeval_tracking.metrics.profiles import PROFILES
from recoeval_tracking.metrics.registry import METRICS, MetricSpec, column_name, curve_name

TABLE_MARK = "<!-- metric-table -->"
DETAILS_MARK = "<!-- metric-details -->"
NAN_MARK = "<!-- nan-rules -->"

_KINDS = {
    "at_k": "per user, at a cutoff k (one column per k, and an @1..K curve with `cumulative`)",
    "whole": "per user, over the whole ranking of the pool (no cutoff)",
    "list": "per user, from the user's top-K list",
    "aggregate": "one number over all evaluated users",
}
_KIND_SHORT = {
    "at_k": "@k",
    "whole": "whole ranking",
    "list": "top-K list",
    "aggregate": "over users",
}
#: A parenthesis that cites a paper (a year) or a peer library's own name for the metric.
_CITATION = re.compile(
    r"\(([^()]*(?:\d{4}|recometrics|ranx|trec_eval|RecBole|Hivemall|"
    r"implicit|Elliot)[^()]*)\)"
)


def anchor(name: str) -> str:
    """The page anchor of a metric (dots are not kept in anchors)."""
    return "metric-" + name.replace(".", "-")


def citations(spec: MetricSpec) -> list[str]:
    """The citations and peer-library names written in the metric's registered formula."""
    found = [m.group(1).strip() for m in _CITATION.finditer(spec.formula)]
    if not found and spec.stage == "kernel":
        # The registry's module docstring: every per-user rank metric follows recometrics.
        found = ["recometrics `calc.reco.metrics` documentation (D. Cortes)"]
    return found


def profiles_using(name: str) -> list[tuple[str, list[str]]]:
    """``(profile, the library's names for the metric)`` for each profile that evaluates it."""
    out = []
    for profile, spec in PROFILES.items():
        if name in spec["metrics"]:
            aliases = sorted(
                {alias for alias, target in spec.get("aliases", {}).items() if target == name}
            )
            out.append((profile, aliases))
    return out


def family_members(spec: MetricSpec) -> list[str]:
    """The other registered variants of the same metric family."""
    if not spec.family:
        return []
    return [s.name for s in METRICS.values() if s.family == spec.family and s.name != spec.name]


def nan_rule(spec: MetricSpec) -> list[str]:
    """When the metric is NaN (or left out), from the registry's flags and formula."""
    link = "[NaN rules](#nan-rules)"
    rules: list[str] = []
    if spec.stage == "aggregate":
        rules.append(
            f"computed over the evaluated users: users that are NaN by the {link} "
            "contribute nothing"
        )
    else:
        rules.append(f"NaN for a user excluded by the {link} (`nan_reason` names which)")
    if spec.stage == "kernel":
        if spec.name in ("dcg", "dcg_exp"):
            rules.append(
                "defined also when every item of the pool is a positive (`only_positives`)"
            )
        else:
            rules.append("NaN when every item of the pool is a positive (`only_positives`)")
        if spec.at_k and spec.order_free:
            rules.append(
                "NaN at cutoff k when the pool holds k items or fewer (`pool_le_k`: "
                "the list is the whole pool)"
            )
        if spec.family == "ndcg":
            rules.append("NaN when no test value (gain) is > 0 (`ndcg_no_gain`)")
    for sentence in re.findall(r"(NaN (?:if|when) [^;()]+)", spec.formula):
        rules.append(sentence.strip().rstrip(",."))
    if spec.needs:
        rules.append(
            "reads the per-user " + ", ".join(f"`{n}`" for n in spec.needs) + " of the same pass"
        )
    if spec.needs_item_vectors:
        rules.append(
            "needs item vectors (item factors or `item_features`): left out, and "
            "recorded as left out in the definitions, when there are none"
        )
    if not spec.average_ties:
        rules.append(
            'refused with `ties="average"` (no closed-form expectation over tied '
            'orderings) and left out of `"all"` then'
        )
    if spec.extra_pass:
        rules.append(
            'under a tie policy other than `average`, `"all"` and `"standard"` leave '
            "it out (its ties differ from the run's `roc_auc`): name it to get it"
        )
    return rules


def metric_table() -> str:
    """One row per registered metric: name, kind, direction, family and profiles."""
    lines = [
        "| metric | kind | better | variant of | in `standard` | profiles |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for spec in METRICS.values():
        profs = ", ".join(p for p, _ in profiles_using(spec.name)) or "-"
        family = f"`{spec.family}`" if spec.family and spec.family != spec.name else "-"
        lines.append(
            f"| [`{spec.name}`](#{anchor(spec.name)}) | {_KIND_SHORT[spec.kind]} | "
            f"{'higher' if spec.greater_is_better else 'lower'} | {family} | "
            f"{'yes' if spec.standard else 'no'} | {profs} |"
        )
    return "\n".join(lines)


def _columns(spec: MetricSpec) -> str:
    if spec.at_k:
        return f"`{column_name(spec, 10)}` at k = 10; curve `{curve_name(spec)}` (MLflow step = k)"
    return f"`{column_name(spec, 10)}`"


def metric_details() -> str:
    """A section per registered metric with everything the registry says about it."""
    out: list[str] = []
    for spec in METRICS.values():
        out.append(f"### `{spec.name}` {{#{anchor(spec.name)}}}\n")
        out.append(f"```text\n{spec.formula}\n```\n")
        rows: list[tuple[str, Any]] = [
            ("Kind", _KINDS[spec.kind]),
            (
                "Direction",
                "higher is better"
                if spec.greater_is_better
                else "lower is better (leaderboards, report marks and searches minimise it)",
            ),
            ("Column", _columns(spec)),
            ("Label", f"`{spec.label}` (recometrics-style output)"),
        ]
        if spec.family:
            params = ", ".join(f"{k} = {v}" for k, v in spec.variant) or "-"
            others = ", ".join(f"[`{n}`](#{anchor(n)})" for n in family_members(spec)) or "none"
            whose = (
                f"the `{spec.family}` family"
                if spec.family == spec.name
                else f"a variant of `{spec.family}`"
            )
            rows.append(("Variant", f"{whose} ({params}); other variants: {others}"))
        rows.append(("Source", "; ".join(citations(spec)) or "none recorded in the registry"))
        rows.append(("NaN rule", "; ".join(nan_rule(spec))))
        sets = '`"all"`' + (', `"standard"`' if spec.standard else "")
        rows.append(("Metric sets", sets))
        used = profiles_using(spec.name)
        rows.append(
            (
                "Profiles",
                "; ".join(
                    f"`{p}`" + (f" ({', '.join(f'`{a}`' for a in aliases)})" if aliases else "")
                    for p, aliases in used
                )
                or "none",
            )
        )
        out.extend(f"- **{key}**: {value}" for key, value in rows)
        out.append("")
    return "\n".join(out)


def nan_rules() -> str:
    """The NaN rules in the order they are checked."""
    return "\n".join(
        f"{i}. `{key}`: {text}" for i, (key, text) in enumerate(NAN_RULES.items(), start=1)
    )


def render(markdown: str) -> str:
    """``markdown`` with the markers replaced by the generated sections."""
    return (
        markdown.replace(TABLE_MARK, metric_table())
        .replace(DETAILS_MARK, metric_details())
        .replace(NAN_MARK, nan_rules())
    )


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """MkDocs event: fill the metric reference page."""
    if TABLE_MARK in markdown or DETAILS_MARK in markdown or NAN_MARK in markdown:
        return render(markdown)
    return markdown
