"""Command line (docs/cli.md). Exit codes: 0 success; 1 solved but infeasible / solver failed / audit
finds a violated notion; 2 invalid input or usage (one line on stderr, nothing on stdout)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

from .errors import ChannelOptError, ProblemError
from .problem import SOLVERS
from .methods.result import format_leakage
from .solvers import canonical
from . import __version__


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse's default prints the usage block)
        sub = self.prog.removeprefix("channelopt").strip()      # "solve" for a subcommand, "" at the top
        raise ProblemError(f"{sub}: {message}" if sub else message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="channelopt", description="Optimal perturbation channels for local privacy.")
    p.add_argument("--version", action="version", version=f"channelopt {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    s = sub.add_parser("solve", help="optimal channel for a problem file")
    s.add_argument("file")
    s.add_argument("--json", action="store_true", help="print the result as JSON")
    s.add_argument("--full", action="store_true", help="print the whole channel, however large")
    s.add_argument("--channel-out", help="write the channel as CSV (one row per input, one column per output)")
    s.add_argument("--solver", choices=SOLVERS, type=canonical,
                   help="solver to try first, any case (default: the file's, else auto)")
    s.add_argument("--no-fallback", action="store_true", help="do not try other solvers when one fails")
    s.add_argument("--out", help="also write the JSON result to this file (atomically)")
    s.add_argument("--time-limit", help="seconds for a certified Bayes optimum (default 60), or for the whole "
                   "solver chain of an LP (default none); past it the best channel found is returned as `local`, "
                   "with the best valid bound known")
    s.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr for long Bayes solves (default: when stderr is a terminal)")
    a = sub.add_parser("audit", help="exact leakage of a given channel")
    a.add_argument("file")
    a.add_argument("--channel", required=True, help="CSV: one row per input, one column per output")
    a.add_argument("--json", action="store_true")
    v = sub.add_parser("verify", help="cross-check the registered closed forms against exact audits and certified optima")
    v.add_argument("--theorem", action="append", help="theorem id (repeatable; default: all); see `channelopt theorems`")
    v.add_argument("--quick", action="store_true", help="a coarser grid (under a minute)")
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    v.add_argument("--out", help="write verify.md, verify.json and the PNG maps into this directory")
    v.add_argument("--worst", action="store_true",
                   help="with --out: also write each worst counterexample as <id>-worst.toml plus the claimed "
                        "channel as <id>-claimed.csv (reproduce with channelopt audit / solve)")
    v.add_argument("--samples", type=int, default=None,
                   help="seeded random cases per claim (default: 1000, or 12 with --quick; 0: the grid only)")
    v.add_argument("--seed", type=int, default=0, help="seed of the random cases (default 0)")
    v.add_argument("--jobs", type=int, default=1, help="worker processes over claims (default 1)")
    v.add_argument("--errata", help="write the errata (one section per paper, for its authors) to this Markdown file")
    v.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")
    t = sub.add_parser("theorems", help="list the registered closed forms with their citations")
    t.add_argument("--json", action="store_true")
    z = sub.add_parser("analyze", help="exact relations between notions, composition, transferability, watchdog")
    zs = z.add_subparsers(dest="analysis", required=True, parser_class=_Parser)
    for name, hlp in (("relations", "LIP vs LDP / DI for one prior (CA-LIP Thm 1, Prop 1, Thm 3)"),
                      ("composition", "n independent LIP releases (CA-LIP Thm 4)"),
                      ("transfer", "a mechanism designed for one prior used under another (CA-LIP Lemma 3, Eq 12)")):
        zp = zs.add_parser(name, help=hlp)
        zp.add_argument("--prior", required=True, help="comma-separated probabilities")
        if name == "composition":
            zp.add_argument("--epsilons", required=True, help="comma-separated budgets, one per release")
        else:
            zp.add_argument("--epsilon", required=True, type=float)
        if name == "transfer":
            zp.add_argument("--other", required=True, help="the prior the mechanism is used under")
        zp.add_argument("--json", action="store_true")
    zw = zs.add_parser("watchdog", help="asymmetric watchdog for a joint Pr(S, X) (ALIP)")
    zw.add_argument("--joint", required=True, help="CSV: one row per secret s, one column per symbol x")
    zw.add_argument("--eps-lower", required=True, type=float)
    zw.add_argument("--eps-upper", required=True, type=float)
    zw.add_argument("--no-optimum", action="store_true", help="skip the certified ALIP optimum")
    zw.add_argument("--json", action="store_true")
    w = sub.add_parser("sweep", help="solve a problem file at many budgets (or priors), reusing the solver")
    w.add_argument("file")
    w.add_argument("--epsilon", help="comma-separated budgets, or START:STOP:NUM (linspace)")
    w.add_argument("--scale", help="factors on every budget (per-input ID-LDP budgets too): as --epsilon")
    w.add_argument("--priors", help="CSV of priors (one per row) to sweep instead of epsilon")
    w.add_argument("--jobs", type=int, default=1,
                   help="processes (default 1): this one from the first point, N - 1 workers from the last")
    w.add_argument("--out", help="write the table as CSV to this file (atomically)")
    w.add_argument("--json", action="store_true", help="print the results as JSON")
    w.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")
    h = sub.add_parser("batch", help="one optimal channel per user prior (millions of users), streamed to .npz")
    h.add_argument("file", help="problem file: notions and utility (its prior only fixes d)")
    h.add_argument("--priors", required=True, help="CSV (one user per row, no header) or .npy of priors")
    h.add_argument("--out", required=True, help="results .npz (written through a temporary file)")
    h.add_argument("--jobs", type=int, default=1, help="parallel workers (-1: all cores)")
    h.add_argument("--chunk-size", type=int, default=20000, help="users per chunk (memory per worker)")
    h.add_argument("--json", action="store_true", help="print the summary as JSON")
    h.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="progress bar on stderr (default: when stderr is a terminal)")
    b = sub.add_parser("bench", help="solver-speed benchmark: every solver and baselines, time vs d")
    b.add_argument("--notions", help="comma-separated, default: all of ldp,lip,lip-latent,minid-ldp,pufferfish,bp-lip")
    b.add_argument("--utilities", help="comma-separated, default: hamming,bayes-mse")
    b.add_argument("--sizes", help="comma-separated d values, default: 4,8,16,32,64,128,256")
    b.add_argument("--solvers", help="comma-separated, default: auto,HIGHS,HIGHS-IPM,CLARABEL,ECOS,SCS")
    b.add_argument("--baselines", help="comma-separated, default: cvxpy-pairwise,raw-HIGHS,raw-CLARABEL ('none' for none)")
    b.add_argument("--cap", type=float, default=10.0, help="stop growing d for a series once a run takes longer (s)")
    b.add_argument("--quick", action="store_true", help="d in 4..16 only")
    b.add_argument("--out", default="bench", help="directory for bench.csv and bench.png (default: bench)")
    b.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="a bar over the instances on stderr (default: when stderr is a terminal)")
    r = sub.add_parser("reproduce", help="reproduce the papers' figures (CSV + PNG)")
    r.add_argument("figures", nargs="*", help="figure ids (default: all); see --list")
    r.add_argument("--list", action="store_true", help="list the figure ids and exit")
    r.add_argument("--quick", action="store_true", help="coarser grids and fewer users / runs")
    r.add_argument("--out", default="figures", help="output directory (default: figures)")
    r.add_argument("--data-dir", help="folder holding adult.csv / retail_head.dat to use instead of the shipped "
                                      "copies (same as CHANNELOPT_DATA)")
    r.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="a bar over the figures on stderr (default: when stderr is a terminal)")
    m = sub.add_parser("audit-mechanism", help="exact or statistical leakage of an LDP implementation against its claim")
    m.add_argument("randomizer", nargs="?", help="adapter name (see --list) or module:function")
    m.add_argument("--list", action="store_true", help="list the adapters and exit")
    m.add_argument("--d", type=int, help="inputs 0..d-1")
    m.add_argument("--epsilon", type=float, help="the claimed LDP budget")
    m.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="adapter parameter (repeatable), e.g. --param m=16")
    m.add_argument("--notion", action="append", choices=["ldp", "lip"],
                   help="notions to check, the first judges the verdict (default: ldp)")
    m.add_argument("--prior", help="comma-separated prior for lip (default uniform)")
    m.add_argument("--method", choices=["auto", "white-box", "black-box"], default="auto")
    m.add_argument("--samples", type=int, help="reports per input for the black-box audit (default 20000)")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--confidence", type=float, default=0.95)
    m.add_argument("--json", action="store_true")
    m.add_argument("--report", metavar="DIR", help="regenerate the published audit of every adapter into DIR "
                   "(implementations.md + implementations.json)")
    m.add_argument("--quick", action="store_true", help="with --report: d in {4, 8} and eps in {1, 4} only")
    return p


def _progress(flag: bool | None) -> bool:
    """--progress / --no-progress, else on when stderr is a terminal."""
    return sys.stderr.isatty() if flag is None else flag


def _time_limit(text: str | None) -> float | None:
    """--time-limit as seconds: a positive finite number."""
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value > 0 and value < float("inf")):
        raise ProblemError(f"--time-limit {text!r}: must be a positive finite number of seconds")
    return value


def _solve(args) -> int:
    from .io import dumps, load_problem, write_atomic
    from .methods import solve

    problem = load_problem(args.file)
    from .io import check_writable

    if args.out:
        check_writable(args.out, "--out")
    if args.channel_out:
        check_writable(args.channel_out, "--channel-out")
    result = solve(problem, solver=args.solver, fallback=not args.no_fallback,
                   time_limit=_time_limit(args.time_limit), progress=args.progress)
    doc = result.to_json()
    if args.out:
        write_atomic(args.out, dumps(doc) + "\n")
    full = result.full_channel
    if args.channel_out and full is not None:
        # every output in its column (a CSV has no place for `outputs`: the dropped ones are zeros)
        write_atomic(args.channel_out, "\n".join(",".join(map(repr, row)) for row in np.asarray(full, dtype=float).tolist()) + "\n")
    if args.json:
        print(dumps(doc))
    else:
        print(f"problem:   {problem.name or args.file}")
        print(result.summary(full=args.full))
    return 0 if result.status in ("optimal", "local") else 1


def _audit(args) -> int:
    from .audit import audit
    from .io import load_problem, read_channel

    problem = load_problem(args.file)
    q = read_channel(args.channel)
    report = audit(problem, q)
    doc = {"leakage": report.leakage, "satisfied": report.satisfied, "measures": report.measures}
    if problem.utility is not None and q.shape[1] == problem.m:
        doc["objective"] = problem.utility.evaluate(problem, q)
    if args.json:
        from .io import dumps, jsonable
        print(dumps(jsonable(doc)))
    else:
        for k, v in report.leakage.items():
            print(f"{k}: {format_leakage(v)}  [{'ok' if report.satisfied[k] else 'VIOLATED'}]")
        print("measures: " + "; ".join(f"{k} {format_leakage(v)}" for k, v in report.measures.items()))
        if "objective" in doc:
            print(f"objective ({problem.utility.kind}): {doc['objective']:.10g}")
    return 0 if report.ok else 1


def _theorems(args) -> int:
    from .theorems import registry

    items = [th.describe() for th in registry().values()]
    if args.json:
        print(json.dumps({"theorems": items}, indent=2))
    else:
        for it in items:
            print(f"{it['id']:<18} {it['citation']}\n{'':<18} {it['claim']}")
    return 0


def _verify(args) -> int:
    from .io import check_writable, write_atomic
    from .sweep import MAX_JOBS
    from .theorems import get, registry, verify

    if args.worst and not args.out:
        raise ProblemError("--worst writes files: give --out DIR")
    if args.samples is not None and not 0 <= args.samples <= 100_000:
        raise ProblemError(f"--samples must be an integer from 0 to 100000, got {args.samples}")
    if not 1 <= args.jobs <= MAX_JOBS:
        raise ProblemError(f"--jobs must be an integer from 1 to {MAX_JOBS}, got {args.jobs}")
    if args.out:
        check_writable(args.out, "--out", directory=True)
    if args.errata:
        check_writable(args.errata, "--errata")
    theorems = [get(t) for t in args.theorem] if args.theorem else list(registry().values())
    reports = verify.run(theorems, quick=args.quick, progress=_progress(args.progress) and not args.json,
                         samples=args.samples, n_jobs=args.jobs, seed=args.seed)
    if args.out:
        verify.write(reports, Path(args.out), args.quick)
    if args.errata:
        write_atomic(Path(args.errata), verify.errata(reports, args.quick, args.samples, args.seed))
    reproduce = []
    if args.worst:
        for r in reports:
            files = verify.write_worst(r, Path(args.out))
            if files:
                reproduce.append(f"{r.theorem.id}: channelopt audit {files[0]} --channel {files[1]}; "
                                 f"channelopt solve {files[0]}")
    if args.json:
        print(json.dumps({"theorems": [r.to_json() for r in reports]}, indent=2))
    else:
        print(verify.table(reports))
        for r in reports:
            if r.condition_found:
                print(f"{r.theorem.id}: condition found: {r.condition_found}")
            region = r.region()
            if region and r.klass != "holds-under-condition":
                print(f"{r.theorem.id}: fails where {region}")
        for line in reproduce:
            print("reproduce " + line)
    return 1 if any(r.errors for r in reports) else 0


def _analyze(args) -> int:
    from . import analyze as A
    from .io import read_channel
    if args.analysis == "relations":
        doc = A.relations(A.parse_list("--prior", args.prior), args.epsilon)
    elif args.analysis == "composition":
        doc = A.composition(A.parse_list("--prior", args.prior), A.parse_list("--epsilons", args.epsilons))
    elif args.analysis == "transfer":
        doc = A.transfer(A.parse_list("--prior", args.prior), A.parse_list("--other", args.other), args.epsilon)
    else:
        doc = A.watchdog_report(read_channel(args.joint), args.eps_lower, args.eps_upper,
                                optimum=not args.no_optimum)
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(A.render(doc))
    return 0


def _choices(key: str, text: str | None, allowed: tuple, default: tuple) -> tuple:
    if text is None:
        return default
    items = tuple(t.strip() for t in text.split(",") if t.strip())
    if items == ("none",) and key == "--baselines":
        return ()
    bad = [t for t in items if t not in allowed]
    if not items or bad:
        raise ProblemError(f"{key} {text!r}: each entry must be one of {', '.join(allowed)}")
    return items


def _epsilons(text: str, flag: str = "--epsilon") -> list[float]:
    try:
        if ":" in text:
            a, b, n = text.split(":")
            if int(n) < 1:
                raise ValueError
            from .sweep import MAX_POINTS

            if int(n) > MAX_POINTS:
                raise ProblemError(f"{flag} {text!r}: at most {MAX_POINTS:,} points, got {int(n):,}")
            return np.linspace(float(a), float(b), int(n)).tolist()
        return [float(t) for t in text.split(",") if t.strip()]
    except ProblemError:
        raise
    except ValueError:
        raise ProblemError(f"{flag} {text!r}: need comma-separated numbers or START:STOP:NUM") from None


def _sweep(args) -> int:
    from .batch import read_priors
    from .io import check_writable, load_problem, write_atomic
    from .sweep import sweep

    problem = load_problem(args.file)
    if sum(x is not None for x in (args.epsilon, args.scale, args.priors)) != 1:
        raise ProblemError("sweep needs exactly one of --epsilon, --scale or --priors")
    if args.out:
        check_writable(args.out, "--out")
    kw = ({"epsilon": _epsilons(args.epsilon)} if args.epsilon is not None else
          {"scale": _epsilons(args.scale, "--scale")} if args.scale is not None else {"priors": read_priors(args.priors)})
    results = sweep(problem, **kw, n_jobs=args.jobs, progress=_progress(args.progress))
    table = results.rows()
    keys = [k for k in table[0] if k.startswith("leakage_")]
    head = ["point", results.param, "status", "objective", "bound", "time_s"] + keys
    rows = []
    for row in table:
        x = row[results.param] if results.param != "prior" else " ".join(f"{v:g}" for v in row["prior"])
        rows.append([row["point"], x, row["status"], row["objective"], row["bound"], row["time_s"]]
                    + [row.get(k) for k in keys])
    if args.out:
        import csv
        import io

        buf = io.StringIO()
        wr = csv.writer(buf)
        wr.writerow(head)
        wr.writerows(rows)
        write_atomic(args.out, buf.getvalue())
    if args.json:
        print(json.dumps([dict(zip(head, r)) for r in rows], indent=2, default=float))
    elif args.out:   # the table went to the file: a summary here
        from collections import Counter

        counts = Counter(r.status for r in results)
        print(f"{len(results)} points: " + ", ".join(f"{v} {k}" for k, v in counts.most_common())
              + f"; table written to {args.out}")
    else:
        print("  ".join(f"{h:>12}" for h in head))
        for r in rows:
            print("  ".join(f"{v:>12.6g}" if isinstance(v, float) else f"{str(v):>12}" for v in r))
    return 0 if all(r.ok for r in results) else 1


def _batch(args) -> int:
    from .batch import read_priors, solve_batch
    from .io import check_writable, load_problem

    problem = load_problem(args.file)
    if args.jobs == 0 or args.jobs < -1:
        raise ProblemError(f"--jobs {args.jobs}: must be a positive number of workers or -1 (all cores)")
    if args.chunk_size < 1:
        raise ProblemError(f"--chunk-size {args.chunk_size}: must be a positive integer")
    check_writable(args.out, "--out")
    from .batch import check_priors

    priors = check_priors(read_priors(args.priors), problem.d, key="--priors")
    res = solve_batch(priors, problem, out=args.out, chunk_size=args.chunk_size, n_jobs=args.jobs,
                      progress=_progress(args.progress))
    doc = {"users": res.n_users, "status": res.counts, "method": res.methods, "time_s": res.time_s,
           "out": str(res.path)}
    if args.json:
        print(json.dumps(doc, indent=2))
    else:
        print(f"users:   {res.n_users}  ({res.time_s:.2f} s)")
        print("status:  " + ", ".join(f"{k} {v}" for k, v in res.counts.items() if v))
        print("method:  " + ", ".join(f"{k} {v}" for k, v in res.methods.items() if v))
        print(f"wrote {res.path}")
    return 0 if res.counts["optimal"] == res.n_users else 1


def _bench(args) -> int:
    from . import bench
    from .io import check_writable

    notions = _choices("--notions", args.notions, bench.notion_names(), bench.NOTIONS)
    utilities = _choices("--utilities", args.utilities, bench.UTILITIES, bench.UTILITIES)
    solvers = _choices("--solvers", args.solvers, bench.SOLVERS, bench.SOLVERS)
    baselines = _choices("--baselines", args.baselines, bench.BASELINES, bench.BASELINES)
    if args.sizes is None:
        sizes = tuple(d for d in bench.SIZES if d <= 16) if args.quick else bench.SIZES
    else:
        try:
            sizes = tuple(int(t) for t in args.sizes.split(","))
        except ValueError:
            sizes = ()
        if not sizes or min(sizes) < 2:
            raise ProblemError(f"--sizes {args.sizes!r}: need comma-separated integers >= 2")
    if not np.isfinite(args.cap) or args.cap <= 0:
        raise ProblemError(f"--cap {args.cap!r}: must be a positive number of seconds")
    out = check_writable(args.out, "--out", directory=True)
    print(bench.HEADER)
    print("-" * len(bench.HEADER))
    from tqdm import tqdm

    with tqdm(total=len(notions) * len(utilities) * len(sizes), desc="bench", unit="instance", file=sys.stderr,
              disable=not _progress(args.progress)) as bar:
        rows = bench.run(notions, utilities, sizes, solvers, baselines, cap=args.cap,
                         progress=lambda row: _print_above(bar, bench.format_row(row)), tick=bar.update)
    print()
    print("\n".join(bench.summary(rows)))
    paths = bench.write(rows, Path(out))
    print(f"wrote {', '.join(str(p) for p in paths)}")
    return 0


def _reproduce(args) -> int:

    from . import figures
    from .io import write_atomic

    ids = figures.figure_ids()
    if args.list:
        rows = [(fid, *figures.describe(fid)) for fid in ids]
        width = max(len(r[0]) for r in rows)
        for fid, paper, result, what in rows:
            print(f"{fid:<{width}}  {paper:<8}  {result:<14}  {what}")
        return 0
    wanted = args.figures or ids
    unknown = [f for f in wanted if f not in ids]
    if unknown:
        raise ProblemError(f"unknown figure {unknown[0]!r}; known: {', '.join(ids)}")
    if args.data_dir is not None:
        from .data import DATA_ENV, check_data_dir

        os.environ[DATA_ENV] = str(check_data_dir(args.data_dir, "--data-dir"))
    from .io import check_writable

    out = check_writable(args.out, "--out", directory=True)
    from tqdm import tqdm

    shown = _progress(args.progress)
    bar = tqdm(wanted, desc="reproduce", unit="fig", file=sys.stderr, disable=not shown)
    points = tqdm(desc="points", unit="pt", file=sys.stderr, disable=not shown, position=1, leave=False)
    token = figures.ON_POINT.set(points.update)
    try:
        for fid in bar:
            bar.set_postfix_str(fid, refresh=True)
            _reproduce_one(figures, fid, args.quick, out)
    finally:
        figures.ON_POINT.reset(token)
        points.close()
    # README: every figure of the registry that has a section in this directory, in registry order
    parts = ["# Reproduced figures", "", "Generated by `channelopt reproduce` (each section by the run that wrote it).", ""]
    parts += [(out / f"{fid}.md").read_text(encoding="utf-8") for fid in ids if (out / f"{fid}.md").exists()]
    write_atomic(out / "README.md", "\n".join(parts))
    return 0


def _print_above(bar, line: str) -> None:
    """Print a line on stdout without breaking a progress bar on stderr."""
    with bar.external_write_mode(file=sys.stdout):
        print(line, flush=True)


def _reproduce_one(figures, fid: str, quick: bool, out: Path) -> None:
    """Make one figure, write its CSV, PNG and README section, and print where they went."""
    from .io import write_atomic

    fig = figures.make(fid, quick=quick)
    paths = fig.write(out)
    print(f"{fid}: {', '.join(str(p) for p in paths)}")
    section = [f"## {fid}", "", fig.title, "", f"![{fid}]({fid}.png) — data: [{fid}.csv]({fid}.csv)", ""]
    for note in fig.notes:
        print(f"  note: {note}")
        section.append(f"- {note}")
    write_atomic(out / f"{fid}.md", "\n".join(section) + "\n")


def _param(text: str):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ProblemError(f"--param must read KEY=VALUE, got {text!r}")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def _audit_mechanism(args) -> int:
    """Exit 0: within claim; 1: violates claim; 3: inconclusive (black-box found no violation)."""
    from .implementations import ADAPTERS, audit_mechanism
    from .implementations.report import write_report

    if args.list:
        print("\n".join(ADAPTERS))
        return 0
    if args.report:
        write_report(args.report, quick=args.quick, progress=_progress(None))
        return 0
    if args.randomizer is None or args.d is None or args.epsilon is None:
        raise ProblemError("audit-mechanism needs a randomizer, --d and --epsilon (or --list / --report)")
    prior = None
    if args.prior is not None:
        try:
            prior = [float(v) for v in args.prior.split(",")]
        except ValueError:
            raise ProblemError(f"--prior must be comma-separated numbers, got {args.prior!r}") from None
    result = audit_mechanism(args.randomizer, args.d, args.epsilon, notions=args.notion or ["ldp"], prior=prior,
                             params=dict(_param(p) for p in args.param), method=args.method, samples=args.samples,
                             seed=args.seed, confidence=args.confidence)
    print(json.dumps(result.to_dict(), indent=2) if args.json else result)
    return {"within claim": 0, "violates claim": 1}.get(result.verdict, 3)


def main(argv=None) -> int:
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _on_sigterm)
    # workers killed by a signal leave semaphores that multiprocessing's resource tracker (a
    # child process, which inherits this variable) removes; its warning about them is not ours
    quiet = "ignore::UserWarning:multiprocessing.resource_tracker"
    if quiet not in os.environ.get("PYTHONWARNINGS", ""):
        os.environ["PYTHONWARNINGS"] = ",".join(filter(None, [os.environ.get("PYTHONWARNINGS"), quiet]))
    try:
        args = _parser().parse_args(argv)
        return {"solve": _solve, "audit": _audit, "reproduce": _reproduce, "verify": _verify,
                "theorems": _theorems, "analyze": _analyze, "bench": _bench,
                "sweep": _sweep, "batch": _batch, "audit-mechanism": _audit_mechanism}[args.command](args)
    except ChannelOptError as e:
        print(f"channelopt: error: {e}".replace("\n", " "), file=sys.stderr)
        return 2 if isinstance(e, ProblemError) else 1
    except BrokenPipeError:  # output closed early (e.g. piped into head): not an error of ours
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("channelopt: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("channelopt: terminated", file=sys.stderr)
        return 143
    except OSError as e:  # a full disk, a vanished directory: one line, temporary files already removed
        where = f" ({e.filename})" if getattr(e, "filename", None) else ""
        print(f"channelopt: error: {e.strerror or e}{where}", file=sys.stderr)
        return 1
    finally:
        stop_workers()


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every `finally` and cleanup runs."""


def _on_sigterm(signum, frame):
    raise Terminated()


def stop_workers() -> None:
    """Shut down joblib's reusable worker pool, if this process started one (no worker outlives
    the command, however it ends)."""
    reusable = sys.modules.get("joblib.externals.loky.reusable_executor")
    if reusable is not None and getattr(reusable, "_executor", None) is not None:
        reusable._executor.shutdown(wait=True, kill_workers=True)


if __name__ == "__main__":
    sys.exit(main())
