"""Black-box audit: a lower confidence bound on a randomizer's leakage from its reports alone.

N reports are drawn per input (seeded, in chunks, counts only: memory stays flat in N). Each report
is mapped to the events it belongs to (by default, each distinct report is one event). Every
Pr(E | x) gets an exact Clopper-Pearson interval at level 1 - alpha / K, K = d x (number of
events) (Bonferroni), so all K intervals hold together with probability >= 1 - alpha. On that
event, for every pair x, x' and event E,

    Pr(E|x) / Pr(E|x') >= lo(E|x) / hi(E|x'),

and since the LDP leakage is at least the log-ratio of any event's probabilities, the largest
ln lo / hi is a valid lower bound on eps (the LDP-Auditor construction of Arcolezi & Gambs,
PETS 2024, with the correction for the number of events). For LIP under a prior P the same
intervals bound Pr(E|x) / sum_x' P_x' Pr(E|x') from below in both directions. The point estimate
is the same ratio at the empirical frequencies.
"""

from __future__ import annotations

import math
import random as _pyrandom
from dataclasses import dataclass

import numpy as np
from scipy import stats

from ..errors import ProblemError
from .recording import key_of, patched

CHUNK = 4096


def draw(run, x: int, n: int, seed, packages=()) -> list:
    """n reports of input x from `run`, with Python's and NumPy's global generators seeded."""
    ss = np.random.SeedSequence(seed)
    state = np.random.get_state(), _pyrandom.getstate()   # noqa: NPY002 (the legacy global source is what it reads)
    _pyrandom.seed(int(ss.generate_state(1)[0]))
    np.random.seed(ss.generate_state(1, np.uint32)[0] ^ 0x5EED)  # noqa: NPY002
    try:
        with patched(packages):
            return [key_of(run(x)) for _ in range(n)]
    finally:
        np.random.set_state(state[0])  # noqa: NPY002
        _pyrandom.setstate(state[1])


def clopper_pearson(k, n, alpha):
    """Two-sided exact (Clopper-Pearson) interval of a binomial proportion, vectorized."""
    k = np.asarray(k, float)
    lo = np.where(k > 0, stats.beta.ppf(alpha / 2, np.maximum(k, 1e-300), n - k + 1), 0.0)
    hi = np.where(k < n, stats.beta.ppf(1 - alpha / 2, k + 1, np.maximum(n - k, 1e-300)), 1.0)
    return lo, hi


@dataclass(frozen=True)
class Counts:
    """counts[x, e]: reports of input x in event e, out of n per input; `events` names the columns."""

    counts: np.ndarray
    n: int
    events: list


def count_events(run, d: int, n: int, *, seed: int = 0, packages=(), events=None, outputs=None,
                 name: str = "randomizer", progress=None) -> Counts:
    """Draw n reports per input in chunks and count the events they fall in.

    `outputs`, when given, is the declared report space: a report outside it is an error.
    """
    index: dict = {}
    rows: list[dict] = [{} for _ in range(d)]
    declared = None if outputs is None else {key_of(o) for o in outputs}
    for x in range(d):
        done, c = 0, 0
        while done < n:
            size = min(CHUNK, n - done)
            try:
                reports = draw(run, x, size, [seed, x, c], packages)
            except ProblemError:
                raise
            except Exception as e:
                raise ProblemError(f"{name} raised {type(e).__name__} on input x = {x}: {e}") from None
            for y in reports:
                if declared is not None and y not in declared:
                    raise ProblemError(f"{name} returned {y!r} on input x = {x}, outside the declared outputs")
                for ev in (events(y) if events is not None else (y,)):
                    ev = key_of(ev)
                    index.setdefault(ev, len(index))
                    rows[x][ev] = rows[x].get(ev, 0) + 1
            done += size
            c += 1
            if progress is not None:
                progress(size)
    names = list(index)
    counts = np.zeros((d, len(names)), dtype=np.int64)
    for x, row in enumerate(rows):
        for ev, k in row.items():
            counts[x, index[ev]] = k
    return Counts(counts, n, names)


