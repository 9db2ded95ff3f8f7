"""The verification engine behind `channelopt verify` (docs/cli.md): every case of every theorem is
judged (check.py), the verdict and the worst counterexample are computed, and where a theorem
fails the candidate conditions are tried on the same grid (`condition_found`)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


from ..errors import ChannelOptError
from ..io import jsonable
from . import Outcome, Theorem
from .check import VERIFY_TOL

ORDER = {"holds": 0, "suboptimal": 1, "infeasible": 2}


@dataclass
class Report:
    theorem: Theorem
    outcomes: list[Outcome] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: int = 0

    @property
    def verdict(self) -> str:
        kinds = {o.kind for o in self.outcomes}
        return ("infeasible-somewhere" if "infeasible" in kinds else
                "suboptimal-somewhere" if "suboptimal" in kinds else "holds")

    @property
    def worst(self) -> Outcome | None:
        bad = [o for o in self.outcomes if o.kind != "holds"]
        if not bad:
            return None
        return max(bad, key=lambda o: (ORDER[o.kind], o.gap))

    @property
    def condition_found(self) -> str | None:
        """The candidate condition that holds on the most cases while every case it admits holds."""
        if self.verdict == "holds":
            return None
        best, cover = None, 0
        for text, pred in self.theorem.candidates:
            admitted = [o for o in self.outcomes if pred(o.inputs)]
            if admitted and all(o.kind == "holds" for o in admitted) and len(admitted) > cover:
                best, cover = f"{text} (holds on all {len(admitted)} grid cases that satisfy it)", len(admitted)
        return best

    def to_json(self) -> dict:
        th = self.theorem
        out = {**th.describe(), "cases": len(self.outcomes), "verdict": self.verdict,
               "counts": {k: sum(o.kind == k for o in self.outcomes) for k in ORDER}, "tolerance": VERIFY_TOL}
        if self.skipped:
            out["not_applicable"] = self.skipped
        if self.errors:
            out["errors"] = self.errors
        if self.condition_found:
            out["condition_found"] = self.condition_found
        w = self.worst
        if w is not None:
            out["worst"] = {"kind": w.kind, "inputs": w.inputs, "claimed": w.claimed, "optimum": w.optimum,
                            "leakage_of_claim": w.leakage_of_claim, "gap": w.gap}
        return jsonable(out)


def run(theorems: list[Theorem], quick: bool = False, progress: bool = True) -> list[Report]:
    """Judge every case of each theorem (exact audit against the claimed channel, certified optimum without closed forms).

    Parameters
    ----------
    theorems : list of Theorem
        The claims.
    quick : bool, optional
        The coarse grid.
    progress : bool, optional
        A tqdm bar on stderr.

    Returns
    -------
    list of Report
        Per theorem: the outcomes, the verdict, the worst case and the condition found.
    """
    from tqdm import tqdm

    jobs = []
    reports = []
    for th in theorems:
        rep = Report(th)
        cases = th.cases(quick)
        for c in cases:
            if th.applies(c):
                jobs.append((rep, c))
            else:
                rep.skipped += 1
        reports.append(rep)
    for rep, case in tqdm(jobs, desc="verify", unit="case", disable=not progress, leave=False):
        try:
            rep.outcomes.append(rep.theorem.check(case))
        except ChannelOptError as e:     # a case that cannot be judged is reported, never guessed
            rep.errors.append(f"{json.dumps(jsonable(case))}: {e}")
    return reports


def _fmt_worst(rep: Report) -> str:
    w = rep.worst
    if w is None:
        return "-"
    if w.kind == "infeasible" and w.leakage_of_claim is not None and not isinstance(w.leakage_of_claim, dict):
        return f"{w.kind}: leakage {w.leakage_of_claim:.4g} (excess {w.gap:.3g})"
    return f"{w.kind}: gap {w.gap:.4g}"


def table(reports: list[Report]) -> str:
    rows = [("theorem", "citation", "cases", "verdict", "worst")]
    for r in reports:
        rows.append((r.theorem.id, r.theorem.citation, str(len(r.outcomes)), r.verdict,
                     _fmt_worst(r) + (f"  [{len(r.errors)} errors]" if r.errors else "")))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row[:4], widths)) + "  " + row[4] for row in rows)


def markdown(reports: list[Report], quick: bool) -> str:
    lines = ["# Closed-form verification report", "",
             f"`channelopt verify{' --quick' if quick else ''}`; tolerance {VERIFY_TOL:g} (see channelopt/theorems/check.py).",
             "", "| theorem | citation | cases | verdict | worst | condition found |", "|---|---|---|---|---|---|"]
    for r in reports:
        lines.append(f"| {r.theorem.id} | {r.theorem.citation} | {len(r.outcomes)} | {r.verdict} | {_fmt_worst(r)} | "
                     f"{r.condition_found or ''} |")
    for r in reports:
        lines += ["", f"## {r.theorem.id}", "", f"{r.theorem.claim} ({r.theorem.citation}; stated conditions: "
                  f"{r.theorem.conditions or 'none'}).", ""]
        counts = r.to_json()["counts"]
        lines.append(f"Cases: {len(r.outcomes)} judged ({counts['holds']} hold, {counts['infeasible']} infeasible, "
                     f"{counts['suboptimal']} suboptimal)" + (f", {r.skipped} outside the stated conditions" if r.skipped else "")
                     + (f", {len(r.errors)} could not be judged" if r.errors else "") + ".")
        w = r.worst
        if w is not None:
            lines += ["", "Worst counterexample:", "", "```json", json.dumps(r.to_json()["worst"], indent=1), "```"]
        if r.theorem.axes and r.theorem.coords:
            lines += ["", f"![{r.theorem.id}]({r.theorem.id}.png)"]
    return "\n".join(lines) + "\n"


def plot_map(rep: Report, path: Path) -> None:
    """`plots.verify_map` of the report, saved to `path` (through a temporary file)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..plots import verify_map

    fig, ax = plt.subplots(figsize=(5.5, 4))
    verify_map(rep, ax=ax)
    fig.tight_layout()
    tmp = path.with_name(f".{path.name}.tmp.png")
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    tmp.replace(path)


