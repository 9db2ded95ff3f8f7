"""The papers' closed-form channels and values, as plain functions of their inputs.

The registry (`channelopt.theorems`) wraps these with their conditions and citations; figures
use them to draw the papers' curves next to the certified optima.
"""

from __future__ import annotations

import numpy as np


def rr_lip(prior, eps: float) -> np.ndarray:
    """RR-LIP (000 Theorem 3; 004 Theorem 2 for d = 2; 001 Eq 19):
    q[m, m] = 1 - (1 - P_m) / e^eps,  q[m, k] = P_k / e^eps (k != m)."""
    P = np.asarray(prior, float)
    e = np.exp(eps)
    q = np.tile(P / e, (P.size, 1))
    np.fill_diagonal(q, 1 - (1 - P) / e)
    return q


def rr_ldp_binary(eps: float) -> np.ndarray:
    """Binary RR for LDP with both flip probabilities 1/(e^eps + 1) (004 Prop 4 / Eq 24)."""
    r = 1.0 / (np.exp(eps) + 1)
    return np.array([[1 - r, r], [r, 1 - r]])
