"""Quickstart: the optimal channel for a skewed prior under LIP and under LDP, with its certificate.

    python examples/01_quickstart.py

A survey question with four answers, one of them rare. Under eps-LIP (the adversary knows the
prior) the best channel errs far less than under eps-LDP; each result says how it is known to be
optimal and carries the exact leakage of the channel returned.
"""

import numpy as np

import channelopt as co

prior = np.array([0.55, 0.25, 0.15, 0.05])
for notion in (co.LIP(1.0), co.LDP(1.0)):
    for utility in (co.Distortion("hamming"), co.Bayes("bayes-mse")):
        r = co.solve(co.Problem(prior=prior, privacy=[notion], utility=utility))
        c = r.certificate
        print(f"{notion.name:>3} eps=1  {utility.kind:<10} {r.status:<8} objective {r.objective:.6f}  "
              f"via {r.method} ({r.solver}); certificate {c.method}, gap {c.gap:.1e}; "
              f"leakage {r.leakage[notion.name]:.6f}")

# the whole story of one result, as a terminal (or a notebook) shows it
print()
print(co.solve(co.Problem(prior=prior, privacy=[co.LIP(1.0)], utility=co.Bayes("bayes-mse"))))
