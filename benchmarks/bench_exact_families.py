"""method="exact" by data family, against auto and CUB's RFA in the same run (issue 22).

    bash benchmarks/rfa/build.sh        # optional: CUB's RFA from CCCL main (benchmarks/rfa/)
    python benchmarks/bench_exact_families.py --out benchmarks/results/h100 [--quick]

writes results_exact_families.json and .md (reducekit/bench/exact_families.py documents the method
and the families). Exits 1 if a target is missed (the figures are written anyway).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from reducekit.bench import exact_families as ef  # noqa: E402

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true", help="2^20 and 2^22 only, few small sizes (a check of the script)")
    ap.add_argument("--dtypes", nargs="+", choices=ef.DTYPES, help="a subset of the dtypes (default: all)")
    ap.add_argument("--log2-sizes", nargs="+", type=int, help="a subset of the sizes, as log2 (default: 24 26 28)")
    ap.add_argument("--dims-only", action="store_true", help="only exact over dims (rows and columns) against auto")
    args = ap.parse_args()
    run = ef.run(quick=args.quick, dtypes=args.dtypes, sizes=[1 << k for k in args.log2_sizes] if args.log2_sizes else None,
                 dims_only=args.dims_only)
    for p in ef.write(run, args.out):
        print("wrote", p)
    print(ef.markdown(run))
    sys.exit(0 if all(t["met"] for t in ef.targets(run)) else 1)
