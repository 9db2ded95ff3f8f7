"""Plots from the API, each returning its matplotlib Axes (pass `ax=` to draw into your own).

    channelopt.plots.tradeoff(problem, [co.LIP(1), co.LDP(1)], epsilon=np.linspace(0.2, 4, 12))
    channelopt.plots.audit_bars(problem, result.channel)
    channelopt.plots.verify_map(report)           # a report of channelopt.theorems.verify.run

`Result.plot` (the channel's heat map) and `Sweep.plot` (one utility-privacy curve) are methods;
they, `tradeoff` and the `channelopt reproduce` figures draw their curves with `curve`.
"""

from __future__ import annotations

import dataclasses

import numpy as np

VERDICT_COLORS = {"holds": "tab:green", "suboptimal": "tab:orange", "infeasible": "tab:red"}


def _axes(ax, size=(5.5, 4)):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=size)[1]


def curve(x, y, ax=None, label: str | None = None, style: str = "-", certified=None, violated=None):
    """One utility-privacy curve: the line through (x, y); where `certified` (a boolean mask) is
    given, certified optima as filled markers and the other points hollow; where `violated` is
    given, the points whose channel fails its notion as red crosses. Returns the Axes.

    Parameters
    ----------
    x, y : array_like
        The points, in drawing order.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    label : str, optional
        The legend entry of the line.
    style : str, optional
        A matplotlib format string for the line (e.g. "o--").
    certified, violated : array_like of bool, optional
        Per point: certified optimum; channel violates the notion it was drawn for.

    Returns
    -------
    matplotlib Axes
    """
    ax = _axes(ax)
    x, y = np.asarray(x, float), np.asarray(y, float)
    (line,) = ax.plot(x, y, style, ms=3.5, label=label)
    if certified is not None:
        ok = np.asarray(certified, bool)
        ax.plot(x[ok], y[ok], "o", color=line.get_color(), label="certified optimum")
        if (~ok).any():
            ax.plot(x[~ok], y[~ok], "o", mfc="none", color=line.get_color(), label="not certified")
    if violated is not None:
        bad = np.asarray(violated, bool)
        if bad.any():
            ax.plot(x[bad], y[bad], "rx", ms=8, mew=2, label="violates the notion")
    return ax


def tradeoff(problem, notions, epsilon, ax=None, solver: str | None = None):
    """The certified optimum of `problem` under each notion alone, over the budgets `epsilon`:
    one curve per notion (its `epsilon` replaced by each value, `Notion.with_budget`), certified
    optima filled, other statuses hollow. Returns the Axes."""
    from .sweep import sweep

    ax = _axes(ax)
    for notion in notions:
        if "epsilon" not in notion.budgets():
            raise ValueError(f"notion {notion.name!r} has no scalar epsilon to vary")
        s = sweep(dataclasses.replace(problem, privacy=(notion,)), epsilon=list(epsilon), solver=solver)
        s.plot(ax=ax, label=notion.name)
    handles, labels = ax.get_legend_handles_labels()
    keep = [i for i, lab in enumerate(labels) if lab not in ("certified optimum", "not certified")]
    ax.legend([handles[i] for i in keep], [labels[i] for i in keep], fontsize=8,
              title="filled: certified optimum", title_fontsize=7)
    ax.set_title(f"{problem.utility.kind} against the budget", fontsize=9)
    return ax


def audit_bars(problem, channel, ax=None):
    """The exact leakage of `channel` under every budget-free measure (`audit.measures`: ldp, lip,
    di, mil, mip, ...), with the problem's own notions' budgets marked where they share a name.
    Returns the Axes."""
    from .audit import audit

    report = audit(problem, channel)
    names, values = [], []
    for k, v in report.measures.items():
        if isinstance(v, dict):        # ALIP's two sides
            for side, x in v.items():
                names.append(f"{k} {side}")
                values.append(x)
        elif np.ndim(v) == 0:
            names.append(k)
            values.append(v)
    values = np.array(values, dtype=float)
    shown = np.where(np.isfinite(values), values, np.nan)
    ax = _axes(ax, (max(5.0, 0.45 * len(names)), 3.5))
    ax.bar(range(len(names)), shown, color="tab:blue")
    for i, v in enumerate(values):
        if not np.isfinite(v):
            ax.annotate("inf", (i, 0), ha="center", va="bottom", fontsize=7)
    for notion in problem.privacy:
        budget = notion.budgets().get("epsilon")
        if notion.name in names and budget is not None and np.ndim(budget) == 0:
            i = names.index(notion.name)
            ax.hlines(budget, i - 0.4, i + 0.4, colors="tab:red", label=f"{notion.name} budget")
    ax.set_xticks(range(len(names)), names, rotation=60, ha="right", fontsize=7)
    ax.set_ylabel("leakage (nats)")
    ax.set_title("exact leakage of the channel", fontsize=9)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7)
    return ax


def verify_map(report, ax=None):
    """A theorem's verdict over its cases (`theorems.verify.Report`: the grid and the random cases):
    one square per distinct point, coloured by the worst outcome there. Returns the Axes."""
    from .theorems.verify import ORDER

    th = report.theorem
    cells: dict = {}
    for o in report.judged:                     # the grid and the random cases
        xy = th.coords(o.inputs)
        if ORDER[o.kind] >= ORDER[cells.get(xy, "holds")]:
            cells[xy] = o.kind
    ax = _axes(ax)
    for kind, c in VERDICT_COLORS.items():
        pts = np.array([xy for xy, k in cells.items() if k == kind]).reshape(-1, 2)
        ax.scatter(pts[:, 0], pts[:, 1], c=c, s=50 if len(cells) < 200 else 12, label=kind, marker="s")
    xs = [xy[0] for xy in cells]
    if xs and min(xs) > 0 and max(xs) / min(xs) > 50:
        ax.set_xscale("log")
    ax.set(xlabel=th.axes[0], ylabel=th.axes[1], title=f"{th.id}: {report.klass}")
    ax.legend(fontsize=8)
    return ax
