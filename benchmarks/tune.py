"""Tuning sweep for `auto`: every compiled single_pass configuration (block, unroll) and grid
against torch.sum and CUB, per dtype and size, timed as the issue's targets are judged (CUDA graph
replay interleaved with a foreign kernel up to 2^22 elements, see reducekit.bench.time_cuda_graph;
eager cold-L2 above). Prints, per cell, the best configuration and its ratio to torch.sum and CUB;
writes tune.json (with the GPU, SM count, compute capability and date of the run) and
tuning_sm<cc>.inc (the rows of csrc/tuning/tuning.h for the measured architecture, each with the figure
that chose it; for sm_90 copy it over csrc/tuning/tuning_sm90.inc).

    python benchmarks/tune.py --out DIR [--dtypes float32 int8 ...] [--sizes 2**12 ...]
    python benchmarks/tune.py --from-json benchmarks/results/h200/tune.json --out DIR   # rows only
"""
import argparse
import datetime
import json
import os
import textwrap

import torch

import reducekit
from reducekit.bench import DTYPES, GRAPH_MAX_N, GRAPH_TIMING, Buffers, time_cuda_eager, time_cuda_graph


DTYPE_ENUM = {"bool": "Bool", "uint8": "UInt8", "int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64",
              "float16": "Float16", "bfloat16": "BFloat16", "float32": "Float32", "float64": "Float64"}


def parse_config(key: str) -> tuple[int, int, int]:
    """'512x4@264' -> (block, unroll, grid)."""
    block, rest = key.split("x")
    unroll, grid = rest.split("@")
    return int(block), int(unroll), int(grid)


def run_info(tune: dict, source: str) -> dict:
    """GPU, SMs, compute capability (major*10+minor), date and graph timing of a tune.json, with
    notes for what an old tune.json (before these fields) lacks. Its compute capability is only
    assumed for the H100/H200 (sm_90), and the header says so; any other GPU without it is an error."""
    info = {"gpu": tune["gpu"], "sms": tune["sms"], "source": source, "notes": []}
    if "cc" in tune:
        info["cc"] = int(tune["cc"])
    elif "H100" in tune["gpu"] or "H200" in tune["gpu"]:
        info["cc"] = 90
        info["notes"].append(f"{source} does not record the compute capability: 9.0 assumed from the GPU name "
                             f"({tune['gpu']}).")
    else:
        raise SystemExit(f"{source} does not record the compute capability ('cc') of its {tune['gpu']}, so the rows' "
                         "min_cc is unknown; rerun benchmarks/tune.py on that GPU (it records 'cc' and 'date').")
    info["date"] = tune.get("date")
    if info["date"] is None:
        info["notes"].append(f"{source} does not record the date of the run.")
    # Runs before issue 8 timed graph mode with the calls back to back (PDL overlap allowed).
    info["graph_timing"] = tune.get("graph_timing", "chained")
    return info


def inc_header(info: dict) -> str:
    """Comment header of tuning_sm<cc>.inc: what was measured, where and how."""
    cc = info["cc"]
    when = f" on {info['date']}" if info["date"] else ""
    timing = ("interleaved with a foreign kernel" if info["graph_timing"] == "interleaved"
              else "chained: back-to-back calls, PDL overlap allowed")
    text = (f"sm_{cc} rows of kTuningTable, measured on the {info['gpu']} ({info['sms']} SMs, compute capability "
            f"{cc // 10}.{cc % 10}) by benchmarks/tune.py{when}; figures from {info['source']}. Per dtype, by "
            "increasing size: the fastest of the compiled single_pass configurations (block x unroll @ grid, 0 = one "
            f"wave) and CUB, timed as the targets are judged: CUDA graph replay ({timing}) up to "
            f"2^{GRAPH_MAX_N.bit_length() - 1} elements, eager cold-L2 above. Each row ends with its time and the "
            "torch.sum and CUB times of the same run. The row's second choice serves eager calls: the best single_pass "
            "configuration, never CUB, whose dispatch costs more host time than its GPU-time lead (csrc/tuning/tuning.h). Sizes "
            "between rows take the next row up; the last row of each dtype covers everything larger.")
    lines = [line for para in [text] + info["notes"] for line in textwrap.wrap(para, 97)]
    return "".join(f"// {line}\n" for line in lines) + "// clang-format off\n"


def inc_rows(results, cc: int, graph_label: str = "graph", date: str | None = None) -> list[str]:
    """kTuningTable rows for compute capability `cc` (their min_cc): per dtype and size, CUB where
    it beats the best single_pass configuration by more than 1%, else that configuration, launched
    with PDL unless the same configuration without PDL was faster; eager calls always take that
    single_pass configuration (csrc/tuning/tuning.h: CUB's host cost). Each row's comment names how
    its cell was timed (`graph_label` for graph cells, or the row's own timing and date where it
    was merged from an earlier run)."""
    by_dtype: dict[str, list] = {}
    for r in results:
        by_dtype.setdefault(r["dtype"], []).append(r)
    lines = []
    for dt, rows in by_dtype.items():
        rows.sort(key=lambda r: r["n"])
        for k, r in enumerate(rows):
            bt, pdl = r["configs"][r["best"]], True
            if r.get("best_without_pdl") is not None and r["best_without_pdl"] < bt:
                bt, pdl = r["best_without_pdl"], False
            b, u, g = parse_config(r["best"])
            eager = f"{{Method::SinglePass, {b}, {u}, {g}, {'true' if pdl else 'false'}}}"  # never CUB: tuning/tuning.h says why
            if r["cub"] < bt * 0.99:
                choice, t, what = "{Method::CubDevice, 0, 0, 0, false}", r["cub"], f"CUB; eager: {r['best']} {bt:.2f} us"
            else:
                choice, t = eager, bt
                what = r["best"] + ("" if pdl else " without PDL")
            max_n = "INT64_MAX" if k == len(rows) - 1 else str(r["n"])
            mode = r["mode"]
            if mode == "graph":
                mode = "graph" if r.get("graph_timing", graph_label) in ("interleaved", "graph") else "graph_chained"
            run = f" [merged from {r['date']}]" if r.get("date") and r.get("date") != date else ""
            lines.append(f"{{{cc}, DType::{DTYPE_ENUM[dt]}, {max_n}, {choice}, {eager}}},  // 2^{r['n'].bit_length() - 1} {mode} "
                         f"{t:.2f} us ({what}); torch.sum {r['torch']:.2f}, CUB {r['cub']:.2f}{run}")
    return lines


