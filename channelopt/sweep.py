"""Sweeps over the privacy budget or the prior, reusing the solver between points.

    results = channelopt.sweep(problem, epsilon=np.linspace(0.1, 5, 100))
    results = channelopt.sweep(problem, scale=np.linspace(0.5, 2, 50))
    results = channelopt.sweep(problem, priors=[[...], [...]])

Each point is its own problem (every notion with a scalar `epsilon` takes the point's value;
with `scale`, every budget of every notion, per-input ID-LDP budgets included, is multiplied by
the point's factor; or the prior is replaced), solved and re-audited exactly like `solve`. For LP problems solved by
HiGHS (the automatic choice), one HiGHS instance is kept across the points and each point's
simplex starts from the previous point's optimal basis (a warm start): the program is rebuilt
(milliseconds) but the simplex typically needs a fraction of the pivots. Under one LDP or LIP
(G = X) notion with an expected distortion, the budget changes a few coefficients, costs and
bounds of one model HiGHS holds instead (`methods.parametric`), and nothing is rebuilt. A warm
point that is not certified optimal is solved again from scratch with the full fallback chain.
Other methods (posterior-space LP, conic, local) solve each point afresh.

n_jobs > 1 splits the points into contiguous chunks, each warm started along its own path: the
first goes on in this process from the first points, the others run in joblib workers meanwhile;
unless a point, timed, says that all of them take less than starting the workers
(`PARALLEL_MIN_S`).

Warm points are audited for their notions only: `Result.measures` (the budget-free leakage
measures) is left empty to keep the per-point overhead small; `channelopt.audit` gives them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time

from typing import Any

import numpy as np

from .blas import one_thread
from .errors import ProblemError
from .methods import finish, method_for, present, solve
from .methods.closed import closed_form_result
from .methods.top_outputs import Warm
from .methods.lp import build, new_highs, restrictable, solve_highs, solve_restricted
from .methods.parametric import Parametric
from .problem import Problem, as_epsilon


def points(problem: Problem, epsilon=None, priors=None, scale=None) -> list[Problem]:
    """The problems of the sweep, validated before anything is solved.

    Parameters
    ----------
    problem : Problem
        The template.
    epsilon : sequence of float, optional
        The budgets.
    priors : sequence of array_like, optional
        The priors.
    scale : sequence of float, optional
        Factors applied to every budget of every notion (per-input and per-pair budgets too).

    Returns
    -------
    list of Problem
        One problem per point.

    Raises
    ------
    ProblemError
        If both or neither of epsilon and priors are given, or a point is invalid.
    """
    if sum(x is not None for x in (epsilon, priors, scale)) != 1:
        raise ProblemError("sweep needs exactly one of epsilon=[...], scale=[...] or priors=[...]")
    if scale is not None:
        return _scaled_points(problem, _non_empty("scale", scale))
    if epsilon is not None:
        values = _non_empty("epsilon", epsilon)
        scalar = [i for i, n in enumerate(problem.privacy) if np.ndim(n.budgets().get("epsilon", ())) == 0]
        if not scalar:
            raise ProblemError("sweep epsilon: no privacy notion of the problem has a scalar epsilon to vary")
        out = []
        for k, e in enumerate(values):
            e = as_epsilon(f"epsilon[{k}]", e)
            privacy = [n.with_budget(epsilon=e) if i in scalar else n for i, n in enumerate(problem.privacy)]
            out.append(dataclasses.replace(problem, privacy=tuple(privacy)))
        return out
    rows = _non_empty("priors", priors)
    if problem.latent is not None:
        raise ProblemError("sweep priors: the problem has a latent secret; sweep its joint by building the problems")
    out = []
    for k, p in enumerate(rows):
        try:
            out.append(dataclasses.replace(problem, prior=p))
        except ProblemError as e:
            raise ProblemError(f"priors[{k}]: {e}") from None
    return out


MAX_POINTS = 100_000
"""Longest sweep (points are solved one by one; a longer list is almost surely a typo)."""
MAX_JOBS = 256
"""Most parallel workers a sweep or batch starts."""
PARALLEL_MIN_S = 2.0
"""With n_jobs > 1 the first three points are solved here, in one warm run, and the faster of the
second and third is taken as a point's time (the first pays one-time costs: 22 ms for an LDP point
at d = 16 that then takes 0.7 ms; 31 ms for MinID at d = 32, then 2.7 ms warm); workers start
only when the points left would take longer than this one after another (that time times their
number). Starting joblib's workers in a new process costs about 0.7 s, so two jobs gain only past
about twice that: 100 LDP Hamming points at d = 16 took 0.06 s in one process and 0.75 s with two
jobs, 100 LIP MAE points at d = 64 1.33 s and 1.61 s (0.93 s once the workers are running)."""


def _non_empty(key: str, values) -> list:
    n = len(values) if hasattr(values, "__len__") else None
    if n is not None and n > MAX_POINTS:
        raise ProblemError(f"sweep {key}: at most {MAX_POINTS:,} points, got {n:,}")
    try:
        values = list(values)
    except TypeError:
        raise ProblemError(f"sweep {key} must be a list, got {values!r}") from None
    if not values:
        raise ProblemError(f"sweep {key} must be a non-empty list")
    if len(values) > MAX_POINTS:
        raise ProblemError(f"sweep {key}: at most {MAX_POINTS:,} points, got {len(values):,}")
    return values


def _scaled_points(problem: Problem, values: list) -> list[Problem]:
    """Every budget of every notion times each factor."""
    if not any(n.budgets() for n in problem.privacy):
        raise ProblemError("sweep scale: no privacy notion of the problem has a budget to scale")
    # the budgets as the problem file writes them (ID-LDP's pair diagonal 0, not inf)
    written = [{key: n.to_table()[key] for key in n.budgets()} for n in problem.privacy]
    out = []
    for k, s in enumerate(values):
        if isinstance(s, bool) or not isinstance(s, (int, float, np.floating, np.integer)) or not (np.isfinite(s) and s > 0):
            raise ProblemError(f"sweep scale[{k}] must be a finite number > 0, got {s!r}")
        try:
            privacy = [n.with_budget(**{key: _times(v, float(s)) for key, v in b.items()})
                       for n, b in zip(problem.privacy, written)]
        except ProblemError as e:
            raise ProblemError(f"sweep scale[{k}] = {float(s):g}: {e}") from None
        out.append(dataclasses.replace(problem, privacy=tuple(privacy)))
    return out


def _times(value, s: float):
    return float(value) * s if np.ndim(value) == 0 else np.asarray(value, dtype=float) * s


class Sweep(list):
    """The Results of a sweep, in order, with what varied at each point.

    `param` is "epsilon", "scale" or "prior"; `values[i]` is point i's eps (scale factor, prior). A list of Results
    otherwise: `sweep[i].channel`, `len(sweep)`.

    Attributes
    ----------
    param : str
        "epsilon", "scale" or "prior".
    values : list
        Each point's eps (scale factor, or prior).
    kind : str
        The utility's kind, for display.
    """

    def __init__(self, results, param: str, values, kind: str = ""):
        super().__init__(results)
        self.param, self.values, self.kind = param, list(values), kind

    def rows(self) -> list[dict]:
        """One dict per point: the parameter, status, objective, bound, gap, time and leakage
        (`leakage_<key>`, or `leakage_<key>.<part>` for a notion whose leakage has parts, as ALIP's
        `lower` and `upper`)."""
        out = []
        for i, (x, r) in enumerate(zip(self.values, self)):
            c = r.certificate
            row = {"point": i, self.param: x if self.param != "prior" else list(np.asarray(x, float)),
                   "status": r.status, "objective": r.objective,
                   "bound": c.bound if c else None, "gap": c.gap if c else None, "time_s": r.time_s}
            for k, v in r.leakage.items():          # a leakage with parts (ALIP) a column each
                row.update({f"leakage_{k}.{part}": x for part, x in v.items()} if isinstance(v, dict)
                           else {f"leakage_{k}": v})
            out.append(row)
        return out

    def to_frame(self):
        """The rows as a pandas DataFrame (pandas extra)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Sweep.to_frame needs pandas: pip install 'channelopt[pandas]'") from None
        return pd.DataFrame(self.rows()).set_index("point")

    def plot(self, ax=None, label: str | None = None):
        """The utility-privacy curve over eps (or the point index for priors): certified optima
        filled, other statuses hollow; returns the matplotlib Axes."""
        from .plots import curve

        x = np.array(self.values, float) if self.param != "prior" else np.arange(len(self), dtype=float)
        y = np.array([np.nan if r.objective is None else r.objective for r in self], float)
        ax = curve(x, y, ax=ax, label=label or self.kind or "objective",
                   certified=[r.status == "optimal" for r in self])
        ax.set_xlabel({"epsilon": "epsilon (nats)", "scale": "budget scale"}.get(self.param, "prior (point)"))
        ax.set_ylabel(self.kind or "objective")
        ax.legend(fontsize=8)
        return ax


