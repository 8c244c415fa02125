#!/usr/bin/env bash
# On the device (carry benchmarks/columns_lab/bin): the lab's rows step (LAB_KIND=rows) on CASES
# under each of VARIANTS, "name:VAR=value,VAR=value ..." (e.g. "rule:X=0 tree:LAB_ROWS_SELECT=-1"),
# REPEATS times interleaved; results packed into $OUT/$TAG.tgz, one rows_NAME_rN/lab.txt each
# (benchmarks/columns_lab/rows_table.py reads them).
L=benchmarks/columns_lab
W=/tmp/${TAG:=rows} && rm -rf "$W" && mkdir -p "$W"
export LAB_BINS=new LAB_REPS=${LAB_REPS:-9} LAB_KIND=rows
for r in $(seq "${REPEATS:-2}"); do
  for v in ${VARIANTS:?VARIANTS: name:VAR=value,... entries}; do
    env $(tr ',' ' ' <<<"${v#*:}") LAB_CASES="${CASES:?CASES: a case file}" OUT="$W/rows_${v%%:*}_r$r" bash $L/run.sh >/dev/null 2>&1
  done
done
tar -C "$W" -czf "$OUT/$TAG.tgz" .
