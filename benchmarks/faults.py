"""Planted-fault campaign: builds reducekit once per planted fault (csrc/core/faults.h,
REDUCEKIT_FAULT=<name>) and runs the ORDINARY test suite against each build: no test is written
for a fault. A fault is caught when the suite fails (or the process crashes); missed when the
suite passes. The normal build runs the same suite with the same data seed as the control: the
campaign means something only if the control passes.

    python benchmarks/faults.py --out DIR [--faults drop_vec_tail index32 ...] [--jobs 4]

Writes DIR/faults.md and DIR/faults.json. The CUDA faults need a GPU.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import datetime
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COPY_IGNORE = shutil.ignore_patterns(".git", "build", "*.so", "*.o", "__pycache__", ".pytest_cache", ".whl",
                                     "*.egg-info", "out", "faults-work")


def build(name: str, work: str, build_jobs: int) -> dict:
    """A copy of the tree built in place with fault `name`; returns the copy's path and timing."""
    src = os.path.join(work, name)
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(ROOT, src, ignore=COPY_IGNORE)
    env = dict(os.environ, REDUCEKIT_FAULT=name, MAX_JOBS=str(build_jobs))
    t0 = time.time()
    p = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=src, env=env, capture_output=True, text=True)
    with open(os.path.join(work, f"{name}.build.log"), "w") as f:
        f.write(p.stdout + p.stderr)
    ok = p.returncode == 0
    if ok:  # the copy must import as the fault build, not the normal one
        chk = subprocess.run([sys.executable, "-c", "import reducekit; print(reducekit._C.fault)"], cwd=work,
                             env=dict(os.environ, PYTHONPATH=src), capture_output=True, text=True)
        ok = chk.stdout.strip() == name
    return {"fault": name, "src": src, "built": ok, "build_s": round(time.time() - t0, 1)}


def run_suite(b: dict, work: str, pytest_args: list[str], timeout: int, seed: str) -> dict:
    """The ordinary suite against one build, stopping at its first failure."""
    r = dict(b)
    if not b["built"]:
        r.update(result="build failed", caught_by="", detail="see build log")
        return r
    # The fault build's source first, then the other entries (wheels carried to the device, such
    # as expecttest for OpInfo); this checkout's own path is dropped, so its build cannot shadow.
    keep = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.abspath(p) != ROOT]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([b["src"], *keep]), REDUCEKIT_SEED=seed, PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *pytest_args]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, cwd=os.path.join(b["src"], "tests"), env=env, capture_output=True, text=True, timeout=timeout)
        out, code = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        code = None
    r["suite_s"] = round(time.time() - t0, 1)
    with open(os.path.join(work, f"{b['fault']}.tests.log"), "w") as f:
        f.write(out)
    r["exit"] = code
    r.update(classify(b["fault"], out, code, timeout))
    return r


def classify(fault: str, out: str, code, timeout: int = 0) -> dict:
    """What a suite's output and exit code (None: the suite timed out) say about a fault build."""
    # Test ids may hold spaces (parametrized shapes such as "(65539, 5)"): up to " - " or the end.
    failed = re.findall(r"^FAILED (.+?)(?: - (.*))?$", out, flags=re.M)
    passed = re.search(r"(\d+) passed", out)
    r = {"passed_before": int(passed.group(1)) if passed else 0}
    if code is None:
        # Not a catch: a suite cut short says nothing about the tests it did not reach (a test that
        # hangs is ended by pytest-timeout and counted below).
        r.update(result="timeout (not judged)", caught_by="", detail=f"suite still running after {timeout} s")
    elif code == 0:
        r.update(result="missed" if fault != "none" else "passed", caught_by="", detail=out.strip().splitlines()[-1] if out.strip() else "")
    elif "+ Timeout +" in out:  # pytest-timeout ended a hung test (and the process with it)
        hung = re.findall(r'File "[^"]*/(test_\w+\.py)", line \d+, in (test_\w+)', out)
        r.update(result="caught (test timed out)", caught_by="::".join(hung[-1]) if hung else "",
                 detail="a test hung; pytest-timeout ended the run")
    elif code == 1 and failed:
        r.update(result="caught" if fault != "none" else "FAILED", caught_by=failed[0][0], detail=(failed[0][1] or "")[:200])
    elif code < 0 or code > 128:
        r.update(result="caught (crash)" if fault != "none" else "CRASHED", caught_by="", detail=f"exit {code}: " + out.strip()[-200:])
    else:
        r.update(result=f"error (exit {code})", caught_by="", detail=out.strip()[-300:])
    return r


def reclassify(out_dir: str) -> int:
    """Rebuilds faults.json and faults.md in out_dir from its rows and the suites' logs (out_dir/logs/
    <fault>.tests.log), with the current classify(): no build, no GPU."""
    with open(os.path.join(out_dir, "faults.json")) as f:
        data = json.load(f)
    for r in data["rows"]:
        log = os.path.join(out_dir, "logs", f"{r['fault']}.tests.log")
        if not os.path.exists(log) or r.get("result") == "build failed":
            continue
        code = r.get("exit")
        if code is None and "exit" not in r:  # runs before the exit code was recorded
            m = re.search(r"exit (-?\d+)", r.get("result", "") + " " + r.get("detail", ""))
            code = int(m.group(1)) if m else (0 if r["result"] in ("missed", "passed") else 1)
        with open(log) as f:
            r.update(classify(r["fault"], f.read(), code))
    with open(os.path.join(out_dir, "faults.json"), "w") as f:
        json.dump(data, f, indent=1)
    md = report(data["rows"], data["env"])
    with open(os.path.join(out_dir, "faults.md"), "w") as f:
        f.write(md)
    print(md)
    missed = [r for r in data["rows"] if r["fault"] != "none" and not r["result"].startswith("caught")]
    return 0 if not missed and any(r["fault"] == "none" and r["result"] == "passed" for r in data["rows"]) else 1


