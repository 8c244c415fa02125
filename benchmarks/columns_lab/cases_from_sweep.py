"""The random-shape sweep's single-columns-step cases (benchmarks/sweep.py's draw, the seeds given)
as lines of the columns lab's case file: op dtype B R C (bool cases, which the lab does not build,
are left out). Needs reducekit's extension (the CPU build will do: dims_plan is host code).

    python benchmarks/columns_lab/cases_from_sweep.py --seeds 21 22 23 24 > benchmarks/columns_lab/sweep_cases.txt
"""
import argparse
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import sweep  # noqa: E402
from tune_columns import columns_step  # noqa: E402

NAMES = {"bfloat16": "bf16", "float16": "f16", "float32": "f32", "float64": "f64", "int32": "i32", "int8": "i8"}

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--seeds", type=int, nargs="+", default=[21, 22, 23, 24])
ap.add_argument("--cases", type=int, default=400)
a = ap.parse_args()
for seed in a.seeds:
    rng = random.Random(seed)
    for _ in range(a.cases):
        case = sweep.draw(rng, None)
        bcr = columns_step(case)
        if bcr is None or case["dtype"] not in NAMES:
            continue
        print(case["op"], NAMES[case["dtype"]], *bcr)
