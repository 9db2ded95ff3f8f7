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
bounds of one model HiGHS holds instead (`methods.parametric`), and nothing is rebuilt. Under one
ID-LDP notion on fewer budget levels than inputs (MinID-LDP), a `scale` point takes the program
built for the first point with its K^2 m level coefficients replaced, in the model HiGHS holds too
(`parametric.LevelProgram`). A warm
point that is not certified optimal is solved again from scratch with the full fallback chain.
Other methods (posterior-space LP, conic, local) solve each point afresh.

n_jobs > 1 solves the points from both ends: this process goes on from the first points, warm,
while n_jobs - 1 workers (joblib's loky pool) take small chunks from the last point down, each warm
along its own path; whoever starts a chunk first claims it. So a sweep never waits for a worker to
start, and the two ends meet where the work is balanced. Workers are not asked for when a point,
timed, says that all of them take less than starting one (`PARALLEL_MIN_S`), or, where the pool's
workers have already served a sweep, less than a worker's cold first point (`PARALLEL_WARM_S`).

Warm points are audited for their notions only: `Result.measures` (the budget-free leakage
measures) is left empty to keep the per-point overhead small; `channelopt.audit` gives them. A
warm point's channel and dual bound are taken from its program at once; the rest of its finish
(cleaning, audit, objective, certificate) waits for a block of such points, settled together
(`methods.settled`), each Result the same as finished alone.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import shutil
import tempfile
import time
import weakref

from typing import Any

import numpy as np

from .blas import one_thread
from .errors import ProblemError
from .methods import method_for, present, solve
from .methods.closed import closed_form_result
from .methods.frontend import taken
from .methods.top_outputs import Warm
from .methods.lp import build, new_highs, restrictable, solve_highs, solve_restricted
from .methods.parametric import LevelProgram, Parametric
from .methods.settled import settle_points
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
            out.append(problem.with_privacy(privacy))
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
PARALLEL_MIN_S = 0.5
"""With n_jobs > 1 the first three points are solved here, in one warm run, and the faster of the
second and third is taken as a point's time (the first pays one-time costs: 22 ms for an LDP point
at d = 16 that then takes 0.7 ms; 31 ms for MinID at d = 32, then 2.7 ms warm); workers are asked
for only when the points left would take longer than this one after another (that time times
their number). A worker started cold first imports the package (1.1-1.6 s before its first
result), so it takes a share only of longer sweeps; it then stays up for the next sweep (joblib's
pool, 300 s idle), which it joins at once. Since this process never waits for a worker to start
(`_from_both_ends`), asking for one costs the sweep nothing but the spare core it runs on."""
PARALLEL_WARM_S = 0.05
"""Where joblib's pool already holds n_jobs - 1 live workers that have solved a sweep's chunk (the
package imported: `_warm_workers`), asking for them costs no start, only a worker's first point,
solved cold, and a round trip a chunk: they are asked for when the points left would take longer
than this and than twice the sweep's own first point (a cold point too) one after another. Short
sweeps then split as well (LDP MAE, d = 32: 100 points in about 0.18 s, under `PARALLEL_MIN_S`)."""
CHUNK_S = 0.05
"""A worker's chunk: this many seconds of points (at a point's time, as for `PARALLEL_MIN_S`; at
least one point), and at most a quarter of the points left a process (`CHUNKS_A_JOB`), so that a
short sweep on warm workers still ends balanced. Where both ends meet this process waits at most
for the rest of the chunk a worker is solving; each chunk costs a round trip to the worker (its
points and results pickled)."""
CHUNKS_A_JOB = 4


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
        out.append(problem.with_privacy(privacy))
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
        Processes in all (1 to `sweep.MAX_JOBS`): this one from the first point on, n_jobs - 1
        workers of joblib's pool in chunks from the last point down (`_from_both_ends`); they
        are asked for only when the points would take longer than `PARALLEL_MIN_S` in this
        process (timed on the first three), or, where the pool's workers have served a sweep
        already, longer than `PARALLEL_WARM_S` and twice the first (cold) point.
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
    bar = _bar(progress, len(probs))
    try:
        first = along.solve(probs if n_jobs == 1 else probs[:3], bar)
        rest = probs[len(first):]
        # a point's time along the sweep: the first pays one-time costs, the next ones start warm
        point_s = max(min((r.time_s for r in first[1:]), default=0.0), 1e-9)
        least = PARALLEL_MIN_S
        if n_jobs > 1 and _warm_workers() >= n_jobs - 1:         # no start to wait for: a cold point
            least = max(PARALLEL_WARM_S, 2 * first[0].time_s)
        if len(rest) < 2 or point_s * len(rest) < least:         # less than the workers would cost
            return Sweep(first + along.solve(rest, bar), param, values, kind)
        chunk = max(1, min(int(CHUNK_S / point_s), -(-len(rest) // (CHUNKS_A_JOB * n_jobs))))
        return Sweep(first + _from_both_ends(along, rest, n_jobs, chunk, bar), param, values, kind)
    finally:
        if bar is not None:
            bar.close()


def _from_both_ends(along: Along, rest: list[Problem], n_jobs: int, chunk: int, bar) -> list:
    """`rest` solved from both ends: this process goes on from the front, warm from the points
    before, while n_jobs - 1 workers take chunks of `chunk` points from the back, each walking
    its own warm path down. Whoever starts a chunk first claims it (`_claim`): this process never
    waits for a chunk no worker has started (a cold worker first imports the package, about a
    second, while loky has already handed it its first chunks), and both ends meet wherever the
    work is balanced.

    Parameters
    ----------
    along : Along
        This process's path, warm from the points before `rest`.
    rest : list of Problem
        The points left, in order.
    n_jobs : int
        Processes in all (this one and n_jobs - 1 loky workers).
    chunk : int
        Points a worker takes at a time.
    bar : tqdm or None
        Updated as points are solved here or returned by a worker.

    Returns
    -------
    list of Result
        One per point of `rest`, in order.
    """
    from joblib.executor import get_memmapping_executor

    spans = [range(i, min(i + chunk, len(rest))) for i in range(0, len(rest), chunk)]
    futures: dict[int, Any] = {}
    with _claims_directory() as claims:
        if claims is None:                                  # no directory to claim chunks in
            return along.solve(rest, bar=bar)
        # joblib's reusable loky pool (the one `joblib.Parallel` and `solve_batch` use: a second,
        # plain loky pool would replace it under them)
        executor = get_memmapping_executor(n_jobs - 1)
        try:
            for i in range(len(spans) - 1, 0, -1):          # the last chunk first: loky starts them in order
                futures[i] = executor.submit(_worker_chunk, claims, i, [rest[j] for j in reversed(spans[i])],
                                             along.solver, along.warm)
                futures[i].add_done_callback(_served)
                if bar is not None:
                    futures[i].add_done_callback(functools.partial(_count, n=len(spans[i]), bar=bar))
            _POOL[0] = weakref.ref(executor)
            parts: dict[int, list] = {}
            for i, span in enumerate(spans):
                if _claim(claims, i):
                    if i in futures:
                        futures.pop(i).cancel()
                    parts[i] = along.solve([rest[j] for j in span], bar=bar)
            for i, f in futures.items():                    # the chunks workers claimed
                parts[i] = f.result()[1][::-1]
            return [r for i in range(len(spans)) for r in parts[i]]
        finally:
            for f in futures.values():
                f.cancel()


@contextlib.contextmanager
def _claims_directory():
    """A new directory for one sweep's claims (`_claim`). On the way out it is renamed before it is
    removed: a worker still claiming (a chunk it was handed late) then finds no directory, rather
    than creating a file in one being removed. None where no directory can be made (the points
    are then solved in this process)."""
    try:
        claims = tempfile.mkdtemp(prefix="channelopt-sweep-")
    except OSError:
        yield None
        return
    try:
        yield claims
    finally:
        gone = claims + "-done"
        try:
            os.rename(claims, gone)
        except OSError:                                     # (removed meanwhile by someone else)
            gone = claims
        shutil.rmtree(gone, ignore_errors=True)


def _claim(claims: str, i: int) -> bool:
    """Chunk i of a sweep taken by the caller, if no process has taken it: a file created in the
    sweep's directory `claims` (O_EXCL: one creator wins, across processes). False once the sweep
    is over and its directory gone."""
    try:
        os.close(os.open(os.path.join(claims, str(i)), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except OSError:
        return False
    return True


def _count(future, n: int, bar) -> None:
    """A worker's chunk done: its points on the progress bar."""
    if not future.cancelled() and future.exception() is None and future.result()[1] is not None:
        bar.update(n)


def _served(future) -> None:
    """A worker's chunk call returned (claimed or not): that worker has the package imported."""
    if not future.cancelled() and future.exception() is None:
        _SERVED.add(future.result()[0])


_SERVED: set[int] = set()
"""Process ids of the pool's workers that have returned from a sweep's chunk (`_warm_workers`)."""
_POOL: list = [None]
"""A weak reference to the executor the last parallel sweep ran on (joblib's reusable pool)."""


def _warm_workers() -> int:
    """How many live workers of the pool the last parallel sweep used have returned from one of
    its chunks, claimed or not (so have the package imported): 0 if that pool is gone, shut down
    or replaced. Read from the pool's process table (loky's `_processes`, where it has one; else
    0, as for a cold pool)."""
    ref = _POOL[0]
    executor = ref() if ref is not None else None
    procs = getattr(executor, "_processes", None)
    if not isinstance(procs, dict) or getattr(getattr(executor, "_flags", None), "shutdown", False):
        return 0
    return sum(1 for pid, proc in list(procs.items()) if pid in _SERVED and proc.is_alive())


_PATHS: dict[str, Along] = {}
"""In a worker: the path of the sweep it serves (by the sweep's claims directory), kept from one of
its chunks to the next, so that only its first point starts cold."""


def _worker_chunk(claims: str, i: int, probs: list[Problem], solver, warm: bool) -> tuple[int, list | None]:
    """In a worker: (its process id, chunk i's results) for `probs` in the order given (from the
    back of the sweep down), if it can claim it, continuing the path its last chunk of the same
    sweep ended on; (its process id, None) if another process of the sweep has claimed it first."""
    if not _claim(claims, i):
        return os.getpid(), None
    along = _PATHS.get(claims)
    if along is None:
        _PATHS.clear()
        along = _PATHS[claims] = Along(solver, warm)
    return os.getpid(), along.solve(probs)


def _bar(progress: bool, total: int, done: int = 0):
    """A tqdm bar on stderr over `total` points (None without `progress`)."""
    if not progress:
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=done, desc="sweep", unit="pt")


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
    bar = _bar(progress, done + len(probs), done)
    try:
        return Along(solver, warm).solve(probs, bar)
    finally:
        if bar is not None:
            bar.close()


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
        self.levels: LevelProgram | None = None   # the last program built on budget levels
        self.held: LevelProgram | None = None     # whose program `highs` holds, solved, if any

    def solve(self, probs: list[Problem], bar=None) -> list:
        """The next points of the path, in order (as `solve_points`; `bar`, a tqdm bar, counts
        them), warm LP points with one BLAS thread (`blas.one_thread`): a BLAS product long enough
        to run on every core wakes OpenBLAS's threads, which then spin on the other cores between
        points. A dual bound's dot product
        over 2dm rows did (LDP MAE at d = 128: 43% of a sweep's CPU samples, 1.9 cores busy for
        one; a parallel sweep's workers lost those cores); `Program.dual_bound` no longer calls
        BLAS, and this keeps any other product of a point from doing the same."""
        out: list = []
        pending: list[int] = []
        with one_thread() if self.warm else contextlib.nullcontext():   # (not the Bayes LPs' large products)
            for p in probs:
                out.append(self.point(p))
                if isinstance(out[-1], _Pending):
                    pending.append(len(out) - 1)
                    if (len(pending) >= SETTLE_POINTS or len(pending) * p.d * p.m >= SETTLE_ENTRIES
                            or sum(out[i].lp_s for i in pending) >= SETTLE_S):
                        self._settle(out, pending, bar)
                elif bar is not None:
                    bar.update()
            self._settle(out, pending, bar)
        return out

    def _settle(self, out: list, pending: list[int], bar) -> None:
        """The warm LP points waiting in `out` (at the indices `pending`, emptied) settled together
        (`settled.settle_points`); a point not certified optimal there is solved afresh."""
        if not pending:
            return
        waiting = [out[i] for i in pending]
        t0 = time.perf_counter()
        results = settle_points([w.problem for w in waiting], [w.channel for w in waiting], [w.bound for w in waiting],
                                [w.raw for w in waiting])
        share = (time.perf_counter() - t0) / len(waiting)
        for i, w, result in zip(pending, waiting, results):
            if result.status != "optimal":          # never return a warm result that is not certified
                out[i] = solve(w.problem, self.solver)
            else:
                result.attempts = [{"solver": "HIGHS", "status": "optimal", "solve_s": w.solve_s, "message": w.text}]
                total = w.lp_s + share
                result.timings = {"compile_s": w.compile_s, "solve_s": w.solve_s, "total_s": total, "warm": w.warmed}
                result.time_s = total
                out[i] = present(w.problem, result)
        if bar is not None:
            bar.update(len(pending))
        pending.clear()

    def point(self, p: Problem):
        """One point: a certified closed form, else the warm LP (a `_Pending` point, which `_settle`
        finishes and certifies), else a fresh `solve`."""
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
            levels = self.levels if self.levels is not None and self.levels.takes(p) else None
            if levels is not None:
                prog = levels.program(p)           # only the level budgets moved: no build
            else:
                prog = build(p)
                self.levels = LevelProgram(p, prog) if LevelProgram.applies(p) else None
            t1 = time.perf_counter()
            same = self.shape == (prog.n, prog.A_ub.shape[0], prog.A_eq.shape[0])
            # the restricted program while it closes (Hamming: a few outputs), else the warm whole one
            found = solve_restricted(prog, start=self.state) if self.restricted and restrictable(prog) else None
            self.restricted = found is not None
            self.state = found.restricted if found is not None else None
            # HiGHS holds the last point's program of these levels: only its coefficients change
            rerun = found is None and levels is not None and levels.in_place and self.held is levels
            if found is not None:
                raw = found
            elif levels is not None and rerun:
                raw = levels.rerun(self.highs, prog)
            else:
                raw = solve_highs(prog, highs=self.highs, basis=self.basis if same else None)
            self.held = self.levels if found is None and raw.status == "optimal" else None
            if raw.status != "optimal":
                self.basis, self.shape = None, None
            elif raw.basis is not None:
                self.basis, self.shape = raw.basis, (prog.n, prog.A_ub.shape[0], prog.A_eq.shape[0])
            warmed = same and not self.restricted
            text = ("level coefficients updated in the previous point's model" if rerun
                    else "warm start from the previous point's basis" if warmed else raw.message)
        t2 = time.perf_counter()
        if raw.status != "optimal":
            return solve(p, solver)
        # what the program alone gives (it changes at the next point); the rest waits (`_settle`)
        return _Pending(p, *taken(prog, raw), raw, text, warmed, t1 - t0, t2 - t1, time.perf_counter() - t0)


@dataclasses.dataclass
class _Pending:
    """A warm LP point solved and waiting to be settled (`Along._settle`): its channel and dual
    bound as its program gave them, HiGHS's answer and what its Result will say of the solve."""

    problem: Problem
    channel: np.ndarray | None
    bound: float | None
    raw: Any
    text: str
    warmed: bool
    compile_s: float
    solve_s: float
    lp_s: float


SETTLE_POINTS, SETTLE_ENTRIES, SETTLE_S = 64, 1 << 20, 0.1
"""A path's warm LP points wait to be settled together (`settled.settle_points`) until there are
SETTLE_POINTS of them, or SETTLE_ENTRIES channel entries (8 MB), or SETTLE_S seconds of their
solves (the progress bar moves as they are settled). 100-point MAE sweeps, 25 runs each way
alternating in one process (medians of the paired ratios), against points settled one by one
(`SETTLE_POINTS` = 1, as `frontend.finish` did), two sessions: d = 32 LDP 1.11x / 1.19x (1.86
against 2.14 / 1.51 against 1.95 ms a point), LIP 1.12x / 1.14x, MinID-LDP 1.07x / 1.04x; LDP
d = 64 1.00x (HiGHS is 5.7 of its 7 ms)."""
