"""channelopt: optimal perturbation channels for local privacy, with exact audits and certificates.

    import channelopt as co
    problem = co.Problem(prior=[0.1, 0.2, 0.7], privacy=[co.LIP(1.0)], utility=co.Distortion("hamming"))
    result = co.solve(problem)
    result.channel, result.objective, result.leakage, result.certificate
"""

from importlib import metadata as _metadata

from .audit import Audit, audit
from .errors import ChannelOptError, ProblemError, SolverError
from .io import load_problem, problem_from_dict
from .notions import ALIP, BPLIP, DI, IDLDP, LDP, LIP, MIL, MIP, WCLIP, ApproxLIP, Pufferfish
from .problem import Joint, Problem
from .methods import Certificate, Result, solve
from .sweep import sweep
from . import plots
from .utility import Bayes, Distortion

try:
    __version__ = _metadata.version("channelopt")
except _metadata.PackageNotFoundError:        # a source tree that was never installed
    __version__ = "0.0.0+unknown"

__all__ = ["ALIP", "Audit", "BPLIP", "Certificate", "ChannelOptError", "DI", "Distortion", "IDLDP", "Joint", "LDP", "LIP",
           "MIL", "MIP", "ProblemError", "Problem", "Pufferfish", "Result", "SolverError", "WCLIP",
           "ApproxLIP", "Bayes", "audit", "plots", "load_problem", "problem_from_dict", "solve", "sweep"]
