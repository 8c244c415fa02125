"""Builds of the columns lab side by side (dev_cols_ab.sh's NAME_rN.txt): per case the mean of each
build's repeats over the first build's, whether every build printed the same hash (the same bits),
the first build's spread between repeats, and the geometric mean of each ratio over the cases.

    python3 benchmarks/columns_lab/builds_ab.py DIR BASE OTHER [OTHER ...]   # build names, e.g. mb2 mb3 mb4
"""
import collections
import glob
import math
import os
import re
import statistics
import sys

LINE = re.compile(r"(\S+)\s+(\S+)\s+B=(\d+)\s+R=(\d+)\s+C=(\d+)\s+(\w+)\s.*?([\d.]+) us\s+read\s+([\d.]+) us.*hash (\w+)")


def main(d, names):
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    hashes = collections.defaultdict(set)
    for f in sorted(glob.glob(os.path.join(d, "*_r*.txt"))):
        b = re.match(r"(.+)_r\d+\.txt$", os.path.basename(f)).group(1)
        for line in open(f):
            m = LINE.match(line)
            if m:
                k = m.groups()[:6]
                t[k][b].append(float(m[7]))
                hashes[k].add(m[9])
    base, others = names[0], names[1:]
    ratios = {o: [] for o in others}
    print("case".ljust(42), f"{base} us", *[f"{o}/{base}" for o in others], "bits", f"{base} spread")
    for k, v in t.items():
        a = statistics.mean(v[base])
        rs = [statistics.mean(v[o]) / a for o in others]
        for o, r in zip(others, rs):
            ratios[o].append(r)
        print(" ".join(k).ljust(42), f"{a:8.1f}", *[f"{r:8.2f}" for r in rs], "same" if len(hashes[k]) == 1 else "DIFFER",
              f"{max(v[base]) / min(v[base]):.2f}")
    print("geometric mean", *[f"{o}: {math.exp(sum(map(math.log, r)) / len(r)):.3f}" for o, r in ratios.items()], f"({len(t)} cases)")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
