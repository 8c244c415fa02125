#!/usr/bin/env bash
# On the device (carry benchmarks/columns_lab/bin): the columns step of LAB_BINS's builds (bin/lab_NAME)
# on CASES, REPEATS times interleaved, into $OUT/$TAG.tgz (one NAME_rN.txt each; table.py / repeat_ab.py read them).
L=benchmarks/columns_lab
W=/tmp/${TAG:=cols_ab} && rm -rf "$W" && mkdir -p "$W"
for r in $(seq "${REPEATS:-2}"); do
  for b in ${LAB_BINS:?LAB_BINS: build names}; do
    timeout 200 $L/bin/lab_$b "${CASES:?CASES: a case file}" "${LAB_REPS:-9}" > "$W/${b}_r$r.txt" 2>&1
  done
done
tar -C "$W" -czf "$OUT/$TAG.tgz" .
