"""The problem model: prior of X, optional latent secret G, values, output size, notions, utility.

Everything is validated once, at construction (docs/spec.md §1). A `Problem` is immutable; its arrays
are read-only copies.

Decision on zero-probability inputs: an input symbol with prior probability 0 is *rejected*
(`ProblemError`). LIP bounds the ratio posterior / prior, which is undefined for a symbol that
never occurs, and a channel row for such a symbol does not affect any Bayes utility; the user
is asked to remove the symbol (or give it positive mass) rather than have the toolkit guess.
The same holds for secrets with `Pr(G=g) = 0`. Scenario priors of bounded-prior notions
(BP-LIP vertices, Pufferfish scenarios) may contain zeros: those are sets of adversary beliefs,
not the data's own distribution.
"""

from __future__ import annotations

import contextvars
import functools
from dataclasses import dataclass, field
from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import ProblemError, did_you_mean

from .solvers import SOLVERS, canonical
"""Solver names accepted everywhere (problem files, CLI, Python)."""

SUM_TOL = 1e-9
"""Tolerance on `sum(prior) == 1` and on prior-of-X consistency with the latent model."""


def _fmt(value: Any) -> str:
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= 80 else text[:77] + "..."


def as_vector(key: str, value: Any, length: int | None = None) -> np.ndarray:
    """A finite 1-D float vector, or ProblemError naming `key`."""
    if isinstance(value, (str, bytes, dict)) or value is None:
        raise ProblemError(f"{key} must be a list of numbers, got {_fmt(value)}")
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ProblemError(f"{key} must be a list of numbers, got {_fmt(value)}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ProblemError(f"{key} must be a non-empty list of numbers, got {_fmt(value)}")
    if not np.all(np.isfinite(arr)):
        raise ProblemError(f"{key} must contain only finite numbers, got {_fmt(value)}")
    if length is not None and arr.size != length:
        raise ProblemError(f"{key} must have {length} entries, got {arr.size}")
    return arr


def as_matrix(key: str, value: Any, shape: tuple[int | None, int | None] = (None, None)) -> np.ndarray:
    """A finite 2-D float matrix (list of equal-length rows), or ProblemError naming `key`."""
    if isinstance(value, (str, bytes, dict)) or value is None:
        raise ProblemError(f"{key} must be a list of rows of numbers, got {_fmt(value)}")
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ProblemError(f"{key} must be a list of equal-length rows of numbers, got {_fmt(value)}") from None
    if arr.ndim != 2 or arr.size == 0:
        raise ProblemError(f"{key} must be a non-empty list of equal-length rows, got {_fmt(value)}")
    if not np.all(np.isfinite(arr)):
        raise ProblemError(f"{key} must contain only finite numbers, got {_fmt(value)}")
    for axis, want in enumerate(shape):
        if want is not None and arr.shape[axis] != want:
            what = "rows" if axis == 0 else "columns"
            raise ProblemError(f"{key} must have {want} {what}, got {arr.shape[axis]}")
    return arr


def as_probability(key: str, value: Any, length: int | None = None, *, normalize: bool = False,
                   positive: bool = False) -> np.ndarray:
    """A probability vector: nonnegative, summing to 1 within SUM_TOL (or rescaled if `normalize`)."""
    arr = as_vector(key, value, length)
    if np.any(arr < 0):
        i = int(np.argmin(arr))
        raise ProblemError(f"{key}[{i}] must be >= 0, got {float(arr[i])!r}")
    top = float(arr.max()) if arr.size else 0.0
    total = float((arr / top).sum()) * top if top > 0 else 0.0   # no overflow for entries near 1e308
    if normalize:
        if total <= 0:
            raise ProblemError(f"{key} must have a positive sum to be normalized, got {float(total)!r}")
        arr = (arr / top) / (arr / top).sum()
    elif abs(total - 1.0) > SUM_TOL:
        raise ProblemError(f"{key} must sum to 1 (tolerance {SUM_TOL:g}), got {float(total)!r}; "
                           "set normalize = true to rescale it")
    if positive and np.any(arr == 0):
        i = int(np.flatnonzero(arr == 0)[0])
        raise ProblemError(f"{key}[{i}] is 0: every symbol must have positive probability "
                           "(remove the symbol or give it positive mass)")
    return arr


def as_prior_rows(key: str, value: Any, d: int) -> np.ndarray:
    """A list of priors over d symbols (rows), each nonnegative and summing to 1 within SUM_TOL."""
    rows = as_matrix(key, value, (None, d))
    for i, p in enumerate(rows):
        if np.any(p < 0) or abs(p.sum() - 1) > SUM_TOL:
            raise ProblemError(f"{key}[{i}] must be a probability vector, got {p.tolist()}")
    return rows


def as_stochastic(key: str, value: Any, shape: tuple[int | None, int | None]) -> np.ndarray:
    """A row-stochastic matrix: nonnegative rows summing to 1 within SUM_TOL."""
    arr = as_matrix(key, value, shape)
    if np.any(arr < 0):
        i, j = np.argwhere(arr < 0)[0]
        raise ProblemError(f"{key}[{i}][{j}] must be >= 0, got {float(arr[i, j])!r}")
    sums = arr.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > SUM_TOL)
    if bad.size:
        raise ProblemError(f"{key}[{bad[0]}] must sum to 1 (tolerance {SUM_TOL:g}), got {float(sums[bad[0]])!r}")
    return arr


