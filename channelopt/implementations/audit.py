"""`audit_mechanism`: exact leakage of a randomizer's code where it can be opened, a statistical
lower bound where it cannot, and a verdict against its claimed budget."""

from __future__ import annotations

import importlib
import json
import math
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from ..errors import ProblemError
from ..notions import AUDIT_TOL
from . import blackbox
from .adapters import ADAPTERS, Randomizer, build, check_domain
from .extract import Extraction, additive_laplace, bitwise_channel, enumerate_channel
from .recording import SEED_SAMPLES, ContinuousDraw, NotEnumerable

NOTIONS = ("ldp", "lip")
WHITE_PATHS = 1 << 14         # paths per input before a bitwise extraction is preferred
SAME_RUNS = 64                # seeded runs per input showing the d-symbol code runs as its family's instance
UNORDERED_CHECK_D = 8
ONE_ATTRIBUTE = "ldp (one attribute differs)"
DEFAULT_SAMPLES = 20_000


@dataclass(frozen=True)
class MechanismAudit:
    """What `audit_mechanism` found.

    Attributes
    ----------
    name, d, claimed :
        The randomizer, its input domain size and its claimed LDP budget.
    method : str
        "white-box: ..." (exact) or "black-box: N reports per input".
    leakage : dict
        Per notion: the exact leakage (white-box) or {"lower": ..., "point": ...} (black-box).
    verdict : str
        "within claim", "violates claim" or "inconclusive" (judged on the first notion).
    witness : dict or None
        For a violation: the inputs x, x' and the report (or event) whose probability ratio
        exceeds the claim.
    notes : list of str
        Conditions of the result (sampled hash seeds, canonical form, why black-box).
    """

    name: str
    d: int
    claimed: float
    method: str
    leakage: dict
    verdict: str
    witness: dict | None = None
    samples: int | None = None
    notes: list = field(default_factory=list)
    extraction: Extraction | None = field(default=None, repr=False, compare=False)
    shape: tuple | None = None
    """Attribute sizes of a multidimensional input (the witness is shown as tuples)."""

    def to_dict(self) -> dict:
        out = asdict(self)
        out.pop("extraction")
        return json.loads(json.dumps(out, default=_plain))

    def __str__(self) -> str:
        lines = [f"{self.name} (d = {self.d}, claimed eps = {self.claimed:g}): {self.verdict}", f"  method: {self.method}"]
        for k, v in self.leakage.items():
            lines.append(f"  {k}: " + (f"{v:.6g}" if not isinstance(v, dict) else
                                       f">= {v['lower']:.6g} at {100 * v['confidence']:g}% confidence (point estimate {v['point']:.6g})"))
        if self.witness:
            x, x2 = self.witness["x"], self.witness["x_prime"]
            if self.shape is not None:
                x, x2 = (f"{v} {tuple(int(a) for a in np.unravel_index(v, self.shape))}" for v in (x, x2))
            lines.append(f"  witness: x = {x}, x' = {x2}, report {self.witness['report']!r}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        import html
        return f"<pre>{html.escape(str(self))}</pre>"


def _plain(v):
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return repr(v)


def _callable(target: str, d: int, epsilon: float) -> Randomizer:
    mod_name, _, attr = target.partition(":")
    try:
        fn = getattr(importlib.import_module(mod_name), attr)
    except (ImportError, AttributeError, ValueError) as e:
        raise ProblemError(f"randomizer {target!r}: cannot import it as module:function ({e})") from None
    if not callable(fn):
        raise ProblemError(f"randomizer {target!r} is not callable")
    return Randomizer(name=target, d=d, epsilon=epsilon, run=fn, packages=(mod_name.split(".")[0],))


def resolve(randomizer, d: int, epsilon: float, params: dict | None = None) -> Randomizer:
    """A `Randomizer` from an adapter name ("pure-ldp:OUE"), "module:function", a callable x -> report,
    or a `Randomizer` (returned as is)."""
    if isinstance(randomizer, Randomizer):
        return randomizer
    if callable(randomizer):
        mod = getattr(randomizer, "__module__", None) or "__main__"
        return Randomizer(name=getattr(randomizer, "__qualname__", repr(randomizer)), d=int(d), epsilon=float(epsilon),
                          run=randomizer, packages=(mod.split(".")[0],))
    if isinstance(randomizer, str):
        if randomizer in ADAPTERS or ":" not in randomizer or randomizer.split(":")[0] in ("pure-ldp", "multi-freq-ldpy"):
            return build(randomizer, d, epsilon, **(params or {}))
        check_domain(d, epsilon)
        return _callable(randomizer, int(d), float(epsilon))
    raise ProblemError(f"randomizer must be an adapter name, 'module:function' or a callable, got {randomizer!r}")


def white_box(r: Randomizer, *, max_paths: int = WHITE_PATHS, seed: int = 0) -> Extraction:
    """Exact extraction of `r` (module `extract`): full enumeration, or additive Laplace noise for
    real-valued reports; past `max_paths` paths per input, bitwise (unary-type encodings) or with
    samples read as sets (set-valued reports), both from `r.family` after checking that the
    d-symbol code runs as the family's instance.

    Raises NotEnumerable when none applies.
    """
    if r.continuous:
        return _wrap(r, lambda: additive_laplace(r.run, r.d, r.packages))
    max_paths = max(max_paths, r.max_paths or 0)
    try:
        return _wrap(r, lambda: enumerate_channel(r.run, r.d, r.packages, canonical=r.canonical, max_paths=max_paths, seed=seed))
    except ContinuousDraw as e:                     # maybe an encoding plus Laplace noise
        try:
            return _wrap(r, lambda: additive_laplace(r.run, r.d, r.packages))
        except NotEnumerable:
            raise e from None
    except NotEnumerable:
        if r.family is None or not (r.bitwise or r.unordered):
            raise
        _wrap(r, lambda: _same_code(r, seed))
        if r.bitwise:
            ext = _wrap(r, lambda: bitwise_channel(r.family, r.d, r.packages))
        else:
            ext = _wrap(r, lambda: _as_sets(r, max_paths, seed))
        return replace(ext, method=f"{ext.method}; the d = {r.d} code gave the same reports as that instance family on "
                                   f"{SAME_RUNS} seeded runs per input")


def _same_code(r: Randomizer, seed: int) -> None:
    """NotEnumerable unless `r.run` and `r.family(d)` give identical reports under identical seeds."""
    assert r.family is not None
    inst = r.family(r.d)
    for x in range(r.d):
        if blackbox.draw(r.run, x, SAME_RUNS, [seed, x], r.packages) != blackbox.draw(inst, x, SAME_RUNS, [seed, x], r.packages):
            raise NotEnumerable(f"the d = {r.d} code does not run as the instance it is read from (input {x}): "
                                "no bitwise or set extraction")


def _as_sets(r: Randomizer, max_paths: int, seed: int) -> Extraction:
    """Enumeration with samples without replacement as sets, after checking on a small instance
    that this gives the ordered enumeration's channel of the canonical (set) report."""
    assert r.family is not None
    k = min(r.d, UNORDERED_CHECK_D)
    small = r.family(k)
    ordered = enumerate_channel(small, k, r.packages, canonical=r.canonical, seed=seed)
    as_sets = enumerate_channel(small, k, r.packages, canonical=r.canonical, seed=seed, unordered=True)
    if ordered.outputs != as_sets.outputs or not np.allclose(ordered.channel, as_sets.channel, atol=1e-12, rtol=0):
        raise NotEnumerable(f"reading samples as sets changes the channel of the report at d = {k}")
    ext = enumerate_channel(r.run, r.d, r.packages, canonical=r.canonical, max_paths=max_paths, seed=seed, unordered=True)
    return replace(ext, method=f"{ext.method}, checked against ordered enumeration at d = {k}")


def _wrap(r: Randomizer, extract):
    try:
        return extract()
    except (NotEnumerable, ProblemError):
        raise
    except Exception as e:
        raise ProblemError(f"{r.name} raised {type(e).__name__} while its randomness was enumerated: {e}") from None


def _verdict(leak: float, claimed: float) -> str:
    return "within claim" if leak <= claimed * (1 + AUDIT_TOL) else "violates claim"


def audit_mechanism(randomizer, d: int | None = None, epsilon: float | None = None, *, notions=("ldp",), prior=None,
                    params: dict | None = None, method: str = "auto", samples: int | None = None, seed: int = 0,
                    confidence: float = 0.95, events=None, outputs=None) -> MechanismAudit:
    """Audit a randomizer against its claimed budget: exactly if its code can be opened, else by sampling.

    Parameters
    ----------
    randomizer : str, callable or Randomizer
        An adapter name (`channelopt.implementations.ADAPTERS`, e.g. "multi-freq-ldpy:OUE"), an
        importable "module:function" or a callable x -> report drawing from Python's `random` or
        NumPy's global `np.random`.
    d : int
        Inputs 0..d-1 (default: the Randomizer's).
    epsilon : float
        The claimed LDP budget (longitudinal adapters claim their per-report eps_1).
    notions : sequence of {"ldp", "lip"}
        Checked in order; the verdict is judged on the first. "lip" uses `prior` (default uniform).
    method : {"auto", "white-box", "black-box"}
        "auto" tries the exact extraction and falls back to sampling when it cannot apply.
    samples : int
        Reports per input for the black-box audit (default 20,000).
    confidence : float
        Joint confidence of the black-box intervals (default 0.95).
    events : callable report -> iterable, optional
        Event family for the black-box audit (default: the adapter's own family, else the values
        its server counts a report for, else each distinct report).
    outputs : sequence, optional
        Declared report space; a report outside it is an error.

    Returns
    -------
    MechanismAudit
    """
    if isinstance(randomizer, Randomizer):
        r = randomizer
    else:
        if d is None or epsilon is None:
            raise ProblemError("d and epsilon are required unless a Randomizer is given")
        r = resolve(randomizer, d, epsilon, params)
    notions = tuple(notions)
    bad = [n for n in notions if n not in NOTIONS]
    if not notions or bad:
        raise ProblemError(f"notions must be among {NOTIONS}, got {list(notions)!r}")
    if method not in ("auto", "white-box", "black-box"):
        raise ProblemError(f"method must be 'auto', 'white-box' or 'black-box', got {method!r}")
    if not (0 < confidence < 1):
        raise ProblemError(f"confidence must be in (0, 1), got {confidence!r}")
    if samples is not None and (isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1):
        raise ProblemError(f"samples must be an integer >= 1, got {samples!r}")
    prior = np.full(r.d, 1.0 / r.d) if prior is None else np.asarray(prior, float)
    if prior.shape != (r.d,) or np.any(prior <= 0) or not math.isclose(prior.sum(), 1.0, abs_tol=1e-9):
        raise ProblemError(f"prior must be {r.d} positive numbers summing to 1, got {prior.tolist()!r}")
    notes = []
    if r.canonical is not None:
        notes.append("reports are read in canonical form (post-processing) before counting")
    if method != "black-box":
        try:
            ext = white_box(r, seed=seed)
            return _exact(r, ext, notions, prior, notes)
        except NotEnumerable as e:
            if method == "white-box":
                raise ProblemError(f"{r.name}: no exact extraction: {e}") from None
            notes.append(f"white-box extraction not possible: {e}")
    return _statistical(r, notions, prior, samples or DEFAULT_SAMPLES, seed, confidence, events or r.events or r.support,
                        outputs, notes)


def _exact(r: Randomizer, ext: Extraction, notions, prior, notes) -> MechanismAudit:
    leakage, witness = {}, None
    eps, (x, x2, y) = ext.ldp()
    for n in notions:
        leakage[n] = eps if n == "ldp" else ext.lip(prior)
    if r.shape is not None:
        T = np.array(np.unravel_index(np.arange(r.d), r.shape)).T
        one = (T[:, None, :] != T[None, :, :]).sum(axis=2) == 1
        leakage[ONE_ATTRIBUTE] = float(ext.pair_leakage()[one].max())
        notes.append(f"inputs are tuples of {len(r.shape)} attributes of sizes {'x'.join(map(str, r.shape))}; "
                     f"'{ONE_ATTRIBUTE}' is the leakage between tuples that differ in a single attribute")
    first = leakage[notions[0]]
    verdict = _verdict(first, r.epsilon)
    if verdict == "violates claim" and notions[0] == "ldp":
        witness = {"x": x, "x_prime": x2, "report": y}
    if ext.sampled:
        notes.append(f"a huge draw (hash seed) was restricted to {SEED_SAMPLES} sampled values: exact given those seeds, "
                     "a lower bound over all seeds")
    return MechanismAudit(r.name, r.d, r.epsilon, f"white-box: {ext.method} ({ext.paths:,} runs)", leakage, verdict,
                          witness, None, notes, ext, r.shape)


def _statistical(r, notions, prior, n, seed, confidence, events, outputs, notes) -> MechanismAudit:
    blackbox.check_deterministic(r.run, r.name, r.packages)
    c = blackbox.count_events(r.run, r.d, n, seed=seed, packages=r.packages, events=events, outputs=outputs, name=r.name)
    leakage, witness, verdict = {}, None, "inconclusive"
    for i, name in enumerate(notions):
        b = blackbox.ldp_bound(c, confidence) if name == "ldp" else blackbox.lip_bound(c, prior, confidence)
        leakage[name] = {"lower": b.lower, "point": b.point, "confidence": confidence, "intervals": b.intervals}
        if i == 0 and b.lower > r.epsilon * (1 + AUDIT_TOL):
            verdict = "violates claim"
            witness = {"x": b.witness[0], "x_prime": b.witness[1], "report": b.witness[2]}
    if verdict == "inconclusive":
        notes.append("sampling can show a violation, never its absence: no violation detected at this N")
    return MechanismAudit(r.name, r.d, r.epsilon, f"black-box: {n:,} reports per input", leakage, verdict, witness, n, notes,
                          shape=r.shape)
