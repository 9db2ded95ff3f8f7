"""Real data: release a person's work class while protecting their income (UCI Adult, shipped).

    python examples/02_adult_income.py

The secret G (income <=50K / >50K) is not released but is correlated with what is (X = work
class, 4 groups). LIP with a latent secret protects G itself; LDP protects X (and so G too, but
at a much higher cost). The prior and the correlation are the empirical frequencies of the
30,162 rows shipped with the package (LIP-TDSC §5.2.2).
"""

import channelopt as co
from channelopt.data import WORKCLASS_LABELS, adult_workclass_income, data_file

joint = adult_workclass_income(data_file("adult.csv"))
P = joint.prior_x
print("work class prior:      ", ", ".join(f"{k} {v:.4f}" for k, v in zip(WORKCLASS_LABELS, P)))
rich = joint.prior[1] * joint.conditional[1] / P
print("Pr(>50K | work class): ", ", ".join(f"{k} {v:.3f}" for k, v in zip(WORKCLASS_LABELS, rich)))
for eps in (0.1, 0.5, 1.0):
    lip = co.solve(co.Problem(prior=P, latent=joint, privacy=[co.LIP(eps)], utility=co.Distortion("hamming"),
                              labels=WORKCLASS_LABELS))
    ldp = co.solve(co.Problem(prior=P, privacy=[co.LDP(eps)], utility=co.Distortion("hamming")))
    print(f"eps = {eps:>3}: Hamming error  LIP on income {lip.objective:.4f} ({lip.status})   "
          f"LDP on work class {ldp.objective:.4f} ({ldp.status}, {ldp.solver})")
print("Under LDP the best channel at these budgets always reports 'Private' (subset RR with k = 1):")
print("the rare classes cost more than they give. LIP on income keeps almost all of the work class.")
