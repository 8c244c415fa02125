# Session 61's lab calls on the device (carry benchmarks/columns_lab/bin): the rows step of batched
# operators at 65-180 lanes under the rule and forced shapes; results packed into $OUT/$TAG.tgz (TAG default s61).
L=benchmarks/columns_lab
R=${ROWS_CASES:-$L/rows_s61.txt}
W=/tmp/${TAG:=s61} && rm -rf $W && mkdir -p $W
export LAB_BINS=new LAB_REPS=${LAB_REPS:-11}
LAB_KIND=rows LAB_CASES=$R OUT=$W/rows_rule bash $L/run.sh > /dev/null 2>&1
# ROWS_REPEATS: each forced shape that many times, interleaved (rows_lN, then rows_lN_r2, ...).
for r in $(seq ${ROWS_REPEATS:-1}); do
  x=$([ $r = 1 ] || echo _r$r)
  for l in ${ROWS_LANES:-1 2 4 8 16}; do LAB_KIND=rows LAB_ROWS_LANES=$l LAB_ROWS_STRIPES=-1 LAB_CASES=$R OUT=$W/rows_l$l$x bash $L/run.sh > /dev/null 2>&1; done
done
[ -n "${NO_STRIPES:-}" ] || LAB_KIND=rows LAB_ROWS_LANES=1 LAB_ROWS_STRIPES=1 LAB_CASES=$R OUT=$W/rows_s2 bash $L/run.sh > /dev/null 2>&1
tar -C $W -czf $OUT/$TAG.tgz .
grep -h "us  read" $W/*/lab.txt | awk '{print $1, $2, $3, $4, $7, $8, $9, $(NF-7), $(NF-3)}'
