"""Solver-speed benchmark: channelopt's LPs per solver, against baselines run in the same process.

For every notion x utility x d, and every solver (plus channelopt's automatic choice):
compile time (building the sparse program), solve time, total (including cleaning and the exact
re-audit), peak memory (resident-set growth during the call, sampled every millisecond by a
thread), objective and its agreement with the automatic choice. Baselines, measured in the same
run on the same instance:

  cvxpy-pairwise   the straightforward cvxpy formulation a user would write (one vector
                   constraint per pair of inputs, or per input against the marginal for LIP),
                   solved by HiGHS through cvxpy;
  raw-HIGHS        HiGHS called directly on channelopt's own matrices (solve time only);
  raw-CLARABEL     Clarabel called directly on the same matrices (solve time only).

Bayes utilities go through the posterior-space LP (the solver column reads `posterior-lp`); no
convex cvxpy baseline exists for them (the MMSE is not concave in q).

A (notion, utility, solver) series stops growing d once one size takes longer than `cap` seconds.
"""

from __future__ import annotations

import csv
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .solvers import SOLVERS as REGISTERED_SOLVERS

NOTIONS = ("ldp", "lip", "lip-latent", "minid-ldp", "pufferfish", "bp-lip")
"""The default set; any registered notion (`notions.NOTIONS`) can be named too (`notion_names`)."""
PAIRWISE = ("ldp", "minid-ldp", "lip", "bp-lip", "lip-latent", "pufferfish")
"""The notions the cvxpy-pairwise baseline is written for."""
UTILITIES = ("hamming", "bayes-mse")
SOLVERS = REGISTERED_SOLVERS
BASELINES = ("cvxpy-pairwise", "raw-HIGHS", "raw-CLARABEL")
SIZES = (4, 8, 16, 32, 64, 128, 256)
EPS = 1.0
COLUMNS = ("notion", "utility", "d", "solver", "status", "compile_s", "solve_s", "total_s", "peak_mb",
           "objective", "rel_diff")


@dataclass
class Instance:
    """One benchmark problem: a random prior (seeded by d), and what each notion needs."""

    notion: str
    d: int
    prior: np.ndarray
    budgets: np.ndarray
    latent: tuple | None = None
    priors: np.ndarray | None = None
    extra: dict = field(default_factory=dict)