def sweep(problem: Problem, epsilon=None, priors=None, *, scale=None, solver: str | None = None, progress: bool = False,
          n_jobs: int = 1, warm: bool = True) -> Sweep:
    """Solve `problem` at every budget in `epsilon` (every budget times each factor in `scale`,
    or at every prior in `priors`).

    LP problems reuse one warm HiGHS instance (each point starts from the previous basis) and
    take the certified closed forms where they apply; every point is re-audited like `solve`.

    Parameters
    ----------
    problem : Problem
        The template; each point replaces its budget (every notion's `epsilon`) or its prior.
    epsilon : sequence of float, optional
        Budgets in nats (give exactly one of epsilon, scale and priors).
    priors : sequence of array_like, optional
        Priors of X, each of length d.
    scale : sequence of float, optional
        Factors > 0: each point multiplies every budget of every notion (scalar, per-input
        and per-pair budgets alike) by one; the way to sweep ID-LDP / MinID-LDP.
    solver : str, optional
        As in `solve` (default: the problem's).
    progress : bool, optional
        A tqdm bar on stderr.
    n_jobs : int, optional
        joblib workers over chunks of points (1 to `sweep.MAX_JOBS`); they start only when the
        points would take longer than `PARALLEL_MIN_S` in this process (timed on the first three).
    warm : bool, optional
        Warm-start the LP points (default True).

    Returns
    -------
    Sweep
        One `Result` per point, in order, with the parameter of each (`.values`), `.plot()` and
        `.to_table()`.

    Raises
    ------
    ProblemError
        If the budgets or priors are invalid, both or neither are given, or n_jobs is out of range.
    """
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or not 1 <= n_jobs <= MAX_JOBS:
        raise ProblemError(f"n_jobs must be an integer from 1 to {MAX_JOBS}, got {n_jobs!r}")
    probs = points(problem, epsilon, priors, scale)
    param = "epsilon" if epsilon is not None else "scale" if scale is not None else "prior"
    values = [float(e) for e in (epsilon if epsilon is not None else scale)] if param != "prior" else [p.prior for p in probs]
    kind = problem.utility.kind if problem.utility is not None else ""
    chosen = problem.solver if solver is None else solver
    warm = warm and method_for(problem) == "lp" and chosen in ("auto", "HIGHS")
    along = Along(solver, warm)
    if n_jobs == 1 or len(probs) < 2:
        return Sweep(along.solve(probs, progress), param, values, kind)
    first = along.solve(probs[:3])
    rest = probs[3:]
    # a point's time along the sweep: the first pays one-time costs, the next ones start warm
    if len(rest) < 2 or min(r.time_s for r in first[1:]) * len(rest) < PARALLEL_MIN_S:   # less than starting workers
        return Sweep(first + along.solve(rest, progress, done=len(first)), param, values, kind)
    from joblib import Parallel, delayed

    # the first chunk goes on here, warm from the first points, while the workers (started
    # first: the generator dispatches at once) solve the others
    chunks = [[rest[i] for i in c] for c in np.array_split(np.arange(len(rest)), min(n_jobs, len(rest)))]
    others = Parallel(n_jobs=max(2, len(chunks) - 1), return_as="generator")(
        delayed(solve_points)(c, solver, warm, False) for c in chunks[1:])
    mine = along.solve(chunks[0])
    return Sweep(first + mine + [r for part in others for r in part], param, values, kind)


