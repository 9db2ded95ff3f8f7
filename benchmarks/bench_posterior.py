"""Certified Bayes optima (posterior-space LP) at the alphabet sizes of frequency estimation.

    python benchmarks/bench_posterior.py [--sizes 64,256] [--eps 0.5,1,2,4] [--seeds 3]
        [--priors dirichlet,zipf] [--levels 1,2,5] [--utilities ...] [--notions lip,ldp] [--limit 60]
        [--generic 32] [--generic-utilities bayes-mse] [--generic-notions lip-latent,bp-lip,alip]
        [--out benchmarks/out]

For each utility, notion, prior family, eps and d, `--seeds` random priors are solved with
`time_limit = --limit`; the table gives the median time, how many runs were certified optimal,
the worst relative gap (|objective - bound| / |objective|) and whether the cell meets its target
(every gap within 1e-9, median under 10 s up to d = 64 and under 60 s above). Dirichlet(1) priors are random
points of the simplex; Zipf(1.1) priors are p_k ~ k^-1.1 in a random order; `levels` priors (not
in the default `--priors`) give each symbol a mass of 1, 2 or 5 at random (`--levels`), normalized: three
classes of exchangeable symbols (the orbit LP; bayes-mse's distinct values keep them apart). `--generic D1,D2` adds
the notions that keep the generic pricing (latent-G LIP, BP-LIP with 3 priors, ALIP) at those d
(Dirichlet(1), eps = 1), for `--generic-utilities`.
Writes bench_posterior.csv and a log-log plot of time against d.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

import channelopt as co
from channelopt import bench

KINDS = ("bayes-mse", "histogram-mse", "mutual-information", "map")
TARGET_GAP = 1e-9
"""A cell meets its target when every run ends within TARGET_GAP of its objective (relative) and the
median time is under `target_seconds(d)`."""


def target_seconds(d: int) -> float:
    return 10.0 if d <= 64 else 60.0


FAMILIES = ("dirichlet", "zipf", "levels")
LEVELS = [1.0, 2.0, 5.0]
"""The masses a `levels` prior draws from (`--levels`)."""


def prior(family: str, d: int, rng) -> np.ndarray:
    if family == "dirichlet":
        return rng.dirichlet(np.ones(d))
    if family == "levels":
        p = rng.choice(LEVELS, size=d)
        return p / p.sum()
    p = np.arange(1, d + 1) ** -1.1
    return rng.permutation(p / p.sum())


def notion(name: str, eps: float, d: int, rng):
    """The notion (and latent model for latent-G LIP) of one run."""
    if name == "lip":
        return co.LIP(eps), None
    if name == "ldp":
        return co.LDP(eps), None
    if name == "lip-latent":
        k = max(2, d // 4)
        return co.LIP(eps), {"prior": rng.dirichlet(np.ones(k)), "conditional": rng.dirichlet(np.ones(d), size=k)}
    if name == "bp-lip":
        return co.BPLIP(eps, priors=rng.dirichlet(np.ones(d), size=3)), None
    if name == "alip":
        return co.ALIP(epsilon_lower=eps / 2, epsilon_upper=eps), None
    raise ValueError(name)


def run_one(kind, name, family, eps, d, seed, limit) -> dict:
    rng = np.random.default_rng([d, seed, int(eps * 100), FAMILIES.index(family)])
    priv, latent = notion(name, eps, d, rng)
    P = prior(family, d, rng)
    if latent is not None:
        P = latent["prior"] @ latent["conditional"]
    p = co.Problem(prior=P, latent=latent, privacy=[priv], utility=co.Bayes(kind))
    t0 = time.perf_counter()
    r = co.solve(p, time_limit=limit, progress=False)
    t = time.perf_counter() - t0
    cert = r.certificate or {}
    gap = cert.get("gap", np.nan) / max(abs(r.objective or 0.0), 1e-12) if r.objective is not None else np.nan
    return {"utility": kind, "notion": name, "prior": family, "eps": eps, "d": d, "seed": seed, "time_s": t,
            "status": r.status, "rel_gap": gap, "rounds": cert.get("rounds", ""), "pricing": cert.get("pricing", ""),
            "stopped": cert.get("stopped", ""), "message": r.message[:200]}


def plot(rows, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.8))
    for key in dict.fromkeys((r["utility"], r["notion"]) for r in rows):
        pts = [r for r in rows if (r["utility"], r["notion"]) == key]
        ds = sorted({r["d"] for r in pts})
        med = [np.median([r["time_s"] for r in pts if r["d"] == d]) for d in ds]
        line, = ax.plot(ds, med, "o-", ms=4, label="/".join(key))
        bad = [d for d in ds if any(r["status"] != "optimal" for r in pts if r["d"] == d)]
        ax.plot(bad, [med[ds.index(d)] for d in bad], "o", mfc="white", color=line.get_color())
    for y in (10, 60):
        ax.axhline(y, color="grey", ls=":", lw=1)
    ax.set(xscale="log", yscale="log", xlabel="d", ylabel="median seconds",
           title="certified Bayes optimum (hollow: some run not certified)")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="64,256")
    ap.add_argument("--eps", default="0.5,1,2,4")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--priors", default="dirichlet,zipf")
    ap.add_argument("--levels", default="1,2,5", help="the masses a `levels` prior draws from")
    ap.add_argument("--utilities", default=",".join(KINDS))
    ap.add_argument("--notions", default="lip,ldp")
    ap.add_argument("--limit", type=float, default=60.0, help="time_limit of each solve (s)")
    ap.add_argument("--generic", default="", help="also run latent-G LIP, BP-LIP, ALIP at these d (comma-separated)")
    ap.add_argument("--generic-utilities", default="bayes-mse", help="the utilities of the --generic cells")
    ap.add_argument("--generic-notions", default="lip-latent,bp-lip,alip")
    ap.add_argument("--out", default=str(Path(__file__).parent / "out"))
    args = ap.parse_args(argv)
    LEVELS[:] = [float(x) for x in args.levels.split(",")]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    epss = [float(e) for e in args.eps.split(",")]
    cells = [(k, n, f, e, d) for k in args.utilities.split(",") for n in args.notions.split(",")
             for f in args.priors.split(",") for e in epss for d in sizes]
    cells += [(k, n, "dirichlet", 1.0, int(d)) for k in args.generic_utilities.split(",")
              for n in args.generic_notions.split(",") for d in str(args.generic).split(",") if d]
    rows = []
    head = (f"{'utility':<19} {'notion':<10} {'prior':<9} {'eps':>4} {'d':>5} {'median_s':>9} "
            f"{'certified':>9} {'worst_gap':>9}  target  stopped")
    print(head, flush=True)
    for kind, name, family, eps, d in cells:
        runs = [run_one(kind, name, family, eps, d, s, args.limit) for s in range(args.seeds)]
        rows.extend(runs)
        ok = sum(r["status"] == "optimal" for r in runs)
        worst = max(r["rel_gap"] for r in runs)
        stopped = ",".join(sorted({r["stopped"] for r in runs if r["stopped"]}))
        median = float(np.median([r["time_s"] for r in runs]))
        met = all(r["rel_gap"] <= TARGET_GAP for r in runs) and median < target_seconds(d)
        print(f"{kind:<19} {name:<10} {family:<9} {eps:>4g} {d:>5} {median:>9.2f} "
              f"{ok:>5}/{len(runs):<3} {worst:>9.1e}  {'met' if met else 'missed':<6}  {stopped}", flush=True)
    bench.write_table(rows, out / "bench_posterior.csv")
    plot(rows, out / "bench_posterior.png")
    print(f"wrote {out / 'bench_posterior.csv'} and bench_posterior.png")


if __name__ == "__main__":
    main()