def as_epsilon(key: str, value: Any, *, allow_zero: bool = False) -> float:
    """A privacy budget: a finite number > 0 (or >= 0 where `allow_zero`)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
        raise ProblemError(f"{key} must be a number, got {_fmt(value)}")
    v = float(value)
    ok = np.isfinite(v) and (v >= 0 if allow_zero else v > 0)
    if not ok:
        rule = ">= 0" if allow_zero else "> 0"
        raise ProblemError(f"{key} must be a finite number {rule}, got {v!r}")
    if v > MAX_EPSILON:
        raise ProblemError(f"{key} must be at most {MAX_EPSILON:g} (e^eps must be a finite double), got {v!r}")
    return v


MAX_EPSILON = 700.0
"""Largest budget in nats: e^700 ~ 1e304 is the last power of e below the double range."""


FROM_FILE = contextvars.ContextVar("channelopt_from_file", default=False)
"""True while `io.problem_from_dict` builds a Problem: messages then name the file's keys
(`input.prior`); built from Python they name the arguments (`prior`)."""

API_NAMES = {"input.prior": "prior", "input.values": "values", "input.labels": "labels",
             "input.normalize": "normalize", "output.size": "output_size",
             "output.fixed": "output_fixed", "output.values": "output_values",
             "solver.name": "solver", "normalize = true": "normalize=True"}


def api_names(message: str) -> str:
    """A problem-file message with the file's keys replaced by the Problem arguments they set."""
    for key, arg in API_NAMES.items():
        message = message.replace(key, arg)
    return message