def solve_points(probs: list[Problem], solver, warm: bool, progress: bool, done: int = 0) -> list:
    """Solve problems in order (one Result each); with `warm`, one HiGHS instance whose simplex
    starts from the previous point's basis (the sweep and batch path for LP problems; `Along`).

    Parameters
    ----------
    probs : list of Problem
        The points, in order.
    solver : str or None
        As in `solve`.
    warm : bool
        Warm-start LP points from the previous basis.
    progress : bool
        A tqdm bar on stderr.
    done : int, optional
        Points of the same sweep already solved: the bar starts there (of `done + len(probs)`).

    Returns
    -------
    list of Result
        One per point, each re-audited.
    """
    return Along(solver, warm).solve(probs, progress, done)


class Along:
    """What a path of points keeps from one point to the next: the HiGHS instance and basis, the
    restricted program's state, the reduced LP's (`top_outputs.Warm`) and the eps-free model
    (`Parametric`). `solve` may be called again with the next points of the same path.

    Parameters
    ----------
    solver : str or None
        As in `solve`.
    warm : bool
        Warm-start LP points from the previous basis.
    """

    def __init__(self, solver, warm: bool):
        self.solver, self.warm = solver, warm
        self.highs = new_highs() if warm else None
        self.basis: Any = None
        self.shape: tuple | None = None
        self.restricted = True       # tried until it first gives up (`lp.solve_restricted`)
        self.state: Any = None       # the last restricted program's columns, rows and basis
        self.top = Warm()            # the last reduced LP's outputs and basis (`top_outputs`)
        self.model: Parametric | None = None      # the eps-free LP of the first point it applies to

    def solve(self, probs: list[Problem], progress: bool = False, done: int = 0) -> list:
        """The next points of the path, in order (as `solve_points`), warm LP points with one BLAS
        thread (`blas.one_thread`): a BLAS product long enough to run on every core wakes OpenBLAS's
        threads, which then spin on the other cores between points. A dual bound's dot product
        over 2dm rows did (LDP MAE at d = 128: 43% of a sweep's CPU samples, 1.9 cores busy for
        one; a parallel sweep's workers lost those cores); `Program.dual_bound` no longer calls
        BLAS, and this keeps any other product of a point from doing the same."""
        from tqdm import tqdm

        bar = tqdm(probs, disable=not progress, desc="sweep", unit="pt", initial=done, total=done + len(probs))
        with one_thread() if self.warm else contextlib.nullcontext():   # (not the Bayes LPs' large products)
            return [self.point(p) for p in bar]

    def point(self, p: Problem):
        """One point: a certified closed form, else the warm LP (finished and certified), else a
        fresh `solve`."""
        solver = self.solver
        if not self.warm:
            return solve(p, solver)
        t0 = time.perf_counter()
        closed = closed_form_result(p, with_measures=False, warm=self.top) if (solver or p.solver) == "auto" else None
        if closed is not None:                 # a certified closed form: no LP at this point
            closed.time_s = time.perf_counter() - t0
            closed.timings = {"solve_s": closed.time_s, "total_s": closed.time_s}
            return present(p, closed)
        if self.model is None and Parametric.applies(p):
            self.model = Parametric(p)
        model = self.model
        if model is not None and model.takes(p) and not (self.restricted and restrictable(model.program)):
            # eps only changes a few coefficients, costs and bounds of the model HiGHS holds
            warmed = model.highs is not None
            t1 = time.perf_counter()
            prog, raw = model.solve(p.privacy[0].epsilon)
            text = "eps updated in the previous point's model" if warmed else raw.message
        else:
            prog = build(p)
            t1 = time.perf_counter()
            same = self.shape == (prog.n, prog.A_ub.shape[0], prog.A_eq.shape[0])
            # the restricted program while it closes (Hamming: a few outputs), else the warm whole one
            found = solve_restricted(prog, start=self.state) if self.restricted and restrictable(prog) else None
            self.restricted = found is not None
            self.state = found.restricted if found is not None else None
            raw = found if found is not None else solve_highs(prog, highs=self.highs,
                                                              basis=self.basis if same else None)
            if raw.status != "optimal":
                self.basis, self.shape = None, None
            elif raw.basis is not None:
                self.basis, self.shape = raw.basis, (prog.n, prog.A_ub.shape[0], prog.A_eq.shape[0])
            warmed = same and not self.restricted
            text = "warm start from the previous point's basis" if warmed else raw.message
        t2 = time.perf_counter()
        if raw.status != "optimal":
            return solve(p, solver)
        result = finish(p, prog, raw, "HIGHS", "lp", with_measures=False)
        if result.status != "optimal":  # never return a warm result that is not certified
            return solve(p, solver)
        result.attempts = [{"solver": "HIGHS", "status": "optimal", "solve_s": t2 - t1, "message": text}]
        total = time.perf_counter() - t0
        result.timings = {"compile_s": t1 - t0, "solve_s": t2 - t1, "total_s": total, "warm": warmed}
        result.time_s = total
        return present(p, result)