def check_deterministic(run, name: str, packages=(), x: int = 0, n: int = 8) -> None:
    """Two seeded runs must give the same reports: otherwise no seed makes the audit reproducible."""
    a, b = draw(run, x, n, [7, x], packages), draw(run, x, n, [7, x], packages)
    if a != b:
        raise ProblemError(f"{name} is not deterministic under a fixed seed on input x = {x} "
                           "(it draws from a random source other than Python's random and NumPy's global generator)")


@dataclass(frozen=True)
class Bound:
    """A leakage lower confidence bound, its point estimate and the witness (x, x', event)."""

    lower: float
    point: float
    witness: tuple
    confidence: float
    intervals: int


def _log_ratio(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.log(a) - np.log(b)
    return np.where((a == 0) & (b == 0), -np.inf, np.where(b == 0, np.where(a > 0, np.inf, -np.inf), r))


def ldp_bound(c: Counts, confidence: float = 0.95) -> Bound:
    """Lower confidence bound on the LDP leakage (module docstring)."""
    K = c.counts.size
    lo, hi = clopper_pearson(c.counts, c.n, (1 - confidence) / K)
    freq = c.counts / c.n
    lb = _log_ratio(lo[:, None, :], hi[None, :, :])                       # x, x', e
    i, j, e = np.unravel_index(np.argmax(lb), lb.shape)
    pt = _log_ratio(freq[:, None, :], freq[None, :, :])
    return Bound(float(max(lb[i, j, e], 0.0)), float(max(pt.max(), 0.0)), (int(i), int(j), c.events[e]), confidence, K)


def lip_bound(c: Counts, prior, confidence: float = 0.95) -> Bound:
    """Lower confidence bound on the LIP leakage (G = X) under `prior` (module docstring)."""
    prior = np.asarray(prior, float)
    K = c.counts.size
    lo, hi = clopper_pearson(c.counts, c.n, (1 - confidence) / K)
    freq = c.counts / c.n
    up = _log_ratio(lo, (prior[:, None] * hi).sum(axis=0)[None, :])     # Pr(E|x) / Pr(E) from below
    down = _log_ratio((prior[:, None] * lo).sum(axis=0)[None, :], hi)   # Pr(E) / Pr(E|x) from below
    both = np.maximum(up, down)
    x, e = np.unravel_index(np.argmax(both), both.shape)
    marg = (prior[:, None] * freq).sum(axis=0)[None, :]
    pt = np.maximum(_log_ratio(freq, marg), _log_ratio(marg, freq))
    return Bound(float(max(both[x, e], 0.0)), float(max(pt.max(), 0.0)), (int(x), int(x), c.events[e]), confidence, K)


def plan_samples(epsilon: float, margin: float, p_event: float, intervals: int, confidence: float = 0.95,
                 n_max: int = 10 ** 9) -> int:
    """Smallest N per input at which a violation by `margin` is detected at the expected counts.

    The witnessing event has probability `p_event` under the less likely input and
    p_event * e^(epsilon + margin) under the other; detection means the Clopper-Pearson bound of
    `ldp_bound` (with `intervals` simultaneous intervals) exceeds epsilon.
    """
    if not (margin > 0 and 0 < p_event and p_event * math.exp(epsilon + margin) <= 1):
        raise ProblemError(f"plan: need margin > 0 and 0 < p_event e^(eps + margin) <= 1, got margin = {margin!r}, p_event = {p_event!r}")
    a, b = p_event * math.exp(epsilon + margin), p_event
    alpha = (1 - confidence) / intervals

    def detects(n):
        lo, _ = clopper_pearson(round(a * n), n, alpha)
        _, hi = clopper_pearson(round(b * n), n, alpha)
        return lo > 0 and math.log(lo) - math.log(hi) > epsilon

    n = 16
    while not detects(n):
        n *= 2
        if n > n_max:
            raise ProblemError(f"plan: no N up to {n_max:,} detects a margin of {margin!r}")
    lo_n, hi_n = n // 2, n
    while hi_n - lo_n > max(1, hi_n // 100):
        mid = (lo_n + hi_n) // 2
        lo_n, hi_n = (lo_n, mid) if detects(mid) else (mid, hi_n)
    return int(hi_n)
