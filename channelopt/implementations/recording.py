"""A recording random source: run a randomizer once per path of its internal randomness.

A randomizer written against Python's `random` module or NumPy's legacy `np.random` functions is
run with those names replaced by a `Recorder`. Every draw becomes a branch point with finitely
many alternatives and their probabilities; a depth-first odometer replays the run once per
combination of alternatives, so each run is one path and its probability is the product of the
chosen alternatives' probabilities. Summing path probabilities per output gives the exact output
distribution of the code as written (white-box extraction).

Uniform draws (`random.random()`, `np.random.random()`, `rand`, `random_sample`) are symbolic: a
`Uniform` remembers the interval it is known to lie in and branches only when compared with a
number, with probabilities proportional to the two sub-intervals. Code that does arithmetic with a
uniform, or draws from a continuous law (Laplace, Gauss), cannot be enumerated and raises
`NotEnumerable`; such randomizers are audited by sampling (`blackbox`).

A draw with more than `max_alternatives` equally likely values (a hash seed out of 2^63) is
restricted to `seed_samples` fixed values drawn once per range from a seeded generator (the same
values wherever such a draw happens, so independent hash seeds stay independent); the extraction is
then exact *conditionally on those values* and says so (`Enumeration.sampled`).
"""

from __future__ import annotations

import importlib
import math
import random as _pyrandom
import sys
import types
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from ..errors import ChannelOptError

MAX_PATHS = 2_000_000            # runs per input before enumeration gives up
MAX_ALTERNATIVES = 1 << 16        # larger equally likely draws are sampled (hash seeds)
SEED_SAMPLES = 64
REPLAYS = 8                       # replays of the first path: a hidden fair coin escapes with probability 2^-8


class NotEnumerable(ChannelOptError):
    """The randomizer's internal randomness cannot be enumerated exactly (continuous draws,
    arithmetic on a uniform, too many paths)."""


class ContinuousDraw(NotEnumerable):
    """The randomizer draws from a continuous law (its report may still be an encoding plus
    Laplace noise: `extract.additive_laplace`)."""


class Uniform:
    """A symbolic U ~ Uniform[lo, hi) that branches on comparisons (see module docstring)."""

    __slots__ = ("_rec", "lo", "hi")

    def __init__(self, rec: Recorder, lo: float = 0.0, hi: float = 1.0):
        self._rec, self.lo, self.hi = rec, lo, hi

    def _below(self, t) -> bool:
        """U < t (= U <= t up to a null set), narrowing the interval along the branch taken."""
        t = float(t)
        if t <= self.lo:
            return False
        if t >= self.hi:
            return True
        w = (t - self.lo) / (self.hi - self.lo)
        if self._rec.choose((w, 1.0 - w)) == 0:
            self.hi = t
            return True
        self.lo = t
        return False

    def __lt__(self, t):
        return self._below(t)

    __le__ = __lt__

    def __gt__(self, t):
        return not self._below(t)

    __ge__ = __gt__

    def _arith(self, *_):
        raise NotEnumerable("the randomizer does arithmetic with a uniform draw (its value, not only comparisons, "
                            "reaches the output); audit it by sampling (black-box)")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _arith
    __float__ = __int__ = __floordiv__ = __rfloordiv__ = __neg__ = __index__ = _arith

    def __eq__(self, other):
        return self is other

    def __hash__(self):
        return id(self)


