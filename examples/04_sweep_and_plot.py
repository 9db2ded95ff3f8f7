"""A privacy-utility curve: solve at many budgets, check every point is certified, plot it.

    python examples/04_sweep_and_plot.py [OUT.png]

Bayes MSE of the curator's estimate of a user's value (values 0..4, a Zipf-like prior) under
eps-LIP and eps-LDP, 25 budgets each. Writes the plot (default: tradeoff.png).
"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import channelopt as co  # noqa: E402

prior = 1 / np.arange(1, 6) ** 1.1
prior /= prior.sum()
eps = np.linspace(0.1, 4.0, 25)
fig, ax = plt.subplots(figsize=(6, 4))
for notion in (co.LIP(1.0), co.LDP(1.0)):
    sweep = co.sweep(co.Problem(prior=prior, privacy=[notion], utility=co.Bayes("bayes-mse")), epsilon=eps)
    certified = sum(r.status == "optimal" for r in sweep)
    print(f"{notion.name}: {certified}/{len(eps)} points certified optimal; MSE at eps = 1: "
          f"{np.interp(1.0, eps, [r.objective for r in sweep]):.4f}")
    sweep.plot(ax=ax, label=f"eps-{notion.name.upper()}")
out = sys.argv[1] if len(sys.argv) > 1 else "tradeoff.png"
fig.savefig(out, dpi=100)
print("wrote", out)
