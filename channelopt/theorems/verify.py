"""The verification engine behind `channelopt verify` (docs/cli.md): every case of every theorem is
judged (check.py), the verdict and the worst counterexample are computed, and where a theorem
fails the candidate conditions are tried on the same grid (`condition_found`)."""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np


from ..errors import ChannelOptError
from ..io import jsonable
from . import Outcome, Theorem
from .check import VERIFY_TOL

ORDER = {"holds": 0, "suboptimal": 1, "infeasible": 2}
CLASSES = ("holds", "holds-under-condition", "presentation", "infeasible-somewhere", "suboptimal-somewhere")
RANDOM_FULL, RANDOM_QUICK = 1000, 12
"""Random cases per claim in the full run and with --quick."""
CONCENTRATIONS = (0.2, 0.5, 1.0, 5.0)
"""Dirichlet concentrations of the random priors (0.2: very skewed; 5: near uniform)."""


@dataclass
class Report:
    theorem: Theorem
    outcomes: list[Outcome] = field(default_factory=list)
    """The grid cases' outcomes."""
    errors: list[str] = field(default_factory=list)
    skipped: int = 0
    random: list[Outcome] = field(default_factory=list)
    """The seeded random cases' outcomes (`random_cases`)."""
    corrected: list[Outcome] = field(default_factory=list)
    """The repaired statement (`Theorem.corrected`) judged on the same cases, grid then random."""

    @property
    def judged(self) -> list[Outcome]:
        return self.outcomes + self.random

    @property
    def verdict(self) -> str:
        kinds = {o.kind for o in self.judged}
        return ("infeasible-somewhere" if "infeasible" in kinds else
                "suboptimal-somewhere" if "suboptimal" in kinds else "holds")

    @property
    def worst(self) -> Outcome | None:
        bad = [o for o in self.judged if o.kind != "holds"]
        if not bad:
            return None
        return max(bad, key=lambda o: (ORDER[o.kind], o.gap))

    @property
    def smallest(self) -> Outcome | None:
        """The cleanest counterexample: a grid case (round numbers) before a random one, then the
        fewest symbols, then the largest violation."""
        bad = [(i, o) for i, o in enumerate(self.judged) if o.kind != "holds"]
        if not bad:
            return None
        return min(bad, key=lambda io: (io[0] >= len(self.outcomes), _size(io[1].inputs), -io[1].gap))[1]

    def condition(self) -> dict | None:
        """The candidate condition that admits the most cases while every case it admits holds,
        with whether it is also necessary on the sampled cases (every case outside it fails)."""
        if self.verdict == "holds":
            return None
        # with a repair that does not hold everywhere, the condition is where the repaired statement holds
        repaired = self.theorem.corrected is not None and self.corrected
        judged = self.corrected if repaired and any(o.kind != "holds" for o in self.corrected) else self.judged
        best = None
        for text, pred in self.theorem.candidates:
            inside = [o for o in judged if pred(o.inputs)]
            if not inside or any(o.kind != "holds" for o in inside):
                continue
            outside = [o for o in judged if not pred(o.inputs)]
            holding_outside = sum(o.kind == "holds" for o in outside)
            if best is None or len(inside) > best["admitted"]:
                best = {"text": text, "admitted": len(inside), "outside": len(outside),
                        "holding_outside": holding_outside, "sufficient": True, "necessary": holding_outside == 0}
        return best

    @property
    def condition_found(self) -> str | None:
        c = self.condition()
        if c is None:
            return None
        tail = ("necessary too: every case outside it fails" if c["necessary"] else
                f"sufficient only: {c['holding_outside']} of the {c['outside']} cases outside it hold")
        return f"{c['text']} (holds on all {c['admitted']} cases that satisfy it; {tail})"

    @property
    def klass(self) -> str:
        """One of CLASSES: holds; presentation (the claim fails but its repaired statement holds on
        every case); holds-under-condition (a candidate condition admits only holding cases);
        otherwise infeasible- or suboptimal-somewhere."""
        if self.verdict == "holds":
            return "holds"
        if self.theorem.corrected is not None and self.corrected and all(o.kind == "holds" for o in self.corrected):
            return "presentation"
        if self.condition() is not None:
            return "holds-under-condition"
        return self.verdict

    def failure_rate(self) -> dict | None:
        """Failures among the random cases with a 95% Clopper-Pearson interval (None without them)."""
        n = len(self.random)
        if not n:
            return None
        from scipy.stats import binomtest

        k = sum(o.kind != "holds" for o in self.random)
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        return {"cases": n, "failures": k, "rate": k / n, "ci95": [float(ci.low), float(ci.high)]}

    def region(self) -> str | None:
        """Where the claim fails, in one line: the single threshold on one parameter (budget,
        smallest or largest prior mass, number of symbols, or a scalar input) that best separates
        the failing cases from the holding ones, with the failure rates on both sides."""
        cases = self.judged
        fails = np.array([o.kind != "holds" for o in cases])
        if not fails.any():
            return None
        if fails.all():
            return f"fails on every one of the {len(cases)} cases judged"
        feats = _features([o.inputs for o in cases])
        best: tuple | None = None
        for name, values in _labels([o.inputs for o in cases]).items():
            for v in set(values):
                side = np.array([x == v for x in values])
                acc = _balanced(side, fails)
                if best is None or acc > best[0] + 1e-12:
                    best = (acc, f"{name} =", v, None, side)
        for name, x in feats.items():
            for t in np.unique(x)[:-1]:
                for below in (True, False):
                    side = x <= t if below else x > t
                    acc = _balanced(side, fails)
                    if best is None or acc > best[0] + 1e-12:
                        best = (acc, name, t, below, side)
        if best is None or best[0] < 0:
            return f"fails on {fails.sum()} of {len(cases)} cases, with no single parameter separating them"
        acc, name, t, below, side = best
        rate_in = fails[side].mean()
        rate_out = fails[~side].mean() if (~side).any() else 0.0
        where = f"{name} {t}" if below is None else f"{name} {'<=' if below else '>'} {t:.4g}"
        return (f"{where}: {rate_in:.0%} of the {side.sum()} cases there fail, "
                f"{rate_out:.0%} of the {(~side).sum()} elsewhere")

    def to_json(self) -> dict:
        th = self.theorem
        out = {**th.describe(), "cases": len(self.outcomes), "verdict": self.verdict,
               "counts": _counts(self.outcomes), "tolerance": VERIFY_TOL}
        if self.skipped:
            out["not_applicable"] = self.skipped
        if self.errors:
            out["errors"] = self.errors
        if self.condition_found:
            out["condition_found"] = self.condition_found
        w = self.worst
        if w is not None:
            out["worst"] = _case(w)
        out["class"] = self.klass
        cond = self.condition()
        if cond is not None:
            out["condition"] = cond
        rate = self.failure_rate()
        if rate is not None:
            out["random"] = {**rate, "counts": _counts(self.random)}
        if th.corrected is not None:
            out["correction"] = {"statement": th.correction, "cases": len(self.corrected),
                                 "holds": all(o.kind == "holds" for o in self.corrected)}
        region = self.region()
        if region is not None:
            out["region"] = region
        small = self.smallest
        if small is not None:
            out["smallest"] = _case(small)
        return jsonable(out)