@dataclass
class Recorder:
    """The tape of one run: replays `prefix` choices, then takes alternative 0 at new branch points.

    `choose(probs)` returns the index of the alternative taken; `sizes[i]` and `probs[i]` record
    every branch point so the odometer can advance and the path's probability can be formed.
    """

    prefix: list = field(default_factory=list)
    taken: list = field(default_factory=list)
    sizes: list = field(default_factory=list)
    weight: float = 1.0
    sampled: bool = False
    seed_values: dict = field(default_factory=dict)
    max_alternatives: int = MAX_ALTERNATIVES
    seed_samples: int = SEED_SAMPLES
    seed: int = 0
    unordered: bool = False
    noise: object = None
    """A callable standing in for np.random.laplace (the additive-noise probe, `extract`), or None."""

    def choose(self, probs) -> int:
        pos = len(self.taken)
        i = self.prefix[pos] if pos < len(self.prefix) else 0
        self.taken.append(i)
        self.sizes.append(len(probs))
        self.weight *= float(probs[i])
        return i

    def integer(self, low: int, high: int) -> int:
        """A uniform integer in [low, high); huge ranges are sampled (hash seeds)."""
        low, high = int(low), int(high)
        if high <= low:
            raise ValueError(f"empty range for a random integer: [{low}, {high})")
        n = high - low
        if n == 1:
            return low
        if n > self.max_alternatives:
            key = (low, high)                  # the same sampled values wherever the draw happens on a path
            if key not in self.seed_values:
                gen = np.random.default_rng([self.seed] + [(v >> s) & 0xFFFFFFFF for v in (low - (-1 << 63), n) for s in (0, 32, 64)])
                self.seed_values[key] = [low + int(v) for v in gen.integers(0, n, self.seed_samples, dtype=np.uint64)]
            self.sampled = True
            vals = self.seed_values[key]
            return vals[self.choose(np.full(len(vals), 1.0 / len(vals)))]
        return low + self.choose(np.full(n, 1.0 / n))

    def categorical(self, probs) -> int:
        probs = np.asarray(probs, float)
        support = np.flatnonzero(probs > 0)
        return int(support[self.choose(probs[support] / probs[support].sum())])

    def without_replacement(self, n: int, k: int) -> list:
        """k distinct indices of 0..n-1, uniformly: in draw order, or, when the tape is `unordered`,
        as one of the C(n, k) sets (in increasing order, each with probability 1 / C(n, k))."""
        if k > n:
            raise ValueError(f"cannot take {k} values out of {n} without replacement")
        if not self.unordered:
            pool = list(range(n))
            return [pool.pop(self.integer(0, len(pool))) for _ in range(k)]
        picks, low = [], 0
        for t in range(k):                   # next = j with probability C(n-1-j, k-t-1) / C(n-low, k-t)
            cand = np.arange(low, n - (k - t) + 1)
            w = np.array([math.comb(n - 1 - j, k - t - 1) for j in cand], float)
            j = int(cand[self.choose(w / w.sum())])
            picks.append(j)
            low = j + 1
        return picks


def _continuous(name):
    def draw(*_, **__):
        raise ContinuousDraw(f"the randomizer draws from a continuous law ({name}); audit it by sampling (black-box)")
    return draw


def _shaped(size, draw):
    if size is None:
        return draw()
    shape = (size,) if np.isscalar(size) else tuple(size)
    out = np.empty(int(np.prod(shape)), dtype=object)
    for i in range(out.size):
        out[i] = draw()
    return out.reshape(shape)


class FakeRandomModule(types.SimpleNamespace):
    """Python's `random` module, drawing from a `Recorder`."""

    def __init__(self, rec: Recorder | None):
        super().__init__()
        self._rec = rec

    def random(self):
        return Uniform(self._rec)

    def randint(self, a, b):
        return self._rec.integer(a, int(b) + 1)

    def randrange(self, start, stop=None, step=1):
        if stop is None:
            start, stop = 0, start
        n = len(range(start, stop, step))
        return start + step * self._rec.integer(0, n)

    def choice(self, seq):
        return seq[self._rec.integer(0, len(seq))]

    def choices(self, population, weights=None, *, cum_weights=None, k=1):
        if cum_weights is not None:
            weights = np.diff(np.concatenate([[0.0], np.asarray(cum_weights, float)]))
        if weights is None:
            return [population[self._rec.integer(0, len(population))] for _ in range(k)]
        return [population[self._rec.categorical(weights)] for _ in range(k)]

    def sample(self, population, k):
        pool = list(population)
        return [pool[i] for i in self._rec.without_replacement(len(pool), k)]

    def shuffle(self, x):
        x[:] = self.sample(x, len(x))

    def __getattr__(self, name):
        if name in ("uniform", "gauss", "normalvariate", "expovariate", "betavariate", "gammavariate",
                    "lognormvariate", "triangular", "vonmisesvariate", "paretovariate", "weibullvariate"):
            return _continuous(f"random.{name}")
        return getattr(_pyrandom, name)


