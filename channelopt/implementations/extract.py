"""White-box extraction: a randomizer's exact channel, and its exact leakage under any notion.

Three ways in (issue "audit real LDP implementations"):

* **enumeration** (`recording`): the randomizer's own code is run once per path of its internal
  randomness; the channel is exact for the code as written;
* **bitwise**: for unary-type encodings whose bit k depends on input bit k only, the per-bit
  channel (a_k, b_k) = (Pr(y_k = 1 | bit 1), Pr(y_k = 1 | bit 0)) is enumerated on a two-symbol
  instance of the same code, and the product form is checked by full enumeration on a
  four-symbol instance (joint = product of marginals, marginals = the two-symbol ones). Leakage
  then comes from `encoded.unary` without the 2^d outputs;
* **parameters**: the probabilities the library object declares (e.g. a client's `p` and `q`),
  used where neither of the above applies; the extraction says so;
* **additive Laplace noise**: a report `enc(x) + Laplace(0, b)` (histogram encoding) is run with
  the Laplace draw replaced twice, by zeros and by a known vector: the first run gives the
  encoding and the scale b the code asked for, the second shows the noise is added as drawn. The
  LDP leakage is then `max ||(enc(x) - enc(x')) / b||_1`, the supremum of the density ratio.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..encoded import unary
from ..errors import ProblemError
from .recording import NotEnumerable, Recorder, enumerate_outputs, patched

PRODUCT_TOL = 1e-12


@dataclass(frozen=True)
class Extraction:
    """The exact per-report law of a randomizer over inputs 0..d-1.

    Attributes
    ----------
    channel : ndarray (d, m) or None
        q[x, j] = Pr(report = outputs[j] | x), for enumerated randomizers.
    outputs : list
        The reports (hashable keys), in column order.
    bits : tuple (a, b) of ndarrays or None
        Per-bit channel of a product-form (unary-type) randomizer.
    method : str
        "enumeration", "bitwise" or "parameters", with how it was checked.
    paths : int
        Runs of the randomizer's code behind the extraction.
    sampled : bool
        A huge draw (hash seed) was restricted to fixed sampled values: exact given those values.
    """

    d: int
    method: str
    channel: Any = None
    outputs: list = field(default_factory=list)
    bits: Any = None
    paths: int = 0
    sampled: bool = False
    additive: Any = None
    """(E, b): report = E[x] + Laplace noise of scale b (per coordinate), for additive extractions."""

    @property
    def m(self) -> int:
        return len(self.outputs) if self.channel is not None else 2 ** self.d

    def ldp(self) -> tuple[float, tuple]:
        """Exact LDP leakage max ln Pr(y|x)/Pr(y|x') and a witness (x, x', report)."""
        if self.additive is not None:
            L = self.pair_leakage()
            i, j = (int(v) for v in np.unravel_index(np.argmax(L), L.shape))
            return float(L[i, j]), (i, j, "reports far beyond both encodings on every coordinate where they differ")
        if self.bits is not None:
            L = unary.pair_leakage(*self.bits)
            i, j = (int(v) for v in np.unravel_index(np.argmax(L), L.shape))
            a, b = self.bits
            rho = np.stack([(1 - a) / (1 - b), a / b], axis=-1)
            y = np.zeros(self.d, dtype=int)
            y[i] = int(np.argmax(rho[i]))
            y[j] = int(np.argmin(rho[j]))
            return float(L[i, j]), (int(i), int(j), tuple(y.tolist()))
        q = self.channel
        hi, lo = q.max(axis=0), q.min(axis=0)
        with np.errstate(divide="ignore"):
            ratio = np.where(hi > 0, np.log(hi) - np.log(lo), 0.0)
        j = int(np.argmax(ratio))
        return float(ratio[j]), (int(np.argmax(q[:, j])), int(np.argmin(q[:, j])), self.outputs[j])

    def pair_leakage(self) -> np.ndarray:
        """L[x, x'] = max over reports of ln Pr(y|x)/Pr(y|x') (inf where y is possible under x only)."""
        if self.bits is not None:
            return unary.pair_leakage(*self.bits)
        if self.additive is not None:
            E, b = self.additive
            return (np.abs(E[:, None, :] - E[None, :, :]) / b).sum(axis=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            logq = np.log(self.channel)
            diff = logq[:, None, :] - logq[None, :, :]
        diff[np.isnan(diff)] = -np.inf                  # impossible under both: no evidence either way
        L = diff.max(axis=2)
        np.fill_diagonal(L, 0.0)
        return L

    def lip(self, prior) -> float:
        """Exact eps-LIP leakage (G = X) under `prior` (LIP-TDSC Eq 32)."""
        prior = np.asarray(prior, float)
        if self.bits is not None:
            a, b = self.bits
            return unary.lip_leakage(a, b, prior)
        if self.additive is not None:
            E, b = self.additive
            return _additive_lip(E, b, prior)
        q = self.channel
        py = prior @ q
        used = py > 0
        with np.errstate(divide="ignore"):
            lift = np.log(q[:, used]) - np.log(py[used])[None, :]
        return float(np.abs(lift).max())

    def support_probability(self, support) -> np.ndarray:
        """s[x, v] = Pr(v in support(report) | x) for a server's support function (report -> values)."""
        if self.bits is not None:
            a, b = self.bits
            return np.where(np.eye(self.d, dtype=bool), a[None, :], b[None, :])
        S = np.zeros((self.m, self.d))
        for j, y in enumerate(self.outputs):
            for v in support(y):
                S[j, v] = 1.0
        return self.channel @ S