def _counts(outcomes: list[Outcome]) -> dict:
    return {k: sum(o.kind == k for o in outcomes) for k in ORDER}


def _case(o: Outcome) -> dict:
    return {"kind": o.kind, "inputs": o.inputs, "claimed": o.claimed, "optimum": o.optimum,
            "leakage_of_claim": o.leakage_of_claim, "gap": o.gap}


def _size(inputs: dict) -> int:
    for key in ("prior", "epsilons", "raw_prior"):
        v = inputs.get(key)
        if isinstance(v, (list, tuple)):
            return len(v)
    return 0


def _features(inputs: list[dict]) -> dict[str, np.ndarray]:
    """Numeric parameters of the cases for `Report.region`: every scalar input present in all of
    them, and from a prior its smallest and largest mass and its size."""
    feats: dict[str, list] = {}
    for i in inputs:
        row: dict[str, float] = {}
        for k, v in i.items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                row[k] = float(v)
        P = i.get("prior")
        if P is None and "P1" in i:
            P = [1 - i["P1"], i["P1"]]
        if isinstance(P, (list, tuple)) and P and all(isinstance(x, (int, float)) for x in P):
            row["smallest prior mass"], row["largest prior mass"], row["d"] = min(P), max(P), float(len(P))
        for k, v in row.items():
            feats.setdefault(k, []).append(v)
    n = len(inputs)
    return {k: np.array(v) for k, v in feats.items() if len(v) == n and np.ptp(v) > 0}