class FakeNumpyRandom(types.SimpleNamespace):
    """NumPy's legacy `np.random` functions, drawing from a `Recorder`."""

    def __init__(self, rec: Recorder | None):
        super().__init__()
        self._rec = rec

    def random(self, size=None):
        return _shaped(size, lambda: Uniform(self._rec))

    random_sample = ranf = sample = random

    def rand(self, *shape):
        return self.random(shape if shape else None)

    def randint(self, low, high=None, size=None, dtype=int):
        if high is None:
            low, high = 0, low
        return _shaped(size, lambda: np.dtype(dtype).type(self._rec.integer(low, high)))

    def binomial(self, n, p, size=None):
        n, p = int(n), float(p)
        pmf = (1.0 - p, p) if n == 1 else stats.binom.pmf(np.arange(n + 1), n, p)
        return _shaped(size, lambda: self._rec.categorical(pmf))

    def choice(self, a, size=None, replace=True, p=None):
        pool = np.arange(a) if np.isscalar(a) else np.asarray(a)
        weights = np.full(len(pool), 1.0 / len(pool)) if p is None else np.asarray(p, float)
        if size is None:
            return pool[self._rec.categorical(weights)]
        count = int(np.prod(size))
        if replace:
            picks = [self._rec.categorical(weights) for _ in range(count)]
        elif p is None:
            picks = self._rec.without_replacement(len(pool), count)
        else:
            left, picks = weights.copy(), []
            for _ in range(count):
                i = self._rec.categorical(left)
                picks.append(i)
                left[i] = 0.0
        return pool[np.array(picks, dtype=int)].reshape(size)

    def permutation(self, x):
        pool = np.arange(x) if np.isscalar(x) else np.asarray(x)
        return self.choice(pool, size=len(pool), replace=False)

    def __getattr__(self, name):
        if name == "laplace" and self._rec is not None and self._rec.noise is not None:
            return self._rec.noise
        if name in ("laplace", "normal", "standard_normal", "randn", "exponential", "uniform", "gamma", "beta",
                    "logistic", "gumbel", "standard_cauchy", "standard_exponential"):
            return _continuous(f"np.random.{name}")
        if name in ("seed", "set_state", "get_state", "default_rng", "RandomState", "Generator"):
            return getattr(np.random, name)
        raise NotEnumerable(f"np.random.{name} is not supported by the recording random source")


class FakeNumpy(types.ModuleType):
    """The `numpy` module with `random` replaced."""

    def __init__(self, rec: Recorder | None):
        super().__init__("numpy")
        self.random = FakeNumpyRandom(rec)

    def __getattr__(self, name):
        return getattr(np, name)


def _modules(packages):
    """Every loaded module of the given top-level packages (importing them first)."""
    mods = []
    for pkg in packages:
        importlib.import_module(pkg)
        mods += [m for name, m in list(sys.modules.items())
                 if m is not None and (name == pkg or name.startswith(pkg + "."))]
    return mods


@contextmanager
def patched(packages, rec: Recorder | None = None):
    """Run numba-compiled functions of `packages` as their Python source and, given a `Recorder`,
    replace their `random` and `numpy` names by recording ones, for the duration of the block
    (restored on exit, even on error). Without a recorder the global generators stay, so that
    seeding them makes the randomizer reproducible (`blackbox`).

    Yields a function that points the fakes at a new tape (one per run of the odometer)."""
    fake_random, fake_np = FakeRandomModule(rec), FakeNumpy(rec)

    def retape(new: Recorder) -> None:
        fake_random._rec = fake_np.random._rec = new

    saved = []
    for mod in _modules(packages):
        for name, value in list(vars(mod).items()):
            new: object = None
            if hasattr(value, "py_func") and callable(getattr(value, "py_func", None)):
                new = value.py_func                      # numba dispatcher: run its Python source
            elif rec is None:
                continue
            elif value is _pyrandom:
                new = fake_random
            elif value is np:
                new = fake_np
            elif value is np.random:
                new = fake_np.random
            if new is not None:
                saved.append((mod, name, value))
                setattr(mod, name, new)
    try:
        yield retape
    finally:
        for mod, name, value in reversed(saved):
            setattr(mod, name, value)