MAX_SYMBOLS = 5000
"""Largest input or output alphabet (a d x m channel and its d x m cost matrix are dense)."""
MAX_CELLS = 25_000_000
"""Largest number of channel entries d * m (200 MB per dense d x m array)."""


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr = np.array(arr, dtype=float)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True)
class Joint:
    """A joint distribution of a secret G and the data X: `Pr(G)` and `conditional[g, x] = Pr(X=x|G=g)`.

    Used for the problem's own latent model and for the scenarios of bounded-prior notions
    (LIP-TDSC Def 5-6: a data evolution scenario theta_XG).

    Parameters
    ----------
    prior : array_like, shape (k,)
        Pr(G = g).
    conditional : array_like, shape (k, d)
        Pr(X = x | G = g); rows sum to 1.

    Attributes
    ----------
    direct : bool
        Whether G = X (the conditional is the identity); `given` then skips the product.
    """

    prior: np.ndarray
    conditional: np.ndarray
    direct: bool = field(init=False, repr=False, compare=False, default=False)
    """G = X (the conditional is the identity): `given` skips the product."""

    def __post_init__(self):
        object.__setattr__(self, "prior", _readonly(self.prior))
        object.__setattr__(self, "conditional", _readonly(self.conditional))
        T = self.conditional
        object.__setattr__(self, "direct", bool(T.ndim == 2 and T.shape[0] == T.shape[1]
                                                and np.array_equal(T, np.eye(T.shape[0]))))

    @property
    def prior_x(self) -> np.ndarray:
        """Pr(X) = Pr(G) @ Pr(X|G)."""
        return self.prior if self.direct else self.prior @ self.conditional

    def given(self, q: np.ndarray) -> np.ndarray:
        """Pr(Y=y | G=g) = Pr(X|G) @ q (q itself when G = X: no d x d x m product)."""
        return np.asarray(q) if self.direct else self.conditional @ q

    @classmethod
    def identity(cls, prior_x) -> Joint:
        """The scenario G = X with the given prior of X."""
        prior_x = np.asarray(prior_x, dtype=float)
        return cls(prior_x, np.eye(prior_x.size))

    @staticmethod
    def table(value) -> dict:
        """The problem-file form {prior, conditional} of a Joint or of such a table."""
        get = (lambda k: value[k]) if isinstance(value, dict) else (lambda k: getattr(value, k))
        return {"prior": np.asarray(get("prior")).tolist(), "conditional": np.asarray(get("conditional")).tolist()}

    @classmethod
    def parse(cls, key: str, value: Any, d: int | None, *, positive: bool = False) -> Joint:
        """From `{prior = [...], conditional = [[...]]}` (problem-file form)."""
        if isinstance(value, Joint):
            prior, conditional = value.prior, value.conditional
        elif isinstance(value, dict):
            unknown = set(value) - {"prior", "conditional"}
            if unknown:
                raise ProblemError(f"{key}: unknown key {sorted(unknown)[0]!r} (expected prior, conditional)")
            if "prior" not in value or "conditional" not in value:
                raise ProblemError(f"{key} must give both 'prior' and 'conditional'")
            prior, conditional = value["prior"], value["conditional"]
        else:
            raise ProblemError(f"{key} must be a table with 'prior' and 'conditional', got {_fmt(value)}")
        prior = as_probability(f"{key}.prior", prior, positive=positive)
        conditional = as_stochastic(f"{key}.conditional", conditional, (prior.size, d))
        return cls(prior, conditional)


