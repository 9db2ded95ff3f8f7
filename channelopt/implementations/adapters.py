"""Adapters: the frequency oracles of `pure-ldp` and `multi-freq-ldpy` as `Randomizer`s.

An adapter builds the library's own client object (or names its client function) and says how to
run one report of input x = 0..d-1 through the library's code; the probabilities are then read by
enumerating that code (`recording`), never copied from the paper the oracle cites. Tested
versions: pure-ldp 1.2.0, multi-freq-ldpy 0.2.5 (`pip install "channelopt[peers]"`).

Registry keys are "library:ORACLE" (`ADAPTERS`); `build(name, d, epsilon, **params)` makes one.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import ProblemError, did_you_mean

PURE, MULTI = "pure_ldp", "multi_freq_ldpy"
INSTALL = {PURE: "pure-ldp", MULTI: "multi-freq-ldpy"}


@dataclass(frozen=True)
class Randomizer:
    """One randomizer under audit: how to run it, what it claims, how its server reads a report.

    Attributes
    ----------
    name : str
        "library:ORACLE" or the callable's dotted name.
    d : int
        Inputs are 0..d-1.
    epsilon : float
        The claimed LDP budget of one report.
    run : callable x -> report
        One report through the implementation's own code and global random sources.
    packages : tuple of str
        Top-level packages whose `random`/`numpy` names the recording source replaces.
    canonical : callable or None
        Post-processing applied to each report before it is counted (e.g. an ordered subset read
        as a set); None for the report as released.
    family : callable k -> run, or None
        `run` of a k-symbol instance of the same code and parameters, for the extractions that
        read a small instance (bitwise, unordered); the d-symbol instance must run as `run` does.
    bitwise : bool
        A unary-type encoding: extract it bit by bit from `family` (`extract.bitwise_channel`).
    unordered : bool
        Its uniform samples without replacement may be enumerated as sets (its `canonical` reads
        the report as a set); checked against ordered enumeration on a small instance.
    continuous : bool
        The report is real-valued: only the black-box audit applies.
    events : callable report -> iterable of event ids, or None
        Event family for the black-box audit (default: each report is its own event).
    support : callable report -> iterable of values, or None
        The values the library's server counts a report for (frequency estimation).
    server_pq : (p, q) or None
        The probabilities the library's unbiased estimator divides by.
    variance : callable (n, f) -> float, or None
        The library's own variance formula for one frequency, where it has one.
    server : callable reports -> ndarray (d,), or None
        The library's own server: normalized frequency estimates from a list of reports.
    max_paths : int or None
        Paths per input the white-box enumeration may take before it gives up (default
        `audit.WHITE_PATHS`), for randomizers known to need more.
    shape : tuple of int or None
        Attribute sizes of a multidimensional input (x = np.unravel_index(x, shape)): the audit
        also gives the leakage between tuples that differ in one attribute.
    params : dict
        The parameters the adapter used (library defaults included).
    """

    name: str
    d: int
    epsilon: float
    run: Callable[[int], Any]
    packages: tuple = ()
    canonical: Callable | None = None
    family: Callable | None = None
    bitwise: bool = False
    unordered: bool = False
    continuous: bool = False
    events: Callable | None = None
    support: Callable | None = None
    server_pq: tuple | None = None
    variance: Callable | None = None
    server: Callable | None = None
    max_paths: int | None = None
    shape: tuple | None = None
    params: dict = field(default_factory=dict)


def _require(package: str):
    try:
        return importlib.import_module(package)
    except ImportError as e:
        raise ProblemError(f"adapter needs {INSTALL.get(package, package)!r}, which is not installed: "
                           f"pip install \"channelopt[peers]\" ({e})") from None


def _identity(x):
    return x


def _set(report):
    return tuple(sorted(report))


def _bits_set(report):
    return [k for k, v in enumerate(report) if v == 1]


def _pure_de(d, eps, **_):
    _require(PURE)
    from pure_ldp.frequency_oracles.direct_encoding import DEClient, DEServer
    client, server = DEClient(eps, d, index_mapper=_identity), DEServer(eps, d, index_mapper=_identity)
    return dict(run=client.privatise, support=lambda y: [y], server_pq=(server.p, server.q),
                params={"p": client.p, "q": client.q})


def _pure_ue(oue):
    def make(d, eps, **_):
        _require(PURE)
        from pure_ldp.frequency_oracles.unary_encoding import UEClient, UEServer
        client = UEClient(eps, d, use_oue=oue, index_mapper=_identity)
        server = UEServer(eps, d, use_oue=oue, index_mapper=_identity)
        return dict(run=client.privatise, support=_bits_set, server_pq=(server.p, server.q),
                    family=lambda k: UEClient(eps, k, use_oue=oue, index_mapper=_identity).privatise, bitwise=True,
                    params={"p": client.p, "q": client.q})
    return make


def _lh_support(g):
    import xxhash

    def support(report, d):
        y, seed = report
        return [v for v in range(d) if xxhash.xxh32(str(v), seed=seed).intdigest() % g == y]
    return support


def _pure_flh_server(eps, d, k, g):
    def estimate(reports):
        import warnings

        from pure_ldp.frequency_oracles.local_hashing import FastLHServer
        server = FastLHServer(eps, d, k, g=g, use_olh=True, index_mapper=_identity)
        for report in reports:
            server.aggregate(report)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.array([server.estimate(v, suppress_warnings=True) for v in range(d)]) / len(reports)
    return estimate


def _pure_lh(olh, fast=False):
    def make(d, eps, g=2, k=100, **_):
        _require(PURE)
        from pure_ldp.frequency_oracles.local_hashing import FastLHClient, LHClient, LHServer
        client = (FastLHClient(eps, d, k, g=g, use_olh=olh, index_mapper=_identity) if fast
                  else LHClient(eps, d, g=g, use_olh=olh, index_mapper=_identity))
        server = LHServer(eps, d, g=g, use_olh=olh, index_mapper=_identity)
        sup = _lh_support(client.g)
        extra = {"server": _pure_flh_server(eps, d, k, client.g)} if fast else {}
        return dict(run=client.privatise, support=lambda r: sup(r, d), server_pq=(server.p, 1.0 / client.g), **extra,
                    params={"g": client.g, "p": client.p, "q": client.q, **({"k": k} if fast else {})})
    return make


def _pure_he(d, eps, **_):
    _require(PURE)
    from pure_ldp.frequency_oracles.histogram_encoding import HEClient
    client = HEClient(eps, d, index_mapper=_identity)
    return dict(run=client.privatise, continuous=True, params={"laplace scale": 2 / eps},
                events=lambda y: [k for k, v in enumerate(y) if v > 0.5])


def _pure_hm(d, eps, t=1, **_):
    _require(PURE)
    from pure_ldp.frequency_oracles.hadamard_mechanism import HadamardMechClient
    client = HadamardMechClient(eps, d, t, index_mapper=_identity)
    return dict(run=client.privatise, params={"t": client.t, "p": client.p})


def _pure_hr(d, eps, **_):
    _require(PURE)
    from pure_ldp.frequency_oracles.hadamard_response import HadamardResponseClient as HRClient
    from pure_ldp.frequency_oracles.hadamard_response import HadamardResponseServer as HRServer
    server = HRServer(eps, d, index_mapper=_identity)
    client = HRClient(eps, d, server.get_hash_funcs(), index_mapper=_identity)
    return dict(run=client.privatise, params={"regime": type(client.hr).__name__})


def _pure_cms(hadamard):
    def make(d, eps, k=4, m=8, **_):
        _require(PURE)
        from pure_ldp.core import generate_hash_funcs
        from pure_ldp.frequency_oracles.apple_cms import CMSClient
        client = CMSClient(eps, generate_hash_funcs(k, m), m, is_hadamard=hadamard)   # as CMSServer draws them
        return dict(run=client.privatise, params={"k": k, "m": m, "flip probability": client.prob})
    return make


def _pure_rappor(d, eps, m=8, k=1, cohorts=2, **_):
    _require(PURE)
    from pure_ldp.frequency_oracles.rappor import RAPPORClient, RAPPORServer
    f = RAPPORClient.convert_eps_to_f(None, eps)                       # the library's own conversion
    server = RAPPORServer(f, m, k, d, num_of_cohorts=cohorts, index_mapper=_identity)
    client = RAPPORClient(f, m, server.get_hash_funcs(), num_of_cohorts=cohorts, index_mapper=_identity)
    return dict(run=client.privatise, params={"f (convert_eps_to_f)": f, "m": m, "k": k, "cohorts": cohorts,
                                              "eps (convert_f_to_eps)": client.convert_f_to_eps(f, k)})


def _pure_pcs(d, eps, l=2, w=4, **_):
    _require(PURE)
    from pure_ldp.core import generate_hash_funcs
    from pure_ldp.frequency_oracles.priv_count_sketch import PCSClient
    client = PCSClient(eps, l, w, list(zip(generate_hash_funcs(l, w), generate_hash_funcs(l, 2))))  # as PCSServer
    return dict(run=client.privatise, params={"l": l, "w": w, "bias": client.bias})


def _pure_sr(d, eps, k=4, m=8, lh_k=100, **_):
    _require(PURE)
    from pure_ldp.core import generate_hash_funcs
    from pure_ldp.frequency_oracles.sketch_response import SketchResponseClient
    client = SketchResponseClient(eps, m, generate_hash_funcs(k, m), lh_k=lh_k, index_mapper=_identity)  # as its server
    return dict(run=client.privatise, max_paths=1 << 16,       # k x lh_k seeds x (1 + g - 1) = 22,400 at eps = 4
                params={"k": k, "m": m, "lh_k": lh_k, "FO": type(client.client).__name__})


def _pure_zero(d, eps, **_):
    _require(PURE)
    from pure_ldp.frequency_oracles.zero_oracle import ZeroOracleClient
    client = ZeroOracleClient()
    return dict(run=client.privatise, params={})


def _mf(module: str, func: str):
    """The library's client function, looked up at each call so that the recording source's
    replacement of numba-compiled functions by their Python source takes effect."""
    _require(MULTI)
    mod = importlib.import_module(f"multi_freq_ldpy.{module}")
    getattr(mod, func)
    return lambda *args: getattr(mod, func)(*args)


def _mf_var(p, q):
    from multi_freq_ldpy.pure_frequency_oracles.Variance_PURE import VAR_Pure
    return lambda n, f: float(VAR_Pure(p, q, n, f))


def _mf_grr(d, eps, **_):
    client = _mf("pure_frequency_oracles.GRR", "GRR_Client")
    p = np.exp(eps) / (np.exp(eps) + d - 1)                             # GRR_Aggregator_MI
    q = (1 - p) / (d - 1)
    return dict(run=lambda x: client(x, d, eps), support=lambda y: [y], server_pq=(p, q), variance=_mf_var(p, q))


def _mf_ue(optimal):
    def make(d, eps, **_):
        client = _mf("pure_frequency_oracles.UE", "UE_Client")
        p, q = (0.5, 1 / (np.exp(eps) + 1)) if optimal else (np.exp(eps / 2) / (np.exp(eps / 2) + 1), 1 / (np.exp(eps / 2) + 1))
        return dict(run=lambda x: client(x, d, eps, optimal), family=lambda k: (lambda x: client(x, k, eps, optimal)),
                    bitwise=True, support=_bits_set, server_pq=(p, q), variance=_mf_var(p, q))
    return make


def _mf_lh(optimal):
    def make(d, eps, **_):
        client = _mf("pure_frequency_oracles.LH", "LH_Client")
        g = int(round(np.exp(eps))) + 1 if optimal else 2
        p, q = np.exp(eps) / (np.exp(eps) + g - 1), 1 / g                # LH_Aggregator_MI
        sup = _lh_support(g)
        return dict(run=lambda x: client(x, d, eps, optimal), support=lambda r: sup(r, d), server_pq=(p, q),
                    variance=_mf_var(p, q), params={"g": g})
    return make


def _members(report):
    """Membership events: what a set-reading server counts."""
    return list(report)


def _ordered_events(report):
    """Membership, first place, and (first, member) pairs: events that see the order of a report."""
    first = report[0]
    return list(report) + [("first", first)] + [("first", first, "with", v) for v in report[1:]]


def _mf_ss(as_set):
    def make(d, eps, **_):
        client = _mf("pure_frequency_oracles.SS", "SS_Client")
        k = int(max(1, np.rint(d / (np.exp(eps) + 1))))                  # SS_Aggregator_MI
        p = k * np.exp(eps) / (k * np.exp(eps) + d - k)
        q = ((k - 1) * (k * np.exp(eps)) + (d - k) * k) / ((d - 1) * (k * np.exp(eps) + d - k))
        events = _members if as_set else _ordered_events
        return dict(run=lambda x: client(x, d, eps), canonical=_set if as_set else None, support=lambda y: list(y),
                    family=lambda n: (lambda x: client(x, n, eps)), unordered=as_set, events=events,
                    server_pq=(p, q), variance=_mf_var(p, q), params={"subset size": k})
    return make


def _mf_he(d, eps, **_):
    client = _mf("pure_frequency_oracles.HE", "HE_Client")
    return dict(run=lambda x: client(x, d, eps), continuous=True, params={"laplace scale": 2 / eps},
                events=lambda y: [k for k, v in enumerate(y) if v > 0.5])


def _mf_adp(d, eps, **_):
    client = _mf("pure_frequency_oracles.ADP", "ADP_Client")
    ue = _mf("pure_frequency_oracles.UE", "UE_Client")              # the branch it takes when OUE's variance is lower
    return dict(run=lambda x: client(x, d, eps, True), family=lambda k: (lambda x: ue(x, k, eps, True)), bitwise=True,
                params={})


def _mf_long(func, module, bits=None, extra=()):
    """`bits`: the (module, function) of the unary-type client it runs (itself, or L-ADP's L-OSUE branch)."""
    def make(d, eps, eps_1=None, **_):
        eps_1 = eps / 2 if eps_1 is None else eps_1
        client = _mf(f"long_freq_est.{module}", func)
        unary_client = _mf(f"long_freq_est.{bits[0]}", bits[1]) if bits else None
        def run(k, fn=client):
            return lambda x: fn(x, k, eps, eps_1, *extra)
        return dict(run=run(d), family=(lambda k: run(k, unary_client)) if bits else None, bitwise=bool(bits), claim=eps_1,
                    params={"eps_perm": eps, "eps_1 (claimed per report)": eps_1})
    return make


def _mf_dbit(d, eps, b=None, d_bits=1, **_):
    client = _mf("long_freq_est.dBitFlipPM", "dBitFlipPM_Client")
    b = d if b is None else b
    return dict(run=lambda x: client(x, d, b, d_bits, eps), params={"b": b, "d_bits": d_bits})


def _shape(d: int, shape) -> list:
    """Attribute domain sizes of a multidimensional input: `shape` ("4x4", "2,8" or a sequence of
    integers >= 2 whose product is d), by default the two most nearly equal factors of d."""
    if shape is None:
        factors = [f for f in range(2, math.isqrt(d) + 1) if d % f == 0]
        if not factors:
            raise ProblemError(f"d = {d} is prime: a multidimensional oracle needs shape=AxB (attribute sizes whose product is d)")
        return [factors[-1], d // factors[-1]]
    parts = shape.replace("x", ",").split(",") if isinstance(shape, str) else list(shape)
    try:
        ks = [int(v) for v in parts]
    except (TypeError, ValueError):
        raise ProblemError(f"shape must read like 4x4 (attribute sizes), got {shape!r}") from None
    if len(ks) < 2 or min(ks) < 2 or math.prod(ks) != d:
        raise ProblemError(f"shape {shape!r} must list two or more attribute sizes >= 2 whose product is d = {d}")
    return ks


def _tuple(x: int, ks) -> list:
    """Input x = 0..d-1 as the tuple of attribute values np.unravel_index(x, ks)."""
    return [int(v) for v in np.unravel_index(x, ks)]


def _mf_mdim(module, func, *extra):
    """A multidimensional client of multi-freq-ldpy over x = `_tuple(x, shape)`; it claims eps for
    the whole tuple."""
    def make(d, eps, shape=None, **_):
        ks, client = _shape(d, shape), _mf(module, func)
        return dict(run=lambda x: client(_tuple(x, ks), ks, len(ks), eps, *extra), shape=tuple(ks),
                    params={"shape": "x".join(map(str, ks))})
    return make


def _mf_mdim_long(module, func):
    """A longitudinal multidimensional client: claims eps_1 (default eps/2) per report."""
    def make(d, eps, shape=None, eps_1=None, **_):
        ks, client = _shape(d, shape), _mf(module, func)
        eps_1 = eps / 2 if eps_1 is None else eps_1
        return dict(run=lambda x: client(_tuple(x, ks), ks, len(ks), eps, eps_1), claim=eps_1, shape=tuple(ks),
                    params={"shape": "x".join(map(str, ks)), "eps_perm": eps, "eps_1 (claimed per report)": eps_1})
    return make


def _mf_mdim_dbit(module, func):
    """dBitFlipPM on a sampled attribute, one bucket per value and one bit (as `_mf_dbit`)."""
    def make(d, eps, shape=None, **_):
        ks, client = _shape(d, shape), _mf(module, func)
        return dict(run=lambda x: client(_tuple(x, ks), ks, ks, 1, len(ks), eps), shape=tuple(ks),
                    params={"shape": "x".join(map(str, ks)), "b": "shape", "d_bits": 1})
    return make


def _mdim_adapters() -> dict:
    pure = {"GRR": ("GRR", ()), "SUE": ("UE", (False,)), "OUE": ("UE", (True,)), "BLH": ("LH", (False,)),
            "OLH": ("LH", (True,)), "SS": ("SS", ()), "ADP": ("ADP", (True,))}
    out = {}
    for sol in ("SMP", "SPL"):
        for name, (fo, extra) in pure.items():
            out[f"multi-freq-ldpy:{sol}-{name}"] = _mf_mdim(f"mdim_freq_est.{sol}_solution", f"{sol}_{fo}_Client", *extra)
    rs = {"GRR": ("GRR", ()), "SUE-zero": ("UE_zero", (False,)), "OUE-zero": ("UE_zero", (True,)),
          "SUE-rnd": ("UE_rnd", (False,)), "OUE-rnd": ("UE_rnd", (True,)), "ADP": ("ADP", (True,))}
    for name, (fo, extra) in rs.items():
        out[f"multi-freq-ldpy:RSpFD-{name}"] = _mf_mdim("mdim_freq_est.RSpFD_solution", f"RSpFD_{fo}_Client", *extra)
    for sol in ("SMP", "SPL"):
        for fo in ("GRR", "OUE", "OSUE", "SUE", "SOUE", "ADP"):
            out[f"multi-freq-ldpy:{sol}-L-{fo}"] = _mf_mdim_long(f"long_mdim_freq_est.L_{sol}_Solution", f"{sol}_L_{fo}_Client")
        out[f"multi-freq-ldpy:{sol}-dBitFlipPM"] = _mf_mdim_dbit(f"long_mdim_freq_est.L_{sol}_Solution",
                                                                f"{sol}_dBitFlipPM_Client")
    return out


ADAPTERS: dict[str, Callable] = {
    "pure-ldp:DE": _pure_de,
    "pure-ldp:SUE": _pure_ue(False),
    "pure-ldp:OUE": _pure_ue(True),
    "pure-ldp:BLH": _pure_lh(False),
    "pure-ldp:OLH": _pure_lh(True),
    "pure-ldp:FLH": _pure_lh(True, fast=True),
    "pure-ldp:HE": _pure_he,
    "pure-ldp:HM": _pure_hm,
    "pure-ldp:HR": _pure_hr,
    "pure-ldp:CMS": _pure_cms(False),
    "pure-ldp:HCMS": _pure_cms(True),
    "pure-ldp:RAPPOR": _pure_rappor,
    "pure-ldp:PCS": _pure_pcs,
    "pure-ldp:SR": _pure_sr,
    "pure-ldp:ZERO": _pure_zero,
    "multi-freq-ldpy:GRR": _mf_grr,
    "multi-freq-ldpy:SUE": _mf_ue(False),
    "multi-freq-ldpy:OUE": _mf_ue(True),
    "multi-freq-ldpy:BLH": _mf_lh(False),
    "multi-freq-ldpy:OLH": _mf_lh(True),
    "multi-freq-ldpy:SS": _mf_ss(False),
    "multi-freq-ldpy:SS-set": _mf_ss(True),
    "multi-freq-ldpy:HE": _mf_he,
    "multi-freq-ldpy:ADP": _mf_adp,
    "multi-freq-ldpy:L-GRR": _mf_long("L_GRR_Client", "L_GRR"),
    "multi-freq-ldpy:L-SUE": _mf_long("L_SUE_Client", "L_SUE", bits=("L_SUE", "L_SUE_Client")),
    "multi-freq-ldpy:L-OUE": _mf_long("L_OUE_Client", "L_OUE", bits=("L_OUE", "L_OUE_Client")),
    "multi-freq-ldpy:L-OSUE": _mf_long("L_OSUE_Client", "L_OSUE", bits=("L_OSUE", "L_OSUE_Client")),
    "multi-freq-ldpy:L-SOUE": _mf_long("L_SOUE_Client", "L_SOUE", bits=("L_SOUE", "L_SOUE_Client")),
    "multi-freq-ldpy:L-OLH": _mf_long("L_LH_Client", "L_LH", extra=(True,)),
    "multi-freq-ldpy:L-ADP": _mf_long("L_ADP_Client", "L_ADP", bits=("L_OSUE", "L_OSUE_Client")),
    "multi-freq-ldpy:dBitFlipPM": _mf_dbit,
    **_mdim_adapters(),
}


def check_domain(d, epsilon) -> None:
    """d an integer >= 2 and epsilon a finite number > 0, or a ProblemError naming the value."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
        raise ProblemError(f"d must be an integer >= 2, got {d!r}")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise ProblemError(f"epsilon must be a finite number > 0, got {epsilon!r}")


def build(name: str, d: int, epsilon: float, **params) -> Randomizer:
    """The adapter `name` (a key of `ADAPTERS`) at domain size d and claimed budget epsilon.

    Raises
    ------
    ProblemError
        Unknown adapter (with a "did you mean"), bad d or epsilon, or the library not installed.
    """
    if name not in ADAPTERS:
        raise ProblemError(f"adapter {name!r} is unknown{did_you_mean(name, ADAPTERS)}; known: {', '.join(ADAPTERS)}")
    check_domain(d, epsilon)
    allowed = [k for k, p in inspect.signature(ADAPTERS[name]).parameters.items()
               if k not in ("d", "eps") and p.kind is p.KEYWORD_ONLY or (k not in ("d", "eps", "_") and p.kind is p.POSITIONAL_OR_KEYWORD)]
    for key in params:
        if key not in allowed:
            raise ProblemError(f"adapter {name!r} has no parameter {key!r}{did_you_mean(key, allowed)}; "
                               f"its parameters: {', '.join(allowed) or 'none'}")
    spec = ADAPTERS[name](int(d), float(epsilon), **params)
    claim = spec.pop("claim", float(epsilon))
    library = PURE if name.startswith("pure-ldp") else MULTI
    spec.setdefault("params", {})
    return Randomizer(name=name, d=int(d), epsilon=float(claim), packages=(library,), **spec)
