"""What a comparison left out, in words: the metrics it compares for no run (the baseline or
every other run lacks them) and the other left-out (metric, reason) pairs, with the runs each
concerns. One rule for the report's pages (through :mod:`recoeval_tracking.reporting.view`), the
report command's terminal and a printed :class:`~recoeval_tracking.reporting.compare.Comparison`.
Reads a report's ``left_out`` table, ``metrics``, ``runs`` and ``baseline`` only."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["compared_metrics", "uncompared_line", "left_out_lines"]


def compared_metrics(
    report: Any,
) -> tuple[list[str], dict[str, tuple[str, tuple[str, ...]]]]:
    """The metrics the report compares, and those it compares for no run, each with its reason
    and the names of the runs that have it: the baseline has no value of them, or every other
    run lacks them (the left-out table's rows)."""
    table = report.left_out
    if not len(table):
        return list(report.metrics), {}
    others = {r.run_id for r in report.runs} - {report.baseline}
    uncompared: dict[str, tuple[str, tuple[str, ...]]] = {}
    for metric in report.metrics:
        rows = table[table["metric"] == metric]
        own = rows[(rows["run_id"] == report.baseline) & (rows["left_out"] == "values")]
        if len(own) or (others and others <= set(rows["run_id"])):
            reason = str((own if len(own) else rows)["reason"].iloc[0])
            lacking = set(rows.loc[rows["left_out"] == "values", "run_id"])
            holders = tuple(r.name for r in report.runs if r.run_id not in lacking)
            uncompared[metric] = (reason.removeprefix(f"no {metric} column: "), holders)
    return [m for m in report.metrics if m not in uncompared], uncompared


def uncompared_line(
    uncompared: Mapping[str, tuple[str, tuple[str, ...]]],
    escape: Callable[[str], str] = str,
    tail: str = "",
) -> str:
    """One line: the metrics left out of every comparison (:func:`compared_metrics`), the runs
    that have them, and why, each reason once (``ils needs item vectors ...`` and ``diversity
    needs item vectors ...`` read ``each needs item vectors ...``); names and reasons through
    ``escape`` (Markdown's on the page, none on a terminal), ``tail`` after the parenthesis
    (the page's pointer to its tables)."""
    given = [reason for reason, _ in uncompared.values()]
    reasons = dict.fromkeys(given)
    if len(uncompared) > 1:
        families = [m.rsplit("_at_", 1)[0] for m in uncompared]
        stripped = [r.removeprefix(f"{f} ") for f, r in zip(families, given, strict=True)]
        if len(set(stripped)) == 1 and stripped[0] not in given:
            reasons = {f"each {stripped[0]}": None}
    why = "; ".join(escape(r) for r in reasons)
    holders = {h for _, h in uncompared.values()}
    only = next(iter(holders)) if len(holders) == 1 else ()
    where = (
        f"only {', '.join(escape(n) for n in only)} has {'them' if len(uncompared) > 1 else 'it'}; "
        if only
        else ""
    )
    return f"Not compared: {', '.join(uncompared)} ({where}{why}){tail}"


def left_out_lines(report: Any, where: str = "") -> list[str]:
    """The plain-text lines on what ``report`` left out, for a terminal or a printed
    comparison: the metrics compared for no run (:func:`uncompared_line`, one line for each set
    of runs that have them), then each
    other left-out (metric, reason) once with the runs it concerns; ``where`` (e.g.
    ``" (dataset ml-1m)"``) after each line's first words."""
    lines = []
    _, uncompared = compared_metrics(report)
    by_holders: dict[tuple[str, ...], dict[str, tuple[str, tuple[str, ...]]]] = {}
    for metric, (reason, holders) in uncompared.items():  # one line per set of runs having them
        by_holders.setdefault(holders, {})[metric] = (reason, holders)
    for group in by_holders.values():
        line = uncompared_line(group)
        head, rest = line.split(": ", 1)
        lines.append(f"{head.lower()}{where}: {rest}")
    others = report.left_out[~report.left_out["metric"].isin(list(uncompared))]
    for (metric, reason), rows in others.groupby(["metric", "reason"], sort=False):
        names = list(rows["system"])
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")
        lines.append(f"left out{where}: {metric} of {shown}: {reason}")
    return lines