def channel_of(dists: list[dict]) -> tuple[np.ndarray, list]:
    """Rows of per-input output distributions as one matrix over the union of reports."""
    outputs = sorted({y for dist in dists for y in dist}, key=repr)
    index = {y: j for j, y in enumerate(outputs)}
    q = np.zeros((len(dists), len(outputs)))
    for x, dist in enumerate(dists):
        for y, p in dist.items():
            q[x, index[y]] += p
    return q / q.sum(axis=1, keepdims=True), outputs


def enumerate_channel(run, d: int, packages, *, canonical=None, max_paths=None, seed: int = 0,
                      unordered: bool = False) -> Extraction:
    """Exact channel of `run(x)` for x = 0..d-1 by the recording random source.

    `canonical` post-processes each report before counting (e.g. an ordered subset into a set);
    leakage is then that of the post-processed report. `unordered` enumerates samples without
    replacement as sets (`recording.enumerate_outputs`): valid only when `canonical` reads the
    report as a set.
    """
    kw: dict = {"unordered": unordered}
    if max_paths is not None:
        kw["max_paths"] = max_paths
    dists, paths, sampled = [], 0, False
    for x in range(d):
        e = enumerate_outputs(lambda x=x: run(x), packages, seed=seed, **kw)
        dist = e.dist
        if canonical is not None:
            merged: dict = {}
            for y, p in dist.items():
                k = canonical(y)
                merged[k] = merged.get(k, 0.0) + p
            dist = merged
        dists.append(dist)
        paths += e.paths
        sampled |= e.sampled
    q, outputs = channel_of(dists)
    method = "enumeration" + (" (samples without replacement enumerated as sets)" if unordered else "")
    return Extraction(d=d, method=method, channel=q, outputs=outputs, paths=paths, sampled=sampled)


def _bit_matrix(outputs) -> np.ndarray:
    """Y[j, k] = 1 where bit k of report j is 1."""
    return np.array([[1.0 if v == 1 else 0.0 for v in y] for y in outputs])


def bit_marginals(ext: Extraction) -> np.ndarray:
    """marg[x, k] = Pr(y_k = 1 | x) of an enumerated bit-vector channel."""
    return ext.channel @ _bit_matrix(ext.outputs)


def bitwise_channel(make_run, d: int, packages, *, check_d: int = 4) -> Extraction:
    """Per-bit channel of a unary-type randomizer (module docstring), from its own code.

    `make_run(k)` returns `run(x)` for a k-symbol instance with the same parameters.
    """
    two = enumerate_channel(make_run(2), 2, packages)
    m2 = bit_marginals(two)
    a, b = np.array([m2[0, 0], m2[1, 1]]), np.array([m2[1, 0], m2[0, 1]])
    if not (np.allclose(a, a[0], atol=PRODUCT_TOL, rtol=0) and np.allclose(b, b[0], atol=PRODUCT_TOL, rtol=0)):
        raise NotEnumerable("the per-bit channel differs between bits: not a symmetric unary encoding")
    four = enumerate_channel(make_run(check_d), check_d, packages)
    Y = _bit_matrix(four.outputs)
    marg = four.channel @ Y
    expect = np.where(np.eye(check_d, dtype=bool), a[0], b[0])
    product = np.exp(np.log(np.where(Y[None], marg[:, None, :], 1 - marg[:, None, :])).sum(axis=2))
    if not (np.allclose(marg, expect, atol=PRODUCT_TOL, rtol=0) and np.allclose(product, four.channel, atol=PRODUCT_TOL, rtol=0)):
        raise NotEnumerable(f"the report is not a product of independent bits with the two-symbol per-bit channel at d = {check_d}")
    return Extraction(d=d, method=f"bitwise (per-bit channel enumerated at d = 2, product form checked at d = {check_d})",
                      bits=(np.full(d, a[0]), np.full(d, b[0])), paths=two.paths + four.paths)