def key_of(output):
    """A hashable, printable form of one report: arrays and lists become tuples of Python scalars."""
    if isinstance(output, Uniform):
        raise NotEnumerable("the randomizer releases a uniform draw itself; audit it by sampling (black-box)")
    if isinstance(output, np.ndarray):
        return tuple(key_of(v) for v in output.tolist()) if output.ndim else key_of(output.item())
    if isinstance(output, (list, tuple)) or isinstance(output, types.GeneratorType) or type(output) is zip:
        return tuple(key_of(v) for v in output)
    if isinstance(output, np.generic):
        return key_of(output.item())
    if isinstance(output, float) and output.is_integer():
        return int(output)
    return output


@dataclass(frozen=True)
class Enumeration:
    """The exact output distribution of one input: `dist[output key] = probability`."""

    dist: dict
    paths: int
    sampled: bool


def enumerate_outputs(run, packages, *, max_paths: int = MAX_PATHS, seed: int = 0,
                      seed_samples: int = SEED_SAMPLES, unordered: bool = False) -> Enumeration:
    """Run `run()` once per path of its internal randomness (module docstring) and return the
    exact distribution of its return value.

    With `unordered`, uniform samples without replacement are enumerated as sets (C(n, k) paths
    instead of n! / (n - k)!), each in increasing order: the distribution is then exact only for a
    report read as a set (the caller checks that, `audit.white_box`).

    Raises
    ------
    NotEnumerable
        Continuous draws, arithmetic on a uniform draw, or more than `max_paths` paths.
    """
    prefix: list = []
    dist: dict = {}
    seed_values: dict = {}
    paths, sampled = 0, False
    with patched(packages, Recorder()) as retape:
        while True:
            rec = Recorder(prefix=prefix, seed_values=seed_values, seed=seed, seed_samples=seed_samples, unordered=unordered)
            retape(rec)
            out = key_of(run())
            if paths == 0:                     # a draw the recorder does not see makes replays disagree
                for _ in range(REPLAYS):
                    again = Recorder(prefix=[], seed_values=seed_values, seed=seed, seed_samples=seed_samples,
                                     unordered=unordered)
                    retape(again)
                    if key_of(run()) != out or again.taken != rec.taken:
                        raise NotEnumerable("the randomizer is not deterministic under a fixed sequence of draws: it "
                                            "draws from a random source other than Python's random and NumPy's global "
                                            "generator in the patched packages")
            if len(rec.taken) < len(prefix):
                raise NotEnumerable("the randomizer is not deterministic under a fixed sequence of draws "
                                    "(it drew fewer values when replayed)")
            paths += 1
            sampled |= rec.sampled
            if rec.weight > 0:
                dist[out] = dist.get(out, 0.0) + rec.weight
            if paths > max_paths:
                raise NotEnumerable(f"more than {max_paths:,} paths of internal randomness; audit it by sampling (black-box)")
            k = len(rec.taken) - 1                 # odometer: the deepest branch point with an alternative left
            while k >= 0 and rec.taken[k] + 1 >= rec.sizes[k]:
                k -= 1
            if k < 0:
                break
            prefix = rec.taken[:k] + [rec.taken[k] + 1]
    total = math.fsum(dist.values())
    if abs(total - 1.0) > 1e-9:
        raise NotEnumerable(f"path probabilities sum to {total!r}, not 1: the randomizer's draws depend on "
                            "state outside the recording random source")
    return Enumeration(dist, paths, sampled)
