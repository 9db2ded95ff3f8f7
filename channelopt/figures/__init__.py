"""Reproductions of the papers' utility-privacy figures, written as CSV + PNG.

Each figure is a function `(quick: bool) -> Figure` registered in FIGURES. Curves that a paper
drew from a closed form are drawn twice here: the closed form (its channel audited, infeasible
points marked) and the certified optimum, so a difference is visible and listed in the notes.

    channelopt reproduce tdsc-fig7 cns-fig5 --out figures/
"""

from __future__ import annotations

import csv
import io
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import SupportsFloat
from pathlib import Path

from ..errors import ProblemError
from ..references import REFERENCES


ON_POINT: ContextVar = ContextVar("ON_POINT", default=None)
"""Called with no argument each time a figure adds a point (`channelopt reproduce` advances its
per-point progress bar with it)."""


@dataclass
class Figure:
    id: str
    title: str
    xlabel: str
    ylabel: str
    logy: bool = False
    rows: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, panel: str, series: str, x: SupportsFloat, y: SupportsFloat, **extra) -> None:
        self.rows.append({"panel": panel, "series": series, "x": float(x), "y": float(y), **extra})
        tick = ON_POINT.get()
        if tick is not None:
            tick()

    def csv_text(self) -> str:
        keys = ["panel", "series", "x", "y"] + sorted({k for r in self.rows for k in r} - {"panel", "series", "x", "y"})
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=keys, lineterminator="\n")
        w.writeheader()
        for r in self.rows:
            w.writerow({k: (repr(v) if isinstance(v, float) else v) for k, v in r.items()})
        return buf.getvalue()

    def plot(self, path: Path) -> None:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from ..plots import curve

        panels = list(dict.fromkeys(r["panel"] for r in self.rows))
        fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.2), squeeze=False)
        for ax, panel in zip(axes[0], panels):
            rows = [r for r in self.rows if r["panel"] == panel]
            for series in dict.fromkeys(r["series"] for r in rows):
                pts = [r for r in rows if r["series"] == series]
                style = ("o--" if "closed form" in series else "s:" if "simulated" in series
                         else "^-" if "best" in series or "worst" in series else "o-")
                curve([r["x"] for r in pts], [r["y"] for r in pts], ax=ax, label=series, style=style,
                      violated=[r.get("feasible") is False for r in pts])
            ax.set(xlabel=self.xlabel, ylabel=self.ylabel, title=panel)
            if self.logy:
                ax.set_yscale("log")
            ax.grid(alpha=0.3)
            legend = dict(zip(*ax.get_legend_handles_labels()[::-1]))      # one entry per label
            ax.legend(legend.values(), legend.keys(), fontsize=7)
        fig.suptitle(self.title, fontsize=10)
        fig.tight_layout()
        tmp = path.with_name(f".{path.name}.tmp.png")
        fig.savefig(tmp, dpi=110)
        plt.close(fig)
        tmp.replace(path)

    def write(self, out: Path) -> list[Path]:
        from ..io import write_atomic

        out.mkdir(parents=True, exist_ok=True)
        csv_path, png_path = out / f"{self.id}.csv", out / f"{self.id}.png"
        write_atomic(csv_path, self.csv_text())
        self.plot(png_path)
        return [csv_path, png_path]


def _registry() -> dict:
    from . import adult, alip, calip, continuous, encoded, lip_cns, lip_tdsc
    return {**lip_tdsc.FIGURES, **lip_cns.FIGURES, **adult.FIGURES, **encoded.FIGURES, **calip.FIGURES,
            **continuous.FIGURES, **alip.FIGURES}


def figure_ids() -> list[str]:
    return list(_registry())


def make(fig_id: str, quick: bool = False) -> Figure:
    reg = _registry()
    if fig_id not in reg:
        raise ProblemError(f"unknown figure {fig_id!r}; known: {', '.join(reg)}")
    return reg[fig_id](quick)




def describe(fig_id: str) -> tuple[str, str, str]:
    """(paper short name, result, description) of a figure, from the title its function gives
    (e.g. "LIP-TDSC Fig 7: prior-aware vs prior-free" -> ("LIP-TDSC", "Fig 7", "prior-aware vs
    prior-free")), read from the function's source without running it."""
    import inspect
    import re

    fn = _registry()[fig_id]
    m = re.search(r'Figure\(\s*"' + re.escape(fig_id) + r'",\s*f?"([^"]+)"', inspect.getsource(fn))
    title = m.group(1) if m else ""
    head, _, rest = title.partition(": ")
    code, _, result = head.partition(" ")
    if code in REFERENCES and rest:
        result, on, where = result.partition(" on ")   # "Fig 6 style on Retail (...)"
        return code, result, f"on {where}: {rest}" if on else rest
    return code if code in REFERENCES else "", "", title