def report(rows: list[dict], env: dict, title: str = "Planted faults against the ordinary test suite",
           tool: str = "benchmarks/faults.py") -> str:
    faults = [r for r in rows if r["fault"] != "none"]
    caught = [r for r in faults if r["result"].startswith("caught")]
    control = next((r for r in rows if r["fault"] == "none"), None)
    out = [f"# {title}", "",
           f"Generated by `{tool}` on {env['date']} ({env['gpu']}, torch {env['torch']}); data seed "
           f"REDUCEKIT_SEED={env['seed']}; suite: `pytest -x {shlex.join(env['pytest_args'])}` (stops at the first failure).", "",
           f"**{len(caught)} of {len(faults)} faults caught.** Control (normal build, same suite, same seed): "
           f"**{control['result'] if control else 'not run'}**" + (f" ({control['detail']})" if control else "") + ".", "",
           "| fault | what it plants | result | first failing test | its message | tests passed first | s |",
           "|---|---|---|---|---|---:|---:|"]
    for r in faults:
        msg = r.get("detail", "").replace("|", "\\|").replace("\n", " ")
        out.append(f"| `{r['fault']}` | {r['what']} | {r['result']} | `{r['caught_by']}` | {msg} | {r.get('passed_before', '')} "
                   f"| {r.get('suite_s', '')} |")
    return "\n".join(out) + "\n"


def write_report(out_dir: str, stem: str, rows: list[dict], env: dict, no_control: bool, md: str | None = None) -> int:
    """Writes out_dir/<stem>.json and <stem>.md (report() unless `md` is given), prints the report,
    and returns the campaign's exit code: 0 when every fault was caught and the control passed."""
    with open(os.path.join(out_dir, f"{stem}.json"), "w") as f:
        json.dump({"env": env, "rows": [{k: v for k, v in r.items() if k != "src"} for r in rows]}, f, indent=1)
    md = report(rows, env) if md is None else md
    with open(os.path.join(out_dir, f"{stem}.md"), "w") as f:
        f.write(md)
    print(md)
    missed = [r for r in rows if r["fault"] != "none" and not r["result"].startswith("caught")]
    control_ok = no_control or any(r["fault"] == "none" and r["result"] == "passed" for r in rows)
    return 0 if not missed and control_ok else 1


def fault_list() -> dict[str, str]:
    """name -> what it plants, read from csrc/core/faults.h (as setup.py reads it): no build
    is needed to start a campaign."""
    with open(os.path.join(ROOT, "csrc", "core", "faults.h")) as f:
        text = f.read()
    return dict(re.findall(r'^\s*X\(\w+, "([a-z0-9_]+)",\s*(?:\\\s*)?"((?:[^"\\]|\\.)*)"', text, flags=re.M))


def main():
    all_faults = fault_list()
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--reclassify", action="store_true",
                   help="no builds: re-read --out's faults.json and logs/ with the current classifier and rewrite the report")
    p.add_argument("--faults", nargs="+", default=[f for f in all_faults if f != "none"], choices=list(all_faults))
    p.add_argument("--jobs", type=int, default=4, help="suites run at once (they share the GPU)")
    p.add_argument("--build-jobs", type=int, default=4, help="compiler processes per build (builds run --jobs at once)")
    p.add_argument("--timeout", type=int, default=900, help="seconds per suite")
    p.add_argument("--no-control", action="store_true", help="skip the normal-build control run")
    p.add_argument("--pytest-args", default='-m "not perf" --timeout=60',
                   help="selection and options passed to pytest: the ordinary suite, each test ended after 60 s")
    a = p.parse_args()
    if a.reclassify:
        sys.exit(reclassify(a.out))
    import torch

    pytest_args = shlex.split(a.pytest_args)
    seed = os.environ.get("REDUCEKIT_SEED") or str(int.from_bytes(os.urandom(4), "little") & 0x7FFFFFFF)
    work = os.path.join(ROOT, "faults-work")
    os.makedirs(work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    names = (["none"] if not a.no_control else []) + a.faults
    t0 = time.time()
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        builds = list(pool.map(lambda n: build(n, work, a.build_jobs), names))
    print(f"built {sum(b['built'] for b in builds)} of {len(builds)} in {time.time() - t0:.0f} s", flush=True)
    rows = []
    with cf.ThreadPoolExecutor(a.jobs) as pool:
        futs = {pool.submit(run_suite, b, work, pytest_args, a.timeout, seed): b for b in builds}
        for f in cf.as_completed(futs):
            r = f.result()
            r["what"] = all_faults[r["fault"]]
            rows.append(r)
            print(f"{r['fault']:22} {r['result']:18} {r['caught_by']} {r.get('suite_s', '')} s", flush=True)
    rows.sort(key=lambda r: names.index(r["fault"]))
    env = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU", "seed": seed, "pytest_args": pytest_args}
    sys.exit(write_report(a.out, "faults", rows, env, a.no_control))


if __name__ == "__main__":
    main()