@dataclass(frozen=True)
class Problem:
    """A channel-design problem (docs/spec.md §1). Validated once, at construction; immutable.

    Parameters
    ----------
    prior : array_like, shape (d,)
        Pr(X = x); entries > 0 summing to 1 (tolerance 1e-9) unless `normalize`.
    privacy : sequence of Notion
        The notions the channel must satisfy together (their intersection).
    utility : Distortion or Bayes
        What the channel is worth (required by `solve`).
    values : array_like, shape (d,), optional
        Numeric value a_x of each input (default 0..d-1), for MAE, squared error and Bayes MSE.
    labels : sequence of str, optional
        Names of the inputs (for display).
    latent : Joint or dict, optional
        A secret G correlated with X (LIP-TDSC §3) as {prior, conditional}; its Pr(X) must equal
        `prior`. Default: G = X.
    output_size : int, optional
        Number of output symbols m (default d).
    output_fixed : bool, optional
        Keep every output symbol in results (default: True exactly when `output_size` is given).
        Otherwise `solve` drops the outputs that no input reaches and `Result.outputs` names the
        ones kept.
    output_values : array_like, shape (m,), optional
        Values of the outputs for MAE / squared error when m != d.
    normalize : bool, optional
        Rescale `prior` to sum to 1.
    name : str, optional
        Free text.
    solver : str, optional
        Default solver of `solve` ("auto").

    Raises
    ------
    ProblemError
        If any argument is invalid; the message names the argument, the value and the rule.
    """

    prior: Any
    privacy: Sequence[Any] = ()
    utility: Any = None
    values: Any = None
    labels: Any = None
    latent: Any = None
    output_size: int | None = None
    output_fixed: bool | None = None
    output_values: Any = None
    normalize: bool = False
    name: str = ""
    solver: str = "auto"

    def __post_init__(self):
        self._in_api_names(self._check)

    @staticmethod
    def _in_api_names(check) -> None:
        """`check()`, its ProblemError reworded with the Python API's names (`api_names`), unless
        the problem comes from a file, whose keys the message already names."""
        try:
            check()
        except ProblemError as e:
            if FROM_FILE.get():
                raise
            raise ProblemError(api_names(str(e))) from None

    def _check(self):
        prior = as_probability("input.prior", self.prior, normalize=self.normalize, positive=True)
        d = prior.size
        if d < 2:
            raise ProblemError(f"input.prior must have at least 2 symbols, got {d}")
        if d > MAX_SYMBOLS:
            raise ProblemError(f"input.prior has {d} symbols; channelopt handles at most {MAX_SYMBOLS}")
        object.__setattr__(self, "prior", _readonly(prior))
        values = np.arange(d, dtype=float) if self.values is None else as_vector("input.values", self.values, d)
        object.__setattr__(self, "values", _readonly(values))
        if self.labels is not None:
            labels = tuple(self.labels) if isinstance(self.labels, (list, tuple)) else None
            if labels is None or len(labels) != d or not all(isinstance(s, str) for s in labels):
                raise ProblemError(f"input.labels must be a list of {d} strings, got {_fmt(self.labels)}")
            object.__setattr__(self, "labels", labels)
        if self.latent is not None:
            latent = Joint.parse("latent", self.latent, d, positive=True)
            gap = np.abs(latent.prior_x - prior).max()
            if gap > SUM_TOL:
                raise ProblemError(
                    f"latent: prior @ conditional must equal input.prior (tolerance {SUM_TOL:g}), "
                    f"got {_fmt(np.round(latent.prior_x, 12))} vs {_fmt(prior)}")
            object.__setattr__(self, "latent", latent)
        if self.output_fixed is None:
            object.__setattr__(self, "output_fixed", self.output_size is not None)
        elif not isinstance(self.output_fixed, bool):
            raise ProblemError(f"output.fixed must be true or false, got {_fmt(self.output_fixed)}")
        m = d if self.output_size is None else self.output_size
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
            raise ProblemError(f"output.size must be a positive integer, got {_fmt(self.output_size)}")
        if m > MAX_SYMBOLS or d * m > MAX_CELLS:
            raise ProblemError(f"output.size {m} with {d} inputs gives a {d} x {m} channel; channelopt handles "
                               f"at most {MAX_SYMBOLS} outputs and {MAX_CELLS:,} channel entries")
        object.__setattr__(self, "output_size", int(m))
        if self.output_values is not None:
            object.__setattr__(self, "output_values",
                               _readonly(as_vector("output.values", self.output_values, int(m))))
        object.__setattr__(self, "solver", canonical(self.solver))
        if self.solver not in SOLVERS:
            raise ProblemError(f"solver.name must be one of {', '.join(SOLVERS)}, got {_fmt(self.solver)}"
                               f"{did_you_mean(self.solver, SOLVERS)}")
        self._set_privacy(self.privacy)
        if self.utility is not None:
            object.__setattr__(self, "utility", _as_utility(self.utility))
        self._validate_privacy()
        if self.utility is not None:
            self.utility.validate(self)

    def _set_privacy(self, privacy) -> None:
        """`privacy` (one notion or a sequence of them, each as `_as_notion` takes it) as a tuple of Notions."""
        privacy = tuple(privacy) if isinstance(privacy, (list, tuple)) else (privacy,)
        object.__setattr__(self, "privacy", tuple(_as_notion(n, i) for i, n in enumerate(privacy)))

    def _validate_privacy(self) -> None:
        """Each notion's checks against the problem (`Notion.validate`)."""
        for i, notion in enumerate(self.privacy):
            notion.validate(self, f"privacy[{i}]")

    def with_privacy(self, privacy) -> Problem:
        """This problem under other notions: a sweep's point. The fields `_check` validated
        are kept as they are (they do not depend on the notions), and only the new notions are
        checked against the problem: `dataclasses.replace` would validate the prior, values and
        utility again, 0.12 ms of a 2.5 ms point (LDP MAE, d = 32).

        Parameters
        ----------
        privacy : sequence of Notion
            The notions, as `privacy` takes them.

        Returns
        -------
        Problem
            A new problem; this one is unchanged.

        Raises
        ------
        ProblemError
            If a notion does not fit the problem.
        """
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)          # (frozen: the validated fields, and the secret built once)

        def check():
            new._set_privacy(privacy)
            new._validate_privacy()

        new._in_api_names(check)
        return new

    @property
    def d(self) -> int:
        return self.prior.size

    @property
    def m(self) -> int:
        return int(self.output_size or 0)          # set to an int by the validation

    @functools.cached_property
    def secret(self) -> Joint:
        """The problem's own secret model: the latent joint, or G = X (built once)."""
        return self.latent if self.latent is not None else Joint.identity(self.prior)

    @classmethod
    def from_query(cls, raw_prior, query, **kwargs) -> Problem:
        """Release X = f(R) of a raw value R while protecting R (LIP-TDSC Corollary 1).

        `query[r]` is the index of f(r) in X's alphabet and must be onto {0..d-1}. The raw value
        is the secret: `Pr(X=x | R=r) = 1[f(r) = x]`, and the prior of X is the push-forward.
        """
        raw = as_probability("input.raw_prior", raw_prior, positive=True,
                             normalize=kwargs.get("normalize", False))
        try:
            f = np.array(query)
            ok = f.ndim == 1 and f.size == raw.size and np.issubdtype(f.dtype, np.integer)
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ProblemError(f"input.query must be a list of {raw.size} integers (one per raw symbol), "
                               f"got {_fmt(query)}")
        d = int(f.max()) + 1 if f.size else 0
        if f.min() < 0 or set(f.tolist()) != set(range(d)):
            raise ProblemError(f"input.query must map onto 0..{max(d - 1, 0)} (surjective), got {_fmt(query)}")
        conditional = np.zeros((raw.size, d))
        conditional[np.arange(raw.size), f] = 1.0
        kwargs.pop("normalize", None)
        return cls(prior=raw @ conditional, latent=Joint(raw, conditional), **kwargs)