def _balanced(side: np.ndarray, fails: np.ndarray) -> float:
    """Balanced accuracy of "fails exactly on `side`" (failures may be rare), or -1 when the side
    fails less often than the rest."""
    if side.all() or not side.any() or fails[side].mean() <= fails[~side].mean():
        return -1.0
    return 0.5 * (side[fails].mean() + (~side[~fails]).mean())


def _labels(inputs: list[dict]) -> dict[str, list[str]]:
    """String parameters present in every case (a measure, a mechanism, a form), for `Report.region`."""
    keys = [k for k, v in inputs[0].items() if isinstance(v, str)]
    return {k: [str(i.get(k)) for i in inputs] for k in keys
            if all(isinstance(i.get(k), str) for i in inputs) and len({i.get(k) for i in inputs}) > 1}


def random_cases(th: Theorem, rng: np.random.Generator, n: int) -> list[dict]:
    """n cases drawn around the claim's full grid: each copies a random grid case and redraws its
    numeric inputs over the grid's ranges. A `prior` becomes a Dirichlet draw (concentration from
    CONCENTRATIONS) of the same size (the grid's sizes, up to 6 symbols); it is kept when another
    input (a latent joint, scenarios, a second prior) is built on it. `priors` and `joint` are
    redrawn the same way; `epsilon`, `epsilons`, `epsilon_lower`, `epsilon_upper` log-uniformly over the grid's budgets;
    other real scalars uniformly (log-uniformly across decades) over their grid range. Integers,
    strings and printed values (`printed_*`) stay. [] when there is nothing to redraw.
    `Theorem.sample` replaces this for a claim with its own sampler."""
    if th.sample is not None:
        return th.sample(rng, n)
    grid = th.cases(False)
    ranges: dict[str, list[float]] = {}
    for c in grid:
        for k, v in c.items():
            if k.startswith("printed"):
                continue
            if isinstance(v, float):
                ranges.setdefault(k, []).append(v)
            elif k == "epsilons" and isinstance(v, list):
                ranges.setdefault(k, []).extend(float(x) for x in v)
    redrawable = set(ranges) | {"prior", "priors", "joint"}
    if not any(redrawable & set(c) for c in grid):
        return []

    def scalar(key: str) -> float:
        lo, hi = min(ranges[key]), max(ranges[key])
        if lo > 0 and hi / lo >= 10:
            return float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
        return float(rng.uniform(lo, hi))

    def dirichlet(size: int) -> list[float]:
        P = np.maximum(rng.dirichlet(np.full(size, CONCENTRATIONS[rng.integers(len(CONCENTRATIONS))])), 1e-6)
        return [float(x) for x in P / P.sum()]

    out = []
    for _ in range(n):
        case = dict(grid[rng.integers(len(grid))])
        tied = [k for k, v in case.items() if isinstance(v, (list, dict)) and k not in ("prior", "values")]
        if isinstance(case.get("prior"), list) and all(isinstance(x, (int, float)) for x in case["prior"]) and not tied:
            case["prior"] = dirichlet(len(case["prior"]))
        if isinstance(case.get("priors"), list):
            case["priors"] = [dirichlet(len(p)) for p in case["priors"]]
        if isinstance(case.get("joint"), list):
            shape = np.shape(case["joint"])
            case["joint"] = np.reshape(dirichlet(int(np.prod(shape))), shape).tolist()
        for k, v in list(case.items()):
            if k in ranges and isinstance(v, float):
                case[k] = scalar(k)
            elif k == "epsilons" and k in ranges and isinstance(v, list):
                drawn = [scalar(k) for _ in v]
                case[k] = sorted(drawn) if v == sorted(v) else drawn
        out.append(case)
    return out


def _cases(th: Theorem, quick: bool, samples: int | None, seed: int) -> tuple[list[dict], list[dict]]:
    """(grid cases, seeded random cases) of one claim."""
    n = (RANDOM_QUICK if quick else RANDOM_FULL) if samples is None else samples
    rng = np.random.default_rng([seed, zlib.crc32(th.id.encode())])
    return th.cases(quick), (random_cases(th, rng, n) if n else [])


