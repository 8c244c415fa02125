"""One line a case of a lab run with several builds (run.sh with LAB_BINS): each build's exact time
and ratio to the plain read of the same bytes, in the order the builds ran ('!' after a build whose
bits differed from the checked path's).   python3 benchmarks/exact_lab/table.py OUT/lab_TAG.txt ..."""
import collections
import re
import sys

LINE = re.compile(r'(\S+)\s+2\^(\d+) fam(\d)\s+read\s+([\d.]+) us\s+exact\s+([\d.]+) us\s+ratio\s+([\d.]+).*mismatch (\d+)/')

for fn in sys.argv[1:]:
    cases, names, build = collections.OrderedDict(), [], None
    for line in open(fn):
        if line.startswith('## lab_'):
            build = line.split('lab_', 1)[1].strip()
            names.append(build)
            continue
        m = LINE.match(line)
        if m:
            cases.setdefault(m.group(1, 2, 3), []).append((float(m.group(5)), float(m.group(6)), int(m.group(7))))
    print(fn)
    print('dtype log2 family |', ' '.join(f'{n:>12}' for n in names))
    for k, v in cases.items():
        print(' '.join(k), '|', ' '.join(f'{e:6.1f}/{r:4.2f}' + ('!' if mm else ' ') for e, r, mm in v))
