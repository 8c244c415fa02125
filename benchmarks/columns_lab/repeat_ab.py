"""A/B of the columns lab's variants run in repeats (run.sh with LAB_VARIANTS naming each variant more
than once, interleaved): per case the mean of each variant's repeats over the base's, and the
geometric means over the cases whose launch shape the variant changed (lanes a thread), by the
rows' alignment (C x 4 bytes a multiple of 16: the 4-byte cases' rows) and by the base's time.

    python3 benchmarks/columns_lab/repeat_ab.py lab.txt "lab_new 0 0 0 0" "lab_new 0 0 0 2" ["lab_new 0 0 0 4" ...]
"""
import argparse
import collections
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from table import LINE  # noqa: E402


def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lab")
    ap.add_argument("base")
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--split-us", type=float, default=40.0, help="the base's time that splits small from large cases")
    a = ap.parse_args()
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    v = None
    for line in open(a.lab):
        if line.startswith("## "):
            v = line[3:].strip()
            continue
        m = LINE.match(line)
        if m and v is not None:
            t[" ".join(m.group(1, 2, 3, 4, 5))][v].append((float(m.group(13)), int(m.group(10))))
    spread = sorted(max(x[0] for x in d[a.base]) / min(x[0] for x in d[a.base]) for d in t.values() if d[a.base])
    print(f"{len(t)} cases; the base's repeats differ by {spread[len(spread) // 2]:.3f} in the median case, "
          f"{spread[-1]:.3f} at most")
    for var in a.variants:
        print(f"\n## {var} / {a.base} (mean of repeats), cases whose lanes a thread changed")
        groups = collections.defaultdict(list)
        worst = []
        for k, d in t.items():
            if not d[a.base] or not d[var] or d[var][0][1] == d[a.base][0][1]:
                continue
            base = sum(x[0] for x in d[a.base]) / len(d[a.base])
            r = sum(x[0] for x in d[var]) / len(d[var]) / base
            C = int(k.split()[-1])
            groups[("aligned" if C % 4 == 0 else "misaligned", base >= a.split_us)].append(r)
            groups[("all", None)].append(r)
            worst.append((r, k, [round(x[0] / base, 3) for x in d[var]]))
        for (al, big), rs in sorted(groups.items(), key=lambda kv: str(kv[0])):
            size = "" if big is None else (f" from {a.split_us:g} us" if big else f" under {a.split_us:g} us")
            print(f"{al}{size}: {len(rs)} cases, geometric mean {gm(rs):.3f}, range {min(rs):.2f}-{max(rs):.2f}")
        for r, k, reps in sorted(worst)[-3:]:
            print(f"  slowest: {k} {r:.3f} (repeats {reps})")


if __name__ == "__main__":
    main()