def _judge_cases(th: Theorem, cases: list[dict]) -> list[tuple]:
    """One (outcome, repaired outcome, error) per case in order; (None, None, None) outside the
    stated conditions."""
    out: list[tuple] = []
    for case in cases:
        if not th.applies(case):
            out.append((None, None, None))
            continue
        try:
            o = th.check(case)
            out.append((o, th.corrected(case) if th.corrected is not None else None, None))
        except ChannelOptError as e:     # a case that cannot be judged is reported, never guessed
            out.append((None, None, f"{json.dumps(jsonable(case))}: {e}"))
    return out


def _report(th: Theorem, grid: list[tuple], random: list[tuple]) -> Report:
    rep = Report(th)
    for target, judged in ((rep.outcomes, grid), (rep.random, random)):
        for o, fixed, error in judged:
            if error is not None:
                rep.errors.append(error)
            elif o is None:
                rep.skipped += target is rep.outcomes
            else:
                target.append(o)
                if fixed is not None:
                    rep.corrected.append(fixed)
    return rep


def judge(th: Theorem, quick: bool = False, samples: int | None = None, seed: int = 0) -> Report:
    """Every grid case and `samples` seeded random cases of one claim (and of its repaired
    statement, when it has one). Cases outside the stated conditions are counted, not judged."""
    grid, random = _cases(th, quick, samples, seed)
    return _report(th, _judge_cases(th, grid), _judge_cases(th, random))


CHUNK = 100
"""Cases per parallel task: a claim's cases are split so that slow claims do not leave one worker
running alone at the end."""


def run(theorems: list[Theorem], quick: bool = False, progress: bool = True, samples: int | None = None,
        n_jobs: int = 1, seed: int = 0) -> list[Report]:
    """Judge every claim on its grid and on seeded random cases (`judge`), in parallel over chunks
    of CHUNK cases (the same cases, in the same order, whatever n_jobs).

    Parameters
    ----------
    theorems : list of Theorem
        The claims.
    quick : bool, optional
        The coarse grid and RANDOM_QUICK random cases (RANDOM_FULL otherwise).
    progress : bool, optional
        A tqdm bar over the cases on stderr.
    samples : int, optional
        Random cases per claim instead of the default (0: the grid only).
    n_jobs : int, optional
        joblib workers.
    seed : int, optional
        Seed of the random cases (each claim's stream also depends on its id).

    Returns
    -------
    list of Report
        Per theorem: the outcomes, the verdict and class, the worst and smallest cases, the
        condition found, the failure rate and the region where it fails.
    """
    from joblib import Parallel, delayed
    from tqdm import tqdm

    tasks = []                                   # (theorem index, grid or random, chunk of cases)
    for i, th in enumerate(theorems):
        for part, cases in enumerate(_cases(th, quick, samples, seed)):
            tasks += [(i, part, cases[k:k + CHUNK]) for k in range(0, len(cases), CHUNK)]
    results: list[list[list[tuple]]] = [[[], []] for _ in theorems]
    bar = tqdm(total=sum(len(t[2]) for t in tasks), desc="verify", unit="case", disable=not progress, leave=False)
    jobs = (delayed(_judge_cases)(theorems[i], cases) for i, _, cases in tasks)
    for (i, part, cases), judged in zip(tasks, Parallel(n_jobs=n_jobs, return_as="generator")(jobs)):
        results[i][part] += judged
        bar.update(len(cases))
    bar.close()
    return [_report(th, *results[i]) for i, th in enumerate(theorems)]


def _fmt_worst(rep: Report) -> str:
    w = rep.worst
    if w is None:
        return "-"
    if w.kind == "infeasible" and w.leakage_of_claim is not None and not isinstance(w.leakage_of_claim, dict):
        return f"{w.kind}: leakage {w.leakage_of_claim:.4g} (excess {w.gap:.3g})"
    return f"{w.kind}: gap {w.gap:.4g}"


def _fmt_rate(rep: Report) -> str:
    r = rep.failure_rate()
    if r is None:
        return "-"
    return f"{r['failures']}/{r['cases']} ({100 * r['ci95'][0]:.1f}-{100 * r['ci95'][1]:.1f}%)"


