"""How channels are found: the front-end (`frontend`), the LP and conic programs (`lp`), the
posterior-space LP (`posterior`, `structured`, `colgen`, `symmetry`), the local baseline (`local`)
and the one result type (`result`)."""

from ..solvers import fallback_order
from .frontend import (ENUMERATE_MAX_D, STOP_REASONS, clamp_bound, conditioning_hint, finish, method_for,
                       present, progress_bar, solve, solve_bayes, solve_certified)
from .lp import build
from .result import Certificate, PosteriorSolution, Result

LP_ORDER = tuple(fallback_order("lp"))
CONIC_ORDER = tuple(fallback_order("conic"))

__all__ = ["CONIC_ORDER", "Certificate", "ENUMERATE_MAX_D", "LP_ORDER", "PosteriorSolution", "Result",
           "STOP_REASONS", "build", "clamp_bound", "conditioning_hint", "finish", "method_for",
           "present", "progress_bar", "solve", "solve_bayes", "solve_certified"]