def from_bits(d: int, a: float, b: float, source: str) -> Extraction:
    """A symmetric unary encoding from declared per-bit probabilities (a = Pr(1 | 1), b = Pr(1 | 0))."""
    if not (0 < a < 1 and 0 < b < 1) or math.isclose(a, b):
        raise ProblemError(f"{source}: per-bit probabilities a = {a!r}, b = {b!r} must lie in (0, 1) and differ")
    return Extraction(d=d, method=f"parameters ({source})", bits=(np.full(d, float(a)), np.full(d, float(b))))


def _additive_lip(E, b, prior) -> float:
    """LIP of a one-hot encoding plus Laplace noise of one scale b: with t_k = |y_k| - |y_k - 1| free
    in [-1, 1] per coordinate, p(y) / q(y|x) = P_x + sum_x' P_x' e^((t_x' - t_x) / b) ranges over
    (P_x + (1 - P_x) e^(-2/b), P_x + (1 - P_x) e^(2/b)); the leakage is the larger log of the two ends."""
    d = E.shape[0]
    b = np.asarray(b, float)
    if E.shape != (d, d) or not np.array_equal(E, np.eye(d)) or np.ptp(b) > 0:
        raise NotEnumerable("LIP of additive noise is computed for a one-hot encoding with one noise scale")
    s = 2.0 / float(b.flat[0])
    up = np.log(prior + (1 - prior) * np.exp(s))
    down = -np.log(prior + (1 - prior) * np.exp(-s))
    return float(max(up.max(), down.max()))


def additive_laplace(run, d: int, packages) -> Extraction:
    """Encoding and noise scale of a report `enc(x) + np.random.laplace(scale=b, size=...)`, read by
    running the code with the draw replaced (module docstring). NotEnumerable if the code draws
    anything else, draws Laplace noise more than once, or does not add it to the report as drawn."""
    E, scale = [], None
    for x in range(d):
        outs = []
        for shift in (0.0, 1.0):
            draws: list = []

            def noise(loc=0.0, scale=1.0, size=None, shift=shift, draws=draws):
                shape = () if size is None else ((int(size),) if np.isscalar(size) else tuple(size))
                draws.append((np.broadcast_to(np.asarray(scale, float), shape).copy(), shape))
                return np.asarray(loc, float) + shift * (1.0 + np.arange(math.prod(shape))).reshape(shape)

            rec = Recorder(noise=noise)
            with patched(packages, rec):
                y = np.asarray(run(x), dtype=float)
            if rec.taken:
                raise NotEnumerable("the randomizer draws more than its Laplace noise")
            outs.append((y, draws))
        (y0, d0), (y1, _) = outs
        if len(d0) != 1:
            raise NotEnumerable(f"expected one Laplace draw per report, found {len(d0)}")
        b, shape = d0[0]
        if shape != y0.shape or np.any(b <= 0) or not np.allclose(y1 - y0, (1.0 + np.arange(y0.size)).reshape(shape),
                                                                  rtol=0, atol=1e-9):
            raise NotEnumerable("the report is not its encoding plus the Laplace draw as drawn")
        if scale is not None and not np.array_equal(scale, b):
            raise NotEnumerable("the Laplace scale depends on the input")
        scale = b
        E.append(y0.ravel())
    assert scale is not None
    return Extraction(d=d, method="additive Laplace noise (scale read from the draw, encoding from a zero-noise run, "
                                   "additivity checked with a shifted draw)", additive=(np.array(E), scale.ravel()), paths=2 * d)