def write_worst(report: Report, out: Path) -> list[Path]:
    """The worst counterexample of a channel claim as `<id>-worst.toml` (the problem) and
    `<id>-claimed.csv` (the claimed channel), so that `channelopt audit <id>-worst.toml --channel
    <id>-claimed.csv` and `channelopt solve <id>-worst.toml` reproduce the finding without the
    registry. [] when the claim holds everywhere or its worst case is a value or a bound (its
    inputs are in verify.json)."""
    from ..io import problem_to_toml, write_atomic

    w = report.worst
    if w is None or w.problem is None or "channel" not in w.claimed:
        return []
    out.mkdir(parents=True, exist_ok=True)
    problem = w.problem
    if not problem.name:
        import dataclasses

        problem = dataclasses.replace(problem, name=f"{report.theorem.id}: worst case ({w.kind}) of "
                                                    f"{report.theorem.citation}")
    toml, csv = out / f"{report.theorem.id}-worst.toml", out / f"{report.theorem.id}-claimed.csv"
    write_atomic(toml, problem_to_toml(problem))
    write_atomic(csv, "\n".join(",".join(repr(float(v)) for v in row) for row in w.claimed["channel"]) + "\n")
    return [toml, csv]


def write(reports: list[Report], out: Path, quick: bool) -> list[Path]:
    from ..io import write_atomic

    out.mkdir(parents=True, exist_ok=True)
    written = [out / "verify.md", out / "verify.json"]
    write_atomic(written[0], markdown(reports, quick))
    write_atomic(written[1], json.dumps({"theorems": [r.to_json() for r in reports]}, indent=1) + "\n")
    for r in reports:
        if r.theorem.axes and r.theorem.coords and r.outcomes:
            plot_map(r, out / f"{r.theorem.id}.png")
            written.append(out / f"{r.theorem.id}.png")
    return written