def _as_notion(value, i: int):
    """A privacy entry as a Notion: a Notion, a problem-file table ({"notion": "lip", "epsilon": 1})
    or a (name, {parameters}) pair; anything else is a TypeError naming the argument."""
    from .notions import Notion, parse_notion

    if isinstance(value, Notion):
        return value
    if isinstance(value, dict):
        return parse_notion(value, f"privacy[{i}]")
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str) and isinstance(value[1], dict):
        return parse_notion({"notion": value[0], **value[1]}, f"privacy[{i}]")
    raise TypeError(f"privacy[{i}] must be a notion (e.g. channelopt.LIP(1.0)), a table such as "
                    f"{{'notion': 'lip', 'epsilon': 1.0}} or a pair ('lip', {{'epsilon': 1.0}}); got {value!r}")


def _as_utility(value):
    """The utility as an object: Distortion/Bayes as given, a kind name, or a problem-file table."""
    from .utility import Bayes, Distortion, parse_utility

    if isinstance(value, (Bayes, Distortion)):
        return value
    if isinstance(value, str):
        return parse_utility({"kind": value})
    if isinstance(value, dict):
        return parse_utility(value)
    raise TypeError(f"utility must be channelopt.Distortion(...), channelopt.Bayes(...), a kind name such as "
                    f"'hamming' or a table such as {{'kind': 'bayes-mse'}}; got {value!r}")
