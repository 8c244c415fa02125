"""The columns lab's output (run.sh's lab.txt) as one line a case: each build's or variant's time
over a base's (default: the last section), with the base's time, the read of the same bytes, and the
base's loads and lanes a thread. Cases missing from a section print '-'.

    python3 benchmarks/columns_lab/table.py lab.txt ["lab_new 0 0"]
"""
import argparse
import collections
import re

LINE = re.compile(r"(\S+)\s+(\S+)\s+B=(\d+)\s+R=(\d+)\s+C=(\d+)\s+(\S+)\s+TX=(\d+)\s+TY=(\d+)\s+TB=(\d+)\s+LPT=(\d+)\s+"
                  r"tiles_y=(\d+)\s+blocks=(\d+)\s+([\d.]+) us\s+read\s+([\d.]+)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lab")
    ap.add_argument("base", nargs="?", help="the section ('## NAME' line) that is the base (default: the last)")
    a = ap.parse_args()
    t = collections.OrderedDict()
    sections = []
    v = None
    for line in open(a.lab):
        if line.startswith("## "):
            v = line[3:].strip()
            sections.append(v)
            continue
        m = LINE.match(line)
        if m and v is not None:
            key = " ".join(m.group(1, 2, 3, 4, 5))
            t.setdefault(key, {})[v] = (float(m.group(13)), float(m.group(14)), m.group(6), int(m.group(10)), int(m.group(12)))
    base = a.base or sections[-1]
    print("case (op dtype B R C) | base us | read us | loads LPT | " + " | ".join(sections))
    for k, d in t.items():
        if base not in d:
            continue
        b = d[base]
        cells = " ".join(f"{d[s][0] / b[0]:5.2f}" if s in d else "    -" for s in sections)
        print(f"{k:40s} {b[0]:8.1f} {b[1]:8.1f} {b[2]} L{b[3]} {cells}")


if __name__ == "__main__":
    main()
