"""One line per case of a traced lab run (build.sh with LAB_DEFS=-DRK_EXACT_TRACE, run.sh with several
LAB_BINS): exact's time in each build, the mismatches against the checked path, and from each
build's timeline the median and last block's end of values and the row's end (us since the first
block's entry).   python3 benchmarks/exact_lab/summary.py $OUT/lab_TAG.txt"""
import re,os,sys
t=open(sys.argv[1]).read().split('## lab_')
res={}; names=[]
for blk in t[1:]:
    name=blk.split('\n')[0].strip(); names.append(name)
    for m in re.finditer(r'^(\S+)\s+2\^(\d+) fam(\d)\s+read\s+([\d.]+) us\s+exact\s+([\d.]+) us.*mismatch (\d+)/(\d+).*\n\s+trace: (.*)$',blk,re.M):
        dt,lg,f,rd,ex,mm,nb,tr=m.groups()
        te=re.search(r'values_end ([\d.]+)/([\d.]+)',tr); re_=re.search(r'row_end ([\d.]+)',tr)
        res[(dt,lg,f,name)]=(float(ex),int(mm),float(te.group(1)),float(te.group(2)),float(re_.group(1)) if re_ else 0,float(rd))
keys=sorted(set(k[:3] for k in res))
print("dtype lg fam | read | exact", names, "| mism | valend med | valend max | row_end")
for k in keys:
    r=[res.get(k+(n,)) for n in names]
    if None in r: continue
    print(*k, f"| {r[0][5]:6.1f} |", ' '.join(f"{x[0]:6.1f}" for x in r), '|', ','.join(str(x[1]) for x in r), '|', ' '.join(f"{x[2]:6.1f}" for x in r), '|', ' '.join(f"{x[3]:6.1f}" for x in r), '|', ' '.join(f"{x[4]:6.1f}" for x in r))
