"""Numerical (eps, delta)-LIP audit of a continuous mechanism by discretization (independent of the
closed forms): X on a fine grid with prior weights, Y on a fine grid, f_Y = sum_i w_i f(y | x_i),
and both hockey-stick divergences by the trapezoid rule."""

from __future__ import annotations

import numpy as np
from scipy.integrate import trapezoid


def deltas(x_grid, x_weights, cond, y_grid, eps: float, at_x) -> np.ndarray:
    """For each x in at_x: (E_{e^eps}(f_{Y|x} || f_Y), E_{e^eps}(f_Y || f_{Y|x})).
    cond(xs, ys) -> len(xs) x len(ys) densities f(y | x)."""
    w = np.asarray(x_weights, float)
    w = w / w.sum()
    fy = w @ cond(np.asarray(x_grid, float), y_grid)
    fx = cond(np.asarray(at_x, float), y_grid)
    g = np.exp(eps)
    fwd = trapezoid(np.maximum(fx - g * fy, 0.0), y_grid, axis=1)
    back = trapezoid(np.maximum(fy - g * fx, 0.0), y_grid, axis=1)
    return np.stack([fwd, back], axis=1)


def gaussian_cond(sigma_n: float):
    from scipy.stats import norm
    return lambda xs, ys: norm.pdf(ys[None, :], xs[:, None], sigma_n)
