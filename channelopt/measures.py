"""Information leakage of a secret S through Y = channel(X), for a joint Pr(S, X) (ALIP App. A;
G = X gives the measures of X itself).

    lift l(s, y) = Pr(s | y) / Pr(s) = Pr(y | s) / Pr(y)
    alpha-lift     log max_y (sum_s Pr(s) l(s,y)^alpha)^(1/alpha)
    Sibson MI      alpha/(alpha-1) log sum_y (sum_s Pr(s) Pr(y|s)^alpha)^(1/alpha)      (-> maximal leakage as alpha -> inf)
    Arimoto MI     alpha/(alpha-1) log [sum_y Pr(y) ||Pr(S|y)||_alpha / ||Pr(S)||_alpha]
    maximal leakage  log sum_y max_{s: Pr(s) > 0} Pr(y | s)                            (Issa et al.)
    I(S; Y)        Shannon mutual information
All in nats. alpha > 1 (alpha = 1 is Shannon MI; use `mutual_information`).
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from .errors import ProblemError


def _secret(joint, q):
    """(Pr(s) > 0, Pr(y | s), Pr(y)) on the secrets and outputs that occur; the measures below
    take a joint and a channel, or this triple once (`all_measures`)."""
    if isinstance(joint, tuple):
        return joint
    PS = np.asarray(joint.prior, float)
    cond = joint.given(np.asarray(q, float))                                   # Pr(y | s)
    keep = PS > 0
    PS, cond = PS[keep], cond[keep]
    lam = PS @ cond
    used = lam > 0
    return PS, cond[:, used], lam[used]


def _alpha(alpha: float) -> float:
    if not (isinstance(alpha, (int, float)) and alpha > 1):
        raise ProblemError(f"alpha must be a number > 1, got {alpha!r}")
    return float(alpha)


def mutual_information(joint, q) -> float:
    """I(S; Y) in nats, the Shannon mutual information of the secret and the output (ALIP App. A).

    Parameters
    ----------
    joint : Joint or tuple
        The secret model Pr(G) and Pr(X|G) (or the triple `_secret` computed once).
    q : array_like, shape (d, m)
        The channel Pr(Y=y | X=x).

    Returns
    -------
    float
        I(S; Y) >= 0.
    """
    PS, cond, lam = _secret(joint, q)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(cond > 0, cond * np.log(cond / lam), 0.0)
    return max(float(PS @ t.sum(axis=1)), 0.0)


def maximal_leakage(joint, q) -> float:
    """Maximal leakage log sum_y max_{s: Pr(s) > 0} Pr(y | s) in nats (Issa et al.; ALIP App. A).

    Parameters
    ----------
    joint : Joint or tuple
        The secret model Pr(G) and Pr(X|G) (or the triple `_secret` computed once).
    q : array_like, shape (d, m)
        The channel Pr(Y=y | X=x).

    Returns
    -------
    float
        The maximal leakage >= 0.
    """
    _, cond, _ = _secret(joint, q)
    return max(float(np.log(cond.max(axis=0).sum())), 0.0)


def _log_norm(logw, logv, a):
    """(1/a) log sum_s w_s v_s^a along axis 0, in log space (no underflow for large a)."""
    with np.errstate(divide="ignore"):
        return logsumexp(logw[:, None] + a * logv, axis=0) / a


def alpha_lift(joint, q, alpha: float = 2.0) -> float:
    """alpha-lift log max_y (sum_s Pr(s) l(s, y)^alpha)^(1/alpha) (ALIP App. A).

    Parameters
    ----------
    joint : Joint or tuple
        The secret model Pr(G) and Pr(X|G) (or the triple `_secret` computed once).
    q : array_like, shape (d, m)
        The channel Pr(Y=y | X=x).
    alpha : float, optional
        The order, > 1 (default 2).

    Returns
    -------
    float
        The alpha-lift in nats.

    Raises
    ------
    ProblemError
        If alpha is not a number > 1.
    """
    a = _alpha(alpha)
    PS, cond, lam = _secret(joint, q)
    with np.errstate(divide="ignore"):
        return float(_log_norm(np.log(PS), np.log(cond) - np.log(lam), a).max())


def sibson(joint, q, alpha: float = 2.0) -> float:
    """Sibson mutual information of order alpha in nats (ALIP App. A).

    Parameters
    ----------
    joint : Joint or tuple
        The secret model Pr(G) and Pr(X|G) (or the triple `_secret` computed once).
    q : array_like, shape (d, m)
        The channel Pr(Y=y | X=x).
    alpha : float, optional
        The order, > 1 (default 2).

    Returns
    -------
    float
        Sibson's I_alpha(S; Y) >= 0.

    Raises
    ------
    ProblemError
        If alpha is not a number > 1.
    """
    a = _alpha(alpha)
    PS, cond, _ = _secret(joint, q)
    with np.errstate(divide="ignore"):
        return max(float(a / (a - 1) * logsumexp(_log_norm(np.log(PS), np.log(cond), a))), 0.0)


def arimoto(joint, q, alpha: float = 2.0) -> float:
    """Arimoto mutual information of order alpha in nats (ALIP App. A).

    Parameters
    ----------
    joint : Joint or tuple
        The secret model Pr(G) and Pr(X|G) (or the triple `_secret` computed once).
    q : array_like, shape (d, m)
        The channel Pr(Y=y | X=x).
    alpha : float, optional
        The order, > 1 (default 2).

    Returns
    -------
    float
        Arimoto's I_alpha(S; Y) >= 0.

    Raises
    ------
    ProblemError
        If alpha is not a number > 1.
    """
    a = _alpha(alpha)
    PS, cond, lam = _secret(joint, q)
    with np.errstate(divide="ignore"):
        log_post = np.log(PS)[:, None] + np.log(cond) - np.log(lam)         # log Pr(s | y)
        num = logsumexp(np.log(lam) + logsumexp(a * log_post, axis=0) / a)
        den = logsumexp(a * np.log(PS)) / a
    return max(float(a / (a - 1) * (num - den)), 0.0)


def secret_ldp(joint, q) -> float:
    """max_{y, s, s'} log Pr(y|s) / Pr(y|s') (LDP with respect to the secret).

    Parameters
    ----------
    joint : Joint or tuple
        The secret model Pr(G) and Pr(X|G) (or the triple `_secret` computed once).
    q : array_like, shape (d, m)
        The channel Pr(Y=y | X=x).

    Returns
    -------
    float
        The LDP leakage of the channel with respect to the secret (inf when an output is
        impossible under one secret only).
    """
    _, cond, _ = _secret(joint, q)
    with np.errstate(divide="ignore"):
        return float(max(np.log(cond.max(axis=0)) - np.log(cond.min(axis=0))))


def all_measures(joint, q, alpha: float = 2.0) -> dict:
    """Every information measure of the secret from one product Pr(Y | S).

    Parameters
    ----------
    joint : Joint or tuple
        The secret model Pr(G) and Pr(X|G) (or the triple `_secret` computed once).
    q : array_like, shape (d, m)
        The channel Pr(Y=y | X=x).
    alpha : float, optional
        The order, > 1 (default 2).

    Returns
    -------
    dict
        ldp, mutual_information, maximal_leakage, alpha_lift, sibson, arimoto (nats).
    """
    joint = _secret(joint, q)                               # once for the six measures
    return {"ldp": secret_ldp(joint, q), "mutual_information": mutual_information(joint, q),
            "maximal_leakage": maximal_leakage(joint, q), "alpha_lift": alpha_lift(joint, q, alpha),
            "sibson": sibson(joint, q, alpha), "arimoto": arimoto(joint, q, alpha)}
