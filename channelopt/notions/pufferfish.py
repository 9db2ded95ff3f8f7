"""eps-local Pufferfish privacy (LIP-TDSC Def 5)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from ..errors import ProblemError
from ..problem import Joint
from .base import LinearBlock, Notion


@dataclass(frozen=True)
class Pufferfish(Notion):
    """For every scenario theta = (Pr(G), T) and discriminative pair (g_i, g_j) with
    Pr(g_i) > 0 and Pr(g_j) > 0 under theta:
    e^-eps <= Pr(Y=y | g_i) / Pr(Y=y | g_j) <= e^eps, with Pr(Y=y | g) = sum_x T[g, x] q[x, y].

    scenarios: list of {prior, conditional} joints (default: the problem's own secret model,
    i.e. its latent joint, or G = X with its prior). pairs: list of [i, j] secret indices
    (default: all pairs); the condition is two-sided, so [i, j] also constrains j against i.

    Parameters
    ----------
    epsilon : float
        The budget in nats, finite and > 0.
    scenarios : list of Joint or dict, optional
        The data evolution scenarios (LIP-TDSC Def 5).
    pairs : array_like, shape (n, 2), optional
        Discriminative pairs of secret indices.

    Raises
    ------
    ProblemError
        If the budget, a scenario or a pair is invalid.
    """

    epsilon: float
    scenarios: Any = None
    pairs: Any = None
    name: ClassVar[str] = "pufferfish"
    keys: ClassVar[tuple[str, ...]] = ("epsilon", "scenarios", "pairs")

    def validate(self, problem, key):
        self.constrained_pairs(problem, key)

    def scenarios_for(self, problem, key: str = "pufferfish") -> list[Joint]:
        if self.scenarios is None:
            return [problem.secret]
        if not isinstance(self.scenarios, (list, tuple)) or not self.scenarios:
            raise ProblemError(f"{key}.scenarios must be a non-empty list of {{prior, conditional}} tables")
        joints = [Joint.parse(f"{key}.scenarios[{i}]", s, problem.d) for i, s in enumerate(self.scenarios)]
        sizes = {j.prior.size for j in joints}
        if len(sizes) != 1:
            raise ProblemError(f"{key}.scenarios must all have the same number of secrets, got {sorted(sizes)}")
        return joints

    def constrained_pairs(self, problem, key: str = "pufferfish") -> list[tuple[Joint, np.ndarray, np.ndarray]]:
        """Per scenario, the ordered pairs (i, j) (both orders) whose secrets both have mass."""
        scen = self.scenarios_for(problem, key)
        k = scen[0].prior.size
        if self.pairs is None:
            i, j = np.nonzero(~np.eye(k, dtype=bool))
        else:
            try:
                pairs = np.array(self.pairs)
                ok = pairs.ndim == 2 and pairs.shape[1] == 2 and pairs.size > 0 and np.issubdtype(pairs.dtype, np.integer)
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ProblemError(f"{key}.pairs must be a non-empty list of [i, j] secret indices, got {self.pairs!r}")
            bad = pairs[(pairs < 0).any(axis=1) | (pairs >= k).any(axis=1)]
            if bad.size:
                raise ProblemError(f"{key}.pairs names unknown secret in {bad[0].tolist()}: "
                                   f"secrets are 0..{k - 1}")
            if np.any(pairs[:, 0] == pairs[:, 1]):
                raise ProblemError(f"{key}.pairs must pair two different secrets, got {pairs[pairs[:, 0] == pairs[:, 1]][0].tolist()}")
            i = np.concatenate([pairs[:, 0], pairs[:, 1]])
            j = np.concatenate([pairs[:, 1], pairs[:, 0]])
        out = []
        for s in scen:
            keep = (s.prior[i] > 0) & (s.prior[j] > 0)
            out.append((s, i[keep], j[keep]))
        return out

    def column_rows(self, problem):
        e = np.exp(self.epsilon)
        blocks = [s.conditional[i] - e * s.conditional[j] for s, i, j in self.constrained_pairs(problem)]
        rows = np.vstack(blocks)
        return rows if rows.size else np.zeros((0, problem.d))

    def linear(self, problem) -> LinearBlock:
        """Sparse form: auxiliaries c[s, g, y] = T_s[g] . q[:, y] (equality rows), then each pair
        row c[i, y] - e^eps c[j, y] <= 0 has two nonzeros: O(k d m + pairs m) nonzeros instead of
        2 d per pair row (the same constraints as `column_rows`)."""
        m = problem.m
        e = np.exp(self.epsilon)
        I_m = sp.identity(m, format="csr")
        scen = self.constrained_pairs(problem)
        n_aux = sum(s.conditional.shape[0] for s, _, _ in scen) * m
        E_q, A_rows, offset = [], [], 0
        for s, i, j in scen:
            E_q.append(-sp.kron(sp.csr_matrix(s.conditional), I_m, format="csr"))
            r = np.arange(i.size * m)
            gi, gj, y = i[r // m], j[r // m], r % m
            A_rows.append(sp.csr_matrix((np.r_[np.ones(r.size), -e * np.ones(r.size)],
                                         (np.r_[r, r], np.r_[offset + gi * m + y, offset + gj * m + y])),
                                        shape=(r.size, n_aux)))
            offset += s.conditional.shape[0] * m
        A_aux = sp.vstack(A_rows, format="csr")
        E_q = sp.vstack(E_q, format="csr")
        return LinearBlock(sp.csr_matrix((A_aux.shape[0], problem.d * m)), np.zeros(A_aux.shape[0]), A_aux,
                           np.zeros(n_aux), np.ones(n_aux), E_q, sp.identity(n_aux, format="csr"), np.zeros(n_aux))

    def leakage(self, problem, q):
        worst = 0.0
        for s, i, j in self.constrained_pairs(problem):
            cond = s.given(q)
            num, den = cond[i], cond[j]
            pos = num > 0
            if np.any(den[pos] == 0):
                return np.inf
            if pos.any():
                worst = max(worst, float(np.max(np.log(num[pos]) - np.log(den[pos]))))
        return worst

    def to_table(self):
        out = {"notion": self.name, "epsilon": self.epsilon}
        if self.scenarios is not None:
            out["scenarios"] = [Joint.table(s) for s in self.scenarios]
        if self.pairs is not None:
            out["pairs"] = np.asarray(self.pairs).tolist()
        return out
