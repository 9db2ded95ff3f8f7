"""Utilities (docs/spec.md §3). Linear ones: expected distortion E[D(X, Y)] = sum_x P[x] sum_y q[x,y] D[x,y],
optionally as a minimax over a set of priors (LIP-TDSC Eq 16-17, 34)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .errors import ProblemError, did_you_mean
from .problem import as_matrix, as_prior_rows, as_vector


@dataclass(frozen=True)
class Distortion:
    """Expected distortion E[D(X, Y)] = sum_x P[x] sum_y q[x,y] D[x,y] to minimize (docs/spec.md §3.1).

    Linear in q: an LP (LIP-TDSC §5.1.5, CA-LIP §IV-A), after the certified closed forms.

    Parameters
    ----------
    kind : {"hamming", "mae", "squared", "distortion"}
        D = 1[x != y]; |a_x - b_y|; (a_x - b_y)^2; or the user `matrix`. Values a are the
        problem's `values`; output values b its `output_values`, defaulting to a when m = d.
    matrix : array_like, shape (d, m), optional
        D[x][y], only for kind = "distortion".
    priors : array_like, shape (n, d), optional
        Minimize the worst expected distortion over these priors of X (LIP-TDSC Eq 16-17, 34).
    prior_lower, prior_upper : array_like, shape (d,), optional
        The same over a box of priors (reduced to its vertices, where the linear cost peaks).

    Raises
    ------
    ProblemError
        If the kind is unknown or the options do not fit it.
    """

    kind: str = "hamming"
    matrix: Any = None
    priors: Any = None
    prior_lower: Any = None
    prior_upper: Any = None
    sense: ClassVar[str] = "min"
    linear: ClassVar[bool] = True

    def __post_init__(self):
        if self.kind not in LINEAR_KINDS:
            raise ProblemError(f"utility.kind must be one of {', '.join(LINEAR_KINDS)} for Distortion, got {self.kind!r}"
                              f"{did_you_mean(self.kind, LINEAR_KINDS)}")
        if (self.matrix is None) != (self.kind != "distortion"):
            raise ProblemError("utility.matrix is required for kind = 'distortion' and only allowed there")
        if (self.prior_lower is None) != (self.prior_upper is None):
            raise ProblemError("utility.prior_lower and utility.prior_upper must be given together")
        if self.priors is not None and self.prior_lower is not None:
            raise ProblemError("utility: give either priors or prior_lower/prior_upper, not both")

    def validate(self, problem) -> None:
        self.matrix_for(problem)
        self.cost_priors(problem)

    def matrix_for(self, problem) -> np.ndarray:
        """D[x, y] for `problem`, read-only. The last one is kept: it depends only on the sizes and
        the input and output values, and a sweep's point asks for it four or five times."""
        key = (problem.d, problem.m, getattr(problem, "values", None), getattr(problem, "output_values", None))
        kept = self.__dict__.get("_kept")
        if kept is not None and _same_values(kept[0], key):
            return kept[1]
        D = np.array(self._matrix(problem), dtype=float)
        D.flags.writeable = False
        object.__setattr__(self, "_kept", (key, D))
        return D

    def __getstate__(self) -> dict:
        """Pickled without the kept matrix (`matrix_for`): a worker of a parallel sweep or batch
        is sent the utility with every chunk, and D is 8 MB at d = m = 1024."""
        state = self.__dict__.copy()
        state.pop("_kept", None)
        state.pop("_least", None)
        return state

    def _matrix(self, problem) -> np.ndarray:
        d, m = problem.d, problem.m
        if self.kind == "distortion":
            return as_matrix("utility.matrix", self.matrix, (d, m))
        if self.kind == "hamming":
            D = np.ones((d, m))
            k = min(d, m)
            D[np.arange(k), np.arange(k)] = 0.0
            return D
        b = problem.output_values
        if b is None:
            if m != d:
                raise ProblemError(f"output.values is required for utility {self.kind!r} when output.size "
                                   f"({m}) differs from the number of inputs ({d})")
            b = problem.values
        with np.errstate(over="ignore", invalid="ignore"):
            diff = problem.values[:, None] - np.asarray(b)[None, :]
            D = np.abs(diff) if self.kind == "mae" else diff ** 2
        if not np.all(np.isfinite(D)):
            raise ProblemError(f"utility {self.kind!r}: the loss between input and output values overflows the float "
                               f"range (values up to {np.max(np.abs(problem.values)):.3g}); rescale the values")
        return D

    def cost_priors(self, problem) -> np.ndarray:
        """The priors over which the worst case is taken (rows); just the problem's prior by default."""
        from .notions.lip import box_vertices

        d = problem.d
        if self.priors is not None:
            return as_prior_rows("utility.priors", self.priors, d)
        if self.prior_lower is not None:
            return box_vertices(as_vector("utility.prior_lower", self.prior_lower, d),
                                as_vector("utility.prior_upper", self.prior_upper, d), "utility")
        return problem.prior[None, :]

    def costs(self, problem) -> np.ndarray:
        """Row k: the cost vector c_k over vec(q) (row-major), so that E_k[D] = c_k @ vec(q)."""
        D = self.matrix_for(problem)
        P = self.cost_priors(problem)
        return (P[:, :, None] * D[None, :, :]).reshape(P.shape[0], -1)

    def floor(self, problem) -> float:
        """max over cost priors of sum_x P_x min_y D[x, y]: no channel has a lower `evaluate`
        (each input's row of q averages its row of D), the trivial bound."""
        return float(np.max(self.cost_priors(problem) @ self.least(problem)[1]))

    def least(self, problem) -> tuple[np.ndarray, np.ndarray]:
        """(argmin_y D[x, y], min_y D[x, y]) for each input x (Hamming: x itself at loss 0 where x
        has its own output, else output 0 at loss 1, without writing D)."""
        if self.kind == "hamming":
            x = np.arange(problem.d)
            return np.where(x < problem.m, x, 0), (x >= problem.m).astype(float)
        D = self.matrix_for(problem)
        kept = self.__dict__.get("_least")
        if kept is not None and kept[0] is D:           # (D is kept by `matrix_for`: a sweep's points share it)
            return kept[1]
        best = np.argmin(D, axis=1)
        found = best, D[np.arange(problem.d), best]
        for a in found:
            a.flags.writeable = False
        object.__setattr__(self, "_least", (D, found))
        return found

    def evaluate(self, problem, q: np.ndarray) -> float:
        """max over cost priors of E[D] = sum_x P_x sum_y q[x, y] D[x, y]."""
        return float(np.max(self.cost_priors(problem) @ self.per_input(problem, q)))

    def per_input(self, problem, q: np.ndarray) -> np.ndarray:
        """sum_y q[x, y] D[x, y] for each input x, of one channel (d, m) or of a stack of them
        (..., d, m), each summed row by row alike."""
        q = np.asarray(q)
        if self.kind == "hamming":                      # D = 1 - I, not written out: q off its diagonal
            off = np.array(q, dtype=float)              # (summed as q * D sums it: no 1 - q[x, x], which
            k = min(off.shape[-2:])                     # cancels where q[x, x] is near 1)
            off[..., np.arange(k), np.arange(k)] = 0.0
            return off.sum(axis=-1)
        return (q * self.matrix_for(problem)).sum(axis=-1)

    def plain_hamming(self, problem) -> bool:
        """Hamming distortion under the problem's own prior with an output for every input (the
        setting of the Hamming closed forms, `closed_forms.subset_rr` and `rr_lip_hamming`)."""
        return (self.kind == "hamming" and self.priors is None and self.prior_lower is None
                and problem.m >= problem.d)

    def to_table(self) -> dict:
        out = {"kind": self.kind}
        for k in ("matrix", "priors", "prior_lower", "prior_upper"):
            if getattr(self, k) is not None:
                out[k] = np.asarray(getattr(self, k)).tolist()
        return out