def write_inc(tune: dict, out_dir: str, source: str) -> str:
    """Writes tuning_sm<cc>.inc for a tune.json's rows into out_dir; returns its path."""
    info = run_info(tune, source)
    path = os.path.join(out_dir, f"tuning_sm{info['cc']}.inc")
    with open(path, "w") as f:
        graph_label = "graph" if info["graph_timing"] == "interleaved" else "graph_chained"
        f.write(inc_header(info) + "\n".join(inc_rows(tune["rows"], info["cc"], graph_label, info["date"])) + "\n// clang-format on\n")
    print(f"wrote {path}")
    return path


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--dtypes", nargs="+", default=["float32", "bfloat16", "int8", "int32", "float64"])
    p.add_argument("--sizes", nargs="+", type=lambda s: int(eval(s, {"__builtins__": {}})),
                   default=[2**k for k in range(12, 31, 2)])
    p.add_argument("--out", default=".")
    p.add_argument("--from-json", metavar="TUNE_JSON", help="no timing: write tuning_sm<cc>.inc from an earlier tune.json into --out")
    p.add_argument("--merge", metavar="OLD_TUNE_JSON",
                   help="keep the rows of an earlier run (same GPU) for the (dtype, size) cells this run does not measure; "
                        "each keeps its own date and graph timing, which its row comment shows")
    a = p.parse_args(argv)
    if a.from_json:
        os.makedirs(a.out, exist_ok=True)
        with open(a.from_json) as f:
            write_inc(json.load(f), a.out, a.from_json)
        return
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    sms = props.multi_processor_count
    meta = {"gpu": props.name, "sms": sms, "cc": props.major * 10 + props.minor,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "graph_timing": GRAPH_TIMING, "torch": torch.__version__, "cuda": torch.version.cuda}
    cold = 4 * props.L2_cache_size
    grids = [0, sms, 2 * sms, 4 * sms]

    results = []
    print(f"{props.name}, {sms} SMs, compute capability {props.major}.{props.minor}, {meta['date']}, torch {meta['torch']}; "
          f"graph timing: {GRAPH_TIMING}")
    print(f"{'dtype':9} {'N':>6} {'mode':5} {'torch':>9} {'cub':>9} {'default':>9} {'best':>9} {'config':>16} {'best/torch':>10} {'best/cub':>9} {'no PDL':>9}")
    for dname in a.dtypes:
        for n in a.sizes:
            bufs = Buffers(n, DTYPES[dname], dev, cold)
            mode = "graph" if n <= GRAPH_MAX_N else "eager"

            def t(fn):
                return time_cuda_graph(fn, bufs) if mode == "graph" else time_cuda_eager(fn, bufs, 0.15)[0]

            row = {"dtype": dname, "n": n, "mode": mode, "date": meta["date"], "graph_timing": GRAPH_TIMING, "torch": t(torch.sum),
                   "cub": t(lambda x: reducekit.sum(x, method="cub_device")), "auto": t(reducekit.sum), "configs": {}}
            for block, unroll in reducekit._C.single_pass_configs():
                for g in grids:
                    row["configs"][f"{block}x{unroll}@{g}"] = t(lambda x, b=block, u=unroll, g=g: torch.ops.reducekit._single_pass(x, b, u, g))
            best = min(row["configs"], key=row["configs"].get)
            row["best"] = best
            b, u, g = parse_config(best)
            row["best_without_pdl"] = t(lambda x: torch.ops.reducekit._single_pass(x, b, u, g, False))
            results.append(row)
            bt = row["configs"][best]
            print(f"{dname:9} 2^{n.bit_length() - 1:<4} {mode:5} {row['torch']:9.2f} {row['cub']:9.2f} {row['auto']:9.2f} {bt:9.2f} "
                  f"{best:>16} {bt / row['torch']:10.3f} {bt / row['cub']:9.3f} {row['best_without_pdl']:9.2f}", flush=True)
            del bufs
            torch.cuda.empty_cache()
    if a.merge:
        with open(a.merge) as f:
            old = json.load(f)
        if old["gpu"] != meta["gpu"]:
            raise SystemExit(f"--merge: {a.merge} was measured on {old['gpu']}, this run on {meta['gpu']}")
        measured = {(r["dtype"], r["n"]) for r in results}
        for r in old["rows"]:
            if (r["dtype"], r["n"]) not in measured:
                results.append(dict(r, date=r.get("date", old.get("date", "an earlier run, date not recorded")),
                                    graph_timing=r.get("graph_timing", old.get("graph_timing", "chained"))))
        meta["merged_from"] = a.merge
    os.makedirs(a.out, exist_ok=True)
    tune = dict(meta, rows=results)
    with open(os.path.join(a.out, "tune.json"), "w") as f:
        json.dump(tune, f, indent=1)
    write_inc(tune, a.out, "tune.json and tune.log of this run")


if __name__ == "__main__":
    main()
