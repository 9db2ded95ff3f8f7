"""Audit a mechanism you deploy: exact leakage of its channel under every notion, and how far it
is from the optimum for your prior.

    python examples/03_audit_a_mechanism.py

Generalized randomized response (GRR) at eps = 1 is exactly 1-LDP. Under LIP its leakage depends
on the prior; and for a skewed prior the LDP-optimal channel for Hamming distortion is not GRR
but subset randomized response (Kalantari, Sankar and Sarwate, KSR), which channelopt returns with
its dual certificate.
"""

import numpy as np

import channelopt as co

d, eps = 6, 1.0
prior = np.array([0.4, 0.3, 0.15, 0.1, 0.04, 0.01])
e = np.exp(eps)
grr = np.full((d, d), 1 / (e + d - 1))
np.fill_diagonal(grr, e / (e + d - 1))

problem = co.Problem(prior=prior, privacy=[co.LDP(eps), co.LIP(eps)], utility=co.Distortion("hamming"))
report = co.audit(problem, grr)
for name, leak in report.leakage.items():
    print(f"GRR leakage {name}: {leak:.6f}  [{'ok' if report.satisfied[name] else 'VIOLATED'}]")
print("GRR Hamming error:", round(problem.utility.evaluate(problem, grr), 6))

best = co.solve(co.Problem(prior=prior, privacy=[co.LDP(eps)], utility=co.Distortion("hamming")))
print(f"optimal eps-LDP error: {best.objective:.6f} by {best.solver} (k = {best.certificate['k']}), "
      f"certificate gap {best.certificate.gap:.1e}")