def table(reports: list[Report]) -> str:
    rows = [("theorem", "citation", "cases", "class", "random fails (95% CI)", "worst")]
    for r in reports:
        rows.append((r.theorem.id, r.theorem.citation, str(len(r.outcomes)), r.klass, _fmt_rate(r),
                     _fmt_worst(r) + (f"  [{len(r.errors)} errors]" if r.errors else "")))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row[:5], widths)) + "  " + row[5] for row in rows)


def markdown(reports: list[Report], quick: bool) -> str:
    lines = ["# Closed-form verification report", "",
             f"`channelopt verify{' --quick' if quick else ''}`; tolerance {VERIFY_TOL:g} (see channelopt/theorems/check.py). "
             "Each claim is judged on its grid and on seeded random cases (priors from Dirichlet "
             f"concentrations {', '.join(f'{a:g}' for a in CONCENTRATIONS)}, budgets log-uniform over the grid's range); "
             "the failure rate is over the random cases, with a 95% Clopper-Pearson interval.",
             "", "| theorem | citation | grid cases | verdict | class | random fails (95% CI) | worst | condition found |",
             "|---|---|---|---|---|---|---|---|"]
    for r in reports:
        lines.append(f"| {r.theorem.id} | {r.theorem.citation} | {len(r.outcomes)} | {r.verdict} | {r.klass} | "
                     f"{_fmt_rate(r)} | {_fmt_worst(r)} | {r.condition_found or ''} |")
    for r in reports:
        lines += ["", f"## {r.theorem.id}", "", f"{r.theorem.claim} ({r.theorem.citation}; stated conditions: "
                  f"{r.theorem.conditions or 'none'}).", ""]
        counts = _counts(r.outcomes)
        lines.append(f"Grid: {len(r.outcomes)} cases judged ({counts['holds']} hold, {counts['infeasible']} infeasible, "
                     f"{counts['suboptimal']} suboptimal)" + (f", {r.skipped} outside the stated conditions" if r.skipped else "")
                     + (f", {len(r.errors)} could not be judged" if r.errors else "") + f". Class: **{r.klass}**.")
        rate = r.failure_rate()
        if rate is not None:
            lines.append(f"Random cases: {rate['failures']} of {rate['cases']} fail (rate {rate['rate']:.3f}, 95% interval "
                         f"{rate['ci95'][0]:.3f}-{rate['ci95'][1]:.3f}).")
        region = r.region()
        if region:
            lines.append(f"Where it fails: {region}.")
        if r.theorem.corrected is not None:
            failing = sum(o.kind != "holds" for o in r.corrected)
            lines.append(f"Repaired statement ({r.theorem.correction}): " +
                         (f"holds on all {len(r.corrected)} cases." if not failing else
                          f"fails on {failing} of {len(r.corrected)} cases."))
        w = r.worst
        if w is not None:
            lines += ["", "Worst counterexample:", "", "```json", json.dumps(jsonable(_case(w)), indent=1), "```"]
        if r.theorem.axes and r.theorem.coords:
            lines += ["", f"![{r.theorem.id}]({r.theorem.id}.png)"]
    return "\n".join(lines) + "\n"


def _inputs_text(inputs: dict) -> str:
    def fmt(v):
        if isinstance(v, float):
            return f"{v:.6g}"
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(fmt(x) for x in v) + "]"
        return str(v)
    return ", ".join(f"{k} = {fmt(v)}" for k, v in inputs.items())


