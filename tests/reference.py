"""A second, deliberately naive implementation of the leakage definitions (plain loops over
x, x', g, y), used to check channelopt's vectorized audit."""

import math


def _log_ratio(a, b):
    if a == 0 and b == 0:
        return None
    if b == 0:
        return math.inf
    if a == 0:
        return -math.inf
    return math.log(a / b)


def ldp(q):
    worst = 0.0
    d, m = len(q), len(q[0])
    for y in range(m):
        for x in range(d):
            for x2 in range(d):
                r = _log_ratio(q[x][y], q[x2][y])
                if r is not None:
                    worst = max(worst, r)
    return worst


def lift_bounds(prior_g, T, q):
    """(max -log lift, max log lift); lift = Pr(y|g)/Pr(y), Pr(y) = sum_g Pr(g) Pr(y|g)."""
    k, d, m = len(T), len(T[0]), len(q[0])
    low = up = 0.0
    for y in range(m):
        cond = [sum(T[g][x] * q[x][y] for x in range(d)) for g in range(k)]
        lam = sum(prior_g[g] * cond[g] for g in range(k))
        for g in range(k):
            r = _log_ratio(cond[g], lam)
            if r is not None:
                up, low = max(up, r), max(low, -r)
    return low, up


def lip(prior_g, T, q):
    return max(lift_bounds(prior_g, T, q))


def di(P, q):
    return ldp([[P[x] * v for v in row] for x, row in enumerate(q)])


def pufferfish(scenarios, pairs, q):
    worst = 0.0
    d, m = len(q), len(q[0])
    for prior_g, T in scenarios:
        for i, j in pairs:
            if prior_g[i] == 0 or prior_g[j] == 0:
                continue
            for y in range(m):
                a = sum(T[i][x] * q[x][y] for x in range(d))
                b = sum(T[j][x] * q[x][y] for x in range(d))
                for r in (_log_ratio(a, b), _log_ratio(b, a)):
                    if r is not None:
                        worst = max(worst, r)
    return worst


def idldp_ratio(budget, q):
    worst = 0.0
    d, m = len(q), len(q[0])
    for x in range(d):
        for x2 in range(d):
            if x == x2:
                continue
            for y in range(m):
                r = _log_ratio(q[x][y], q[x2][y])
                if r is not None:
                    worst = max(worst, r / budget(x, x2))
    return worst


def mil(q):
    return math.log(sum(max(q[x][y] for x in range(len(q))) for y in range(len(q[0]))))


def mip(P, q):
    d, m = len(q), len(q[0])
    lam = [sum(P[x] * q[x][y] for x in range(d)) for y in range(m)]
    total = 0.0
    for x in range(d):
        for y in range(m):
            if q[x][y] > 0:
                total += P[x] * q[x][y] * math.log(q[x][y] / lam[y])
    return total


def approx_delta(P, q, eps, form):
    d, m = len(q), len(q[0])
    lam = [sum(P[x] * q[x][y] for x in range(d)) for y in range(m)]
    e = math.exp(eps)
    if form == "pointwise":
        return max(0.0, max(max(q[x][y] / e - lam[y], lam[y] - e * q[x][y]) for x in range(d) for y in range(m)))
    up = max(sum(max(0.0, q[x][y] - e * lam[y]) for y in range(m)) for x in range(d))
    down = max(sum(max(0.0, lam[y] - e * q[x][y]) for y in range(m)) for x in range(d))
    return max(up, down, 0.0)
