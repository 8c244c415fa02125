"""The rows lab's variants side by side (benchmarks/columns_lab/dev_rows.sh's rows_NAME_rN/lab.txt,
dev_s61.sh's rows_NAME/lab.txt):
one line a case, each variant's median time over its repeats with its shape (W/LPT/stripes, "s" for
the strided select form, "xN" N blocks a row), the read of the same bytes, each variant's time over
the first's (the rule's where there is one), and
whether every variant and repeat printed the same hash (the same bits).

    python3 benchmarks/columns_lab/rows_table.py DIR
"""
import collections
import glob
import os
import re
import statistics
import sys

LINE = re.compile(r"(\S+)\s+(\S+)\s+B=(\d+)\s+R=(\d+).*rows W=(\d+)\s+LPT=(\d+)\s+stripes=(\d)\s+nseg=(\d+)\s*(sel)?.*?"
                  r"([\d.]+) us\s+read\s+([\d.]+) us.*hash (\w+)")
SIZE = {"f32": 4, "f64": 8, "bf16": 2, "f16": 2, "i32": 4, "i8": 1}


def load(d):
    """(variant names, rule first where present; {(op, dtype, K, L): {name: [(us, read us, shape, hash), ...]}})."""
    runs = collections.defaultdict(lambda: collections.defaultdict(list))
    order = []
    for f in sorted(glob.glob(os.path.join(d, "rows_*", "lab.txt"))):  # rows_NAME or rows_NAME_rN (a repeat)
        name = re.match(r"rows_(.+?)(?:_r\d+)?$", os.path.basename(os.path.dirname(f))).group(1)
        if name not in order:
            order.append(name)
        for line in open(f):
            m = LINE.match(line)
            if m:
                shape = f"{m[5]}/{m[6]}/{m[7]}" + ("s" if m[9] else "") + (f"x{m[8]}" if m[8] != "1" else "")
                runs[(m[1], m[2], int(m[3]), int(m[4]))][name].append((float(m[10]), float(m[11]), shape, m[12]))
    if "rule" in order:  # the baseline: the build's own rule
        order.insert(0, order.pop(order.index("rule")))
    return order, runs


def lanes_of(dtype: str, L: int) -> int:
    return -(-L // (64 // SIZE[dtype]))


def main(d):
    order, runs = load(d)
    print("case".ljust(32), *[n.rjust(16) for n in order], "read", *[f"{n}/{order[0]}" for n in order[1:]], "bits")
    for k, v in runs.items():
        lanes = lanes_of(k[1], k[3])
        med = {n: statistics.median(t[0] for t in v[n]) for n in order if n in v}
        cells = [f"{med[n]:.1f}({v[n][0][2]})" if n in v else "-" for n in order]
        rd = statistics.median(t[1] for n in v for t in v[n])
        ratios = [f"{med[n] / med[order[0]]:.2f}" if n in med and order[0] in med else "-" for n in order[1:]]
        same = len({t[3] for n in v for t in v[n]}) == 1
        print(f"{k[0]} {k[1]} K={k[2]} lanes={lanes}".ljust(32), *[c.rjust(16) for c in cells], f"{rd:.1f}", *ratios,
              "same" if same else "DIFFER")


if __name__ == "__main__":
    main(sys.argv[1])