def errata(reports: list[Report], quick: bool = False, samples: int | None = None, seed: int = 0) -> str:
    """The errata, one section per paper, written for its authors: for each claim that fails
    somewhere, the statement as printed, what is true (the condition found, with whether it is
    necessary, or the repaired statement), its class, the cleanest counterexample and the
    command that reproduces it; then the claims that hold with the number of cases checked."""
    from ..references import reference_for

    n = (RANDOM_QUICK if quick else RANDOM_FULL) if samples is None else samples
    cmd = f"channelopt verify{' --quick' if quick else ''}" + (f" --samples {samples}" if samples is not None else "") \
        + (f" --seed {seed}" if seed else "")
    lines = ["# Errata", "",
             f"Generated by `{cmd} --errata ERRATA.md`. Every claim below was judged against exact audits and "
             f"certified optima on its grid and on {n} seeded random cases (tolerance {VERIFY_TOL:g}, relative). "
             "Classes: *holds*; *holds-under-condition* (true exactly, or at least, under the condition given, which the "
             "paper does not state); *presentation* (a typo-level slip or a rounding: the repaired statement holds "
             "everywhere); *infeasible-somewhere* / *suboptimal-somewhere* (no repair or condition found).", ""]
    papers: dict[str, list[Report]] = {}
    for r in reports:
        papers.setdefault(r.theorem.citation.split()[0], []).append(r)
    for short, reps in papers.items():
        ref = reference_for(reps[0].theorem.citation)
        lines += [f"## {short}" + (f": {ref}" if ref else ""), ""]
        failing = [r for r in reps if r.klass != "holds"]
        for r in failing:
            th = r.theorem
            lines += [f"### {th.citation} ({th.id}): {r.klass}", "", f"*As printed*: {th.claim}.", ""]
            cond = r.condition()
            if r.klass == "presentation":
                lines.append(f"*What is true*: {th.correction}; verified on all {len(r.corrected)} cases.")
            elif cond is not None:
                lines.append(f"*What is true*: the claim holds whenever {cond['text']} "
                             f"({cond['admitted']} cases); " + ("the condition is also necessary: every one of the "
                                                                f"{cond['outside']} cases outside it fails." if cond["necessary"]
                                                                else f"it is sufficient only: {cond['holding_outside']} of "
                                                                     f"the {cond['outside']} cases outside it hold."))
            else:
                lines.append("*What is true*: no repaired statement or condition was found; the counterexample "
                             "below stands.")
            rate = r.failure_rate()
            if rate is not None:
                lines.append(f"Failure rate on random cases: {rate['failures']}/{rate['cases']} "
                             f"(95% interval {100 * rate['ci95'][0]:.1f}-{100 * rate['ci95'][1]:.1f}%).")
            region = r.region()
            if region:
                lines.append(f"Where: {region}.")
            s = r.smallest
            if s is not None:
                lines += ["", f"*Cleanest counterexample* ({s.kind}, gap {s.gap:.4g}): {_inputs_text(s.inputs)}."]
            grid_case = s is not None and any(s is o for o in r.outcomes)
            run = f"channelopt verify --theorem {th.id}{' --samples 0' if grid_case else ''} --worst --out {th.id}/"
            lines += ["", f"Reproduce: `{run}`" + (
                f", then `channelopt audit {th.id}/{th.id}-smallest.toml --channel {th.id}/{th.id}-smallest-claimed.csv`"
                if s is not None and s.problem is not None and "channel" in s.claimed else ""), ""]
        holding = [r for r in reps if r.klass == "holds"]
        if holding:
            lines += ["Claims that hold on every case checked:", ""]
            lines += [f"- {r.theorem.citation} ({r.theorem.id}): {len(r.judged)} cases" for r in holding]
            lines.append("")
    return "\n".join(lines)


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
    `<id>-claimed.csv` (the claimed channel), and the cleanest one (`Report.smallest`) as
    `<id>-smallest.toml` and `<id>-smallest-claimed.csv`, so that `channelopt audit <id>-worst.toml
    --channel <id>-claimed.csv` and `channelopt solve <id>-worst.toml` reproduce the finding without
    the registry. [] when the claim holds everywhere or its counterexamples are values or bounds
    (their inputs are in verify.json)."""
    written: list[Path] = []
    for o, stem, csv_name in ((report.worst, "worst", "claimed"), (report.smallest, "smallest", "smallest-claimed")):
        written += _write_case(report, o, out, stem, csv_name)
    return written


def _write_case(report: Report, o: Outcome | None, out: Path, stem: str, csv_name: str) -> list[Path]:
    from ..io import problem_to_toml, write_atomic

    if o is None or o.problem is None or "channel" not in o.claimed:
        return []
    out.mkdir(parents=True, exist_ok=True)
    problem = o.problem
    if not problem.name:
        import dataclasses

        problem = dataclasses.replace(problem, name=f"{report.theorem.id}: {stem} case ({o.kind}) of "
                                                    f"{report.theorem.citation}")
    toml, csv = out / f"{report.theorem.id}-{stem}.toml", out / f"{report.theorem.id}-{csv_name}.csv"
    write_atomic(toml, problem_to_toml(problem))
    write_atomic(csv, "\n".join(",".join(repr(float(v)) for v in row) for row in o.claimed["channel"]) + "\n")
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
