"""Solver-speed benchmark behind `channelopt bench` (see channelopt/bench.py for what is timed).

    python benchmarks/bench_solvers.py [--quick] [--cap 10] [--out benchmarks/results]

Writes bench_solvers.csv, bench_solvers.png (log-log total time vs d, one panel per notion and
utility) and bench_solvers.txt (the table and the target summary) to --out.
"""

from __future__ import annotations

import argparse
import io
from pathlib import Path

from channelopt import bench


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="d in 4..16 only")
    ap.add_argument("--cap", type=float, default=10.0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = ap.parse_args(argv)
    sizes = tuple(d for d in bench.SIZES if d <= 16) if args.quick else bench.SIZES
    text = io.StringIO()

    def show(line):
        print(line, flush=True)
        text.write(line + "\n")

    show(bench.HEADER)
    show("-" * len(bench.HEADER))
    rows = bench.run(sizes=sizes, cap=args.cap, progress=lambda r: show(bench.format_row(r)))
    show("")
    for line in bench.summary(rows):
        show(line)
    out = Path(args.out)
    paths = bench.write(rows, out, stem="bench_solvers")
    (out / "bench_solvers.txt").write_text(text.getvalue())
    print(f"wrote {', '.join(map(str, paths))}, {out / 'bench_solvers.txt'}")


if __name__ == "__main__":
    main()