LINEAR_KINDS = ("hamming", "mae", "squared", "distortion")


def parse_utility(table) -> Any:
    if not isinstance(table, dict):
        raise ProblemError(f"utility must be a table, got {table!r}")
    kind = table.get("kind")
    if kind not in UTILITY_KINDS:
        raise ProblemError(f"utility.kind must be one of {', '.join(UTILITY_KINDS)}, got {kind!r}{did_you_mean(kind, UTILITY_KINDS)}")
    if kind in BAYES_KINDS:
        allowed = {"kind", "weight", "offset", "normalized"}
        unknown = sorted(set(table) - allowed)
        if unknown:
            raise ProblemError(f"utility: unknown key {unknown[0]!r}{did_you_mean(unknown[0], allowed)} for kind {kind!r} "
                               f"(allowed: {', '.join(sorted(allowed))})")
        return Bayes(**table)
    allowed = {"kind", "matrix", "priors", "prior_lower", "prior_upper"}
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise ProblemError(f"utility: unknown key {unknown[0]!r}{did_you_mean(unknown[0], allowed)} "
                           f"(allowed: {', '.join(sorted(allowed))})")
    return Distortion(**{k: table[k] for k in table})


def entropy_rows(V: np.ndarray) -> np.ndarray:
    """Shannon entropy (nats) of each row of V."""
    V = np.asarray(V, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(V > 0, V * np.log(V), 0.0)
    return -t.sum(axis=-1)


@dataclass(frozen=True)
class Bayes:
    """A utility sum_y lam[y] phi(post_y) of the posteriors (docs/spec.md §3.2-3.3, §4), phi convex.

    kind = "bayes-mse":       MSE of the curator's MMSE estimate of h(X) = weight * a_X + offset
                              (summation and weighted summation: LIP-TDSC Eq 13, 24; f(R) = cR + b of
                              LIP-TDSC §4.5; LIP-CNS Eq 14, 28), phi(pi) = (pi . h)^2, minimized.
    kind = "histogram-mse":   MSE of the posterior estimate of the one-hot vector of X
                              (LIP-TDSC Eq 39; LIP-CNS Eq 31), phi(pi) = ||pi||^2, minimized.
    kind = "mutual-information": I(X;Y) in nats, phi = -H(pi), maximized (ALIP §II-C);
                              normalized = true reports I(X;Y)/H(X).
    kind = "map":             Bayes (MAP) accuracy of guessing X from Y, phi = max(pi), maximized.

    All four are per-user values; over N independent users the totals add (LIP-TDSC Theorem 1).
    Solved in posterior space with a certificate of global optimality (docs/reliability.md).

    Parameters
    ----------
    kind : {"bayes-mse", "histogram-mse", "mutual-information", "map"}
        The utility.
    weight, offset : float, optional
        h(X) = weight * a_X + offset for bayes-mse (defaults 1 and 0).
    normalized : bool, optional
        Report I(X;Y)/H(X) (mutual-information only).

    Raises
    ------
    ProblemError
        If the kind is unknown or an option does not fit it.
    """

    kind: str = "bayes-mse"
    weight: float = 1.0
    offset: float = 0.0
    normalized: bool = False
    linear: ClassVar[bool] = False

    def __post_init__(self):
        if self.kind not in BAYES_KINDS:
            raise ProblemError(f"utility.kind must be one of {', '.join(UTILITY_KINDS)}, got {self.kind!r}"
                               f"{did_you_mean(self.kind, UTILITY_KINDS)}")
        for k in ("weight", "offset"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)) or not np.isfinite(v):
                raise ProblemError(f"utility.{k} must be a finite number, got {v!r}")
        if not isinstance(self.normalized, bool):
            raise ProblemError(f"utility.normalized must be true or false, got {self.normalized!r}")
        if self.normalized and self.kind != "mutual-information":
            raise ProblemError("utility.normalized applies to kind = 'mutual-information' only")

    def plain_hamming(self, problem) -> bool:
        """Never: a Bayes utility is not a distortion (see `Distortion.plain_hamming`)."""
        return False

    @property
    def sense(self) -> str:
        return "min" if self.kind.endswith("mse") else "max"

    def validate(self, problem) -> None:
        if self.normalized and entropy_rows(problem.prior) <= 0:
            raise ProblemError("utility.normalized needs H(X) > 0")
        if self.kind == "bayes-mse":
            with np.errstate(over="ignore", invalid="ignore"):
                t, var = self._standardized(problem)
            if not (np.all(np.isfinite(t)) and np.isfinite(var)):
                raise ProblemError("utility: weight * (values - their mean) must stay within the float range and "
                                   f"its variance must be finite (|weight * values| up to {np.max(np.abs(problem.values)) * abs(self.weight):.3g}, "
                                   "limit about 1e154)")

    def target(self, problem) -> np.ndarray:
        """For bayes-mse: h(X) = weight * values + offset, centred at its prior mean and scaled to
        unit prior variance, t = (h - P.h) / sd (`_centred`: the offset cancels exactly). The MSE of estimating h is shift-invariant,
        MSE = E[h^2] - sum_y lam_y (post_y . h)^2 for any constant shift of h, so every gain and
        bound is computed with t (scale-free: an offset of 1e6 changes nothing, values of 1e4
        give no 1e8 coefficients) and `from_gain` multiplies back by `unit` = sd^2."""
        return self._standardized(problem)[0]

    def _standardized(self, problem) -> tuple[np.ndarray, float]:
        """(t, Var_P(h)): `target` and `unit` from one centring."""
        c = self._centred(problem)
        sd = self._sd(problem.prior, c)
        with np.errstate(over="ignore"):
            return (c / sd if sd > 0 else np.zeros_like(c)), float(np.float64(sd) ** 2)

    def _centred(self, problem) -> np.ndarray:
        """h - E[h] = weight * (values - P.values): the offset cancels exactly, so it is never added
        (in floating point, values + 1e12 would keep only four decimals of the values)."""
        v, P = problem.values, problem.prior
        scale = float(np.max(np.abs(v))) or 1.0
        c = v / scale - P @ (v / scale)
        c = c - P @ c                          # a second pass removes the first's round-off
        with np.errstate(over="ignore"):
            return self.weight * scale * c

    @staticmethod
    def _sd(P, c) -> float:
        top = float(np.max(np.abs(c))) if c.size else 0.0
        if top == 0.0:
            return 0.0
        return top * float(np.sqrt(P @ (c / top) ** 2))

    def unit(self, problem) -> float:
        """The factor from `target`'s units back to the natural MSE: Var_P(h(X)) (1 otherwise)."""
        if self.kind != "bayes-mse":
            return 1.0
        return self._standardized(problem)[1]

    def phi(self, problem, V: np.ndarray) -> np.ndarray:
        """phi of each posterior (rows of V)."""
        V = np.atleast_2d(V)
        if self.kind == "bayes-mse":
            return (V @ self.target(problem)) ** 2
        if self.kind == "histogram-mse":
            return np.sum(V * V, axis=1)
        if self.kind == "mutual-information":
            return -entropy_rows(V)
        return V.max(axis=1)

    def from_gain(self, problem, gain, prior=None):
        """The natural value (docs/cli.md `objective`) from G = sum_y lam[y] phi(post_y).

        prior: the problem's own (default), or an (N, d) array of priors with N gains (batches).
        """
        P = problem.prior if prior is None else prior
        if self.kind == "bayes-mse":
            t, var = self._standardized(problem)
            out = var * (P @ t ** 2 - np.asarray(gain))
        elif self.kind == "histogram-mse":
            out = 1.0 - np.asarray(gain)
        elif self.kind == "mutual-information":
            H = entropy_rows(P)
            out = (H + gain) / H if self.normalized else H + gain
        else:
            out = np.asarray(gain)
        return float(out) if np.ndim(out) == 0 else out

    def gain(self, problem, q: np.ndarray) -> float:
        joint = problem.prior[:, None] * np.asarray(q)
        lam = joint.sum(axis=0)
        used = lam > 0
        post = (joint[:, used] / lam[used]).T
        return float(lam[used] @ self.phi(problem, post))

    def evaluate(self, problem, q: np.ndarray) -> float:
        """The utility of q. The two MSEs are summed term by term, never as a difference of two
        large numbers: bayes-mse = Var(h) sum_xy Pr(x, y) (t_x - E[t | y])^2 with t = `target`,
        histogram-mse = sum_xy Pr(x, y) (1 - Pr(x | y)); both are >= 0 to the last digit."""
        if self.kind not in ("bayes-mse", "histogram-mse"):
            return self.from_gain(problem, self.gain(problem, q))
        joint = problem.prior[:, None] * np.asarray(q)
        lam = joint.sum(axis=0)
        used = lam > 0
        post = joint[:, used] / lam[used]
        if self.kind == "histogram-mse":
            return float((joint[:, used] * (1.0 - post)).sum())
        t, var = self._standardized(problem)
        err = t[:, None] - (t @ post)[None, :]
        return float(var * (joint[:, used] * err * err).sum())

    def to_table(self) -> dict:
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "bayes-mse":
            out.update(weight=self.weight, offset=self.offset)
        if self.normalized:
            out["normalized"] = True
        return out


BAYES_KINDS = ("bayes-mse", "histogram-mse", "mutual-information", "map")
UTILITY_KINDS = LINEAR_KINDS + BAYES_KINDS


def _same_values(a: tuple, b: tuple) -> bool:
    """Whether two (d, m, values, output_values) keys of `Distortion.matrix_for` agree."""
    return a[:2] == b[:2] and all(x is y or (x is not None and y is not None and np.array_equal(x, y))
                                  for x, y in zip(a[2:], b[2:]))