def instance(notion: str, d: int, seed: int = 0) -> Instance:
    rng = np.random.default_rng(seed * 1000 + d)
    budgets = rng.choice([EPS, 1.2 * EPS, 2 * EPS], size=d, p=[0.05, 0.05, 0.9])
    budgets[0] = EPS
    if notion in ("lip-latent", "pufferfish"):
        k = max(2, min(8, d // 4))
        pg = rng.dirichlet(np.ones(k))
        T = rng.dirichlet(np.ones(d), size=k)
        return Instance(notion, d, pg @ T, budgets, latent=(pg, T))
    prior = rng.dirichlet(np.ones(d))
    if notion == "bp-lip":
        corners = rng.dirichlet(np.ones(d), size=3)
        mixes = rng.dirichlet(np.ones(3), size=2) @ corners
        return Instance(notion, d, prior, budgets, priors=np.vstack([corners, mixes]))
    return Instance(notion, d, prior, budgets)


def notion_names() -> tuple[str, ...]:
    """Every notion the benchmark can run: its own cases, then every registered notion."""
    from .notions import NOTIONS as REGISTRY

    return NOTIONS + tuple(n for n in REGISTRY if n not in NOTIONS)


def problem_of(inst: Instance, utility: str):
    from . import BPLIP, IDLDP, LDP, LIP, Bayes, Distortion, Joint, Problem, Pufferfish
    from .notions import NOTIONS as REGISTRY, parse_notion

    cases = {"ldp": lambda: LDP(EPS), "lip": lambda: LIP(EPS), "lip-latent": lambda: LIP(EPS),
             "minid-ldp": lambda: IDLDP(epsilons=inst.budgets), "pufferfish": lambda: Pufferfish(EPS),
             "bp-lip": lambda: BPLIP(EPS, priors=inst.priors)}
    if inst.notion in cases:
        privacy = cases[inst.notion]()
    else:  # any other registered notion: its own example at this size
        rng = np.random.default_rng(inst.d)
        privacy = parse_notion(REGISTRY[inst.notion].example(inst.d, EPS, rng), "privacy[0]")
    util = Distortion("hamming") if utility == "hamming" else Bayes("bayes-mse")
    latent = Joint(*inst.latent) if inst.latent is not None else None
    return Problem(prior=inst.prior, privacy=[privacy], utility=util, latent=latent)


class PeakMemory:
    """Peak growth of the resident set (MB) while the block runs, sampled by a thread."""

    def __init__(self, interval: float = 0.001):
        self.interval, self.peak_mb = interval, 0.0

    @staticmethod
    def rss() -> int:
        try:
            with open("/proc/self/statm") as f:
                return int(f.read().split()[1]) * 4096
        except OSError:  # not Linux: no sampling
            return 0

    def __enter__(self):
        self.start = self.rss()
        self.top = self.start
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self):
        while not self.done.is_set():
            self.top = max(self.top, self.rss())
            self.done.wait(self.interval)

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()
        self.top = max(self.top, self.rss())
        self.peak_mb = (self.top - self.start) / 2 ** 20
        return False


def run_channelopt(problem, solver: str) -> dict:
    from .methods import solve

    with PeakMemory() as mem:
        r = solve(problem, solver=None if solver == "auto" else solver, fallback=False)
    t = r.timings
    return {"status": r.status, "compile_s": t.get("compile_s", 0.0), "solve_s": t.get("solve_s", r.time_s),
            "total_s": r.time_s, "peak_mb": mem.peak_mb, "objective": r.objective,
            "solver_used": r.solver}


def run_raw(problem, solver: str) -> dict:
    """The solver alone on channelopt's matrices: compile = building them, solve = the call."""
    from .methods.lp import build, solve_highs

    t0 = time.perf_counter()
    prog = build(problem)
    t_compile = time.perf_counter() - t0
    with PeakMemory() as mem:
        t1 = time.perf_counter()
        if solver == "HIGHS":
            raw = solve_highs(prog)
            status, z = raw.status, raw.z
        else:
            status, z = _clarabel(prog)
        t_solve = time.perf_counter() - t1
    obj = float(prog.c @ z) if z is not None else float("nan")
    return {"status": status, "compile_s": t_compile, "solve_s": t_solve, "total_s": t_solve,
            "peak_mb": mem.peak_mb, "objective": obj}


def _clarabel(prog):
    import clarabel
    import scipy.sparse as sp

    lb_rows = np.isfinite(prog.lb)
    ub_rows = np.isfinite(prog.ub)
    eye = sp.identity(prog.n, format="csr")
    A = sp.vstack([prog.A_eq, prog.A_ub, -eye[lb_rows], eye[ub_rows]], format="csc")
    b = np.concatenate([prog.b_eq, prog.b_ub, -prog.lb[lb_rows], prog.ub[ub_rows]])
    cones = [clarabel.ZeroConeT(prog.A_eq.shape[0]), clarabel.NonnegativeConeT(A.shape[0] - prog.A_eq.shape[0])]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    sol = clarabel.DefaultSolver(sp.csc_matrix((prog.n, prog.n)), prog.c, A, b, cones, settings).solve()
    ok = str(sol.status) in ("Solved", "SolverStatus.Solved")
    return ("optimal" if ok else str(sol.status)), (np.asarray(sol.x) if ok else None)


def run_cvxpy_pairwise(inst: Instance, utility: str, eps: float = EPS) -> dict:
    """The straightforward formulation: a (d x d) cvxpy variable, one constraint per pair."""
    import cvxpy as cp

    if utility != "hamming":
        raise ValueError("the cvxpy baseline is for linear utilities")
    d, e = inst.d, np.exp(eps)
    t0 = time.perf_counter()
    q = cp.Variable((d, d), nonneg=True)
    cons = [cp.sum(q, axis=1) == 1]
    if inst.notion in ("ldp", "minid-ldp"):
        for x in range(d):
            for x2 in range(d):
                if x != x2:
                    r = eps if inst.notion == "ldp" else min(inst.budgets[x], inst.budgets[x2])
                    cons.append(q[x, :] <= np.exp(r) * q[x2, :])
    elif inst.notion in ("lip", "bp-lip"):
        priors = [inst.prior] if inst.notion == "lip" else inst.priors
        assert priors is not None, "a bp-lip instance carries its prior set"
        for p in priors:
            lam = p @ q
            for x in range(d):
                cons += [q[x, :] <= e * lam, lam <= e * q[x, :]]
    else:
        assert inst.latent is not None, "latent-secret instances carry their joint"
        pg, T = inst.latent
        lam = inst.prior @ q
        rows = [T[g] @ q for g in range(len(pg))]
        if inst.notion == "lip-latent":
            for row in rows:
                cons += [row <= e * lam, lam <= e * row]
        else:
            for i, ri in enumerate(rows):
                for j, rj in enumerate(rows):
                    if i != j:
                        cons.append(ri <= e * rj)
    model = cp.Problem(cp.Minimize(1 - cp.sum(cp.multiply(inst.prior, cp.diag(q)))), cons)
    with PeakMemory() as mem:
        model.solve(solver=cp.HIGHS)
    total = time.perf_counter() - t0
    solve_s = model.solver_stats.solve_time or 0.0
    return {"status": model.status, "compile_s": total - solve_s, "solve_s": solve_s, "total_s": total,
            "peak_mb": mem.peak_mb, "objective": model.value}


def run(notions=NOTIONS, utilities=UTILITIES, sizes=SIZES, solvers=SOLVERS, baselines=BASELINES,
        cap: float = 10.0, progress=None, tick=None) -> list[dict]:
    """All rows of the benchmark (see the module docstring). `progress(row)` is called per row,
    `tick()` after each (utility, notion, d) instance."""
    rows = []
    stopped: set[tuple] = set()
    for utility in utilities:
        for notion in notions:
            for d in sizes:
                inst = instance(notion, d)
                problem = problem_of(inst, utility)
                ref = None
                names = ["auto"] if utility != "hamming" else list(solvers) + list(baselines)
                for name in names:
                    key = (notion, utility, name)
                    if key in stopped or (name == "cvxpy-pairwise" and notion not in PAIRWISE):
                        continue
                    try:
                        if name.startswith("raw-"):
                            out = run_raw(problem, name[4:])
                        elif name == "cvxpy-pairwise":
                            out = run_cvxpy_pairwise(inst, utility)
                        else:
                            out = run_channelopt(problem, name)
                    except Exception as e:  # a solver crash is a result, not the end of the run
                        out = {"status": f"error: {type(e).__name__}", "compile_s": np.nan, "solve_s": np.nan,
                               "total_s": np.nan, "peak_mb": np.nan, "objective": np.nan}
                    solver = "posterior-lp" if utility != "hamming" and name == "auto" else name
                    row = {"notion": notion, "utility": utility, "d": d, "solver": solver, **out}
                    if name == "auto":
                        ref = row["objective"]
                    row["rel_diff"] = (abs(row["objective"] - ref) / max(1.0, abs(ref))
                                       if ref is not None and row["objective"] is not None
                                       and np.isfinite(row["objective"]) else np.nan)
                    rows.append(row)
                    if progress:
                        progress(row)
                    if not np.isfinite(row["total_s"]) or row["total_s"] > cap:
                        stopped.add(key)
                if tick:
                    tick()
    return rows


def format_row(row: dict) -> str:
    def f(v, spec):
        return format(v, spec) if isinstance(v, (int, float)) and v is not None and np.isfinite(v) else "-"
    return (f"{row['notion']:<11} {row['utility']:<9} {row['d']:>4} {row['solver']:<15} {str(row['status'])[:12]:<12} "
            f"{f(row['compile_s'], '9.4f')} {f(row['solve_s'], '9.4f')} {f(row['total_s'], '9.4f')} "
            f"{f(row['peak_mb'], '8.1f')} {f(row['rel_diff'], '9.1e')}")


HEADER = (f"{'notion':<11} {'utility':<9} {'d':>4} {'solver':<15} {'status':<12} "
          f"{'compile_s':>9} {'solve_s':>9} {'total_s':>9} {'peak_mb':>8} {'|dobj|rel':>9}")


def summary(rows: list[dict]) -> list[str]:
    """The issue's targets, read off the rows: auto vs raw HiGHS and vs the cvxpy baseline."""
    by = {(r["notion"], r["utility"], r["d"], r["solver"]): r for r in rows}
    out = []
    for (notion, utility, d, solver), r in sorted(by.items()):
        if solver != "auto" or utility != "hamming":
            continue
        raw = by.get((notion, utility, d, "raw-HIGHS"))
        base = by.get((notion, utility, d, "cvxpy-pairwise"))
        parts = [f"{notion:<11} d={d:<4} auto {r['total_s']:.4f} s"]
        if raw and np.isfinite(raw["solve_s"]):
            parts.append(f"auto / raw HiGHS = {r['total_s'] / raw['solve_s']:.2f}")
        if base and np.isfinite(base["total_s"]):
            parts.append(f"cvxpy-pairwise / auto = {base['total_s'] / r['total_s']:.1f}x")
        out.append("  ".join(parts))
    return out


def write(rows: list[dict], out: Path, stem: str = "bench") -> list[Path]:
    """CSV of every row and a log-log plot of total time vs d (one panel per utility)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    path_csv, path_png = out / f"{stem}.csv", out / f"{stem}.png"
    with open(path_csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    plot(rows, path_png, plt)
    return [path_csv, path_png]


def write_table(rows: list[dict], path: Path) -> Path:
    """Rows of dicts as a CSV (header from the first row), creating the directory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def read_csv(path: Path) -> list[dict]:
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            for k in ("d",):
                r[k] = int(r[k])
            for k in ("compile_s", "solve_s", "total_s", "peak_mb", "objective", "rel_diff"):
                r[k] = float(r[k]) if r[k] not in ("", "None") else np.nan
            rows.append(r)
    return rows


def plot(rows, path, plt=None):
    if plt is None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    notions = sorted({r["notion"] for r in rows}, key=lambda n: NOTIONS.index(n) if n in NOTIONS else 99)
    utilities = [u for u in UTILITIES if any(r["utility"] == u for r in rows)]
    fig, axes = plt.subplots(len(utilities), len(notions), figsize=(3.2 * len(notions), 3.0 * len(utilities)),
                             squeeze=False, sharex=True)
    for i, utility in enumerate(utilities):
        for j, notion in enumerate(notions):
            ax = axes[i][j]
            sel = [r for r in rows if r["notion"] == notion and r["utility"] == utility]
            for solver in dict.fromkeys(r["solver"] for r in sel):
                pts = sorted((r["d"], r["total_s"]) for r in sel if r["solver"] == solver
                             and r["status"] == "optimal" and np.isfinite(r["total_s"]) and r["total_s"] > 0)
                if pts:
                    ax.loglog(*zip(*pts), marker="o", ms=3,
                              lw=2.2 if solver in ("auto", "posterior-lp") else 1.0, label=solver)
            ax.set_title(f"{notion}, {utility}", fontsize=9)
            ax.set_xscale("log", base=2)
            if i == len(utilities) - 1:
                ax.set_xlabel("d")
            if j == 0:
                ax.set_ylabel("total time (s)")
            ax.grid(True, which="both", alpha=0.3)
    handles = {}
    for ax in axes.ravel():
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(handles.values(), handles.keys(), loc="lower center", ncol=min(8, len(handles)), fontsize=8)
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
