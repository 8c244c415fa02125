"""Faults planted by another hand: each fault is a patch file (benchmarks/fault_patches/NN_name.patch,
written by a reader who had not read the tests, never using the RK_FAULT switch). This applies
each patch in turn to one copy of the tree, rebuilds it incrementally (ninja recompiles only what
the patch touched), runs the ORDINARY suite against it (pytest -x: stops at the first failure),
and reverts the patch. Caught: the suite failed or crashed; missed: it passed. The copy without a
patch runs the same suite with the same seed first, as the control.

    python benchmarks/fault_patches.py --out DIR [--where cpu ops exact host] [--only 01 07]
                                       [--pytest-args '-m "not perf"']

Writes DIR/fault_patches.md and DIR/fault_patches.json (the report format of faults.py).
"""
from __future__ import annotations

import argparse
import datetime
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from faults import COPY_IGNORE, classify, report, write_report  # noqa: E402

PATCH_DIR = os.path.join(HERE, "fault_patches")


def read_patch(path: str) -> dict:
    head = {}
    with open(path) as f:
        for line in f:
            if line.startswith("diff --git"):
                break
            m = re.match(r"#\s*(\w+):\s*(.*)", line)
            if m:
                head[m.group(1)] = m.group(2).strip()
    name = os.path.basename(path)[:-len(".patch")]
    return {"fault": name, "where": head.get("where", "?"), "what": head.get("what", ""), "path": path}


def sh(cmd, cwd, env=None, timeout=None):
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout + p.stderr


def build(src: str, log: str) -> bool:
    code, out = sh([sys.executable, "setup.py", "build_ext", "--inplace"], src)
    with open(log, "w") as f:
        f.write(out)
    return code == 0


def suite(src: str, pytest_args: list[str], seed: str, timeout: int, log: str) -> tuple:
    keep = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and os.path.abspath(p) != ROOT]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, *keep]), REDUCEKIT_SEED=seed, PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *pytest_args]
    t0 = time.time()
    try:
        code, out = sh(cmd, os.path.join(src, "tests"), env=env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        code = None
    with open(log, "w") as f:
        f.write(out)
    return code, out, round(time.time() - t0, 1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--patches", default=PATCH_DIR)
    p.add_argument("--where", nargs="+", help="only patches whose '# where:' is one of these (cpu ops exact host cuda)")
    p.add_argument("--only", nargs="+", help="only patches whose name starts with one of these")
    p.add_argument("--timeout", type=int, default=1200, help="seconds per suite")
    p.add_argument("--no-control", action="store_true")
    p.add_argument("--pytest-args", default='-m "not perf" --timeout=120')
    a = p.parse_args()
    import torch

    patches = [read_patch(f) for f in sorted(glob.glob(os.path.join(a.patches, "*.patch")))]
    if a.where:
        patches = [q for q in patches if q["where"] in a.where]
    if a.only:
        patches = [q for q in patches if any(q["fault"].startswith(o) for o in a.only)]
    seed = os.environ.get("REDUCEKIT_SEED") or str(int.from_bytes(os.urandom(4), "little") & 0x7FFFFFFF)
    work = os.path.join(ROOT, "faults-work")
    src = os.path.join(work, "patched")
    logs = os.path.join(a.out, "logs")
    os.makedirs(logs, exist_ok=True)
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(ROOT, src, ignore=COPY_IGNORE)
    # The copy lies inside ROOT's repository (faults-work/, git-ignored): without a repository of its
    # own, `git apply` there would resolve paths against ROOT's top level and skip every file
    # outside the copy's directory, silently (exit 0), and no fault would be planted.
    sh(["git", "init", "-q"], src)
    pytest_args = shlex.split(a.pytest_args)
    rows = []
    todo = ([{"fault": "none", "where": "", "what": "no patch: the control", "path": None}] if not a.no_control else []) + patches
    for q in todo:
        r = {k: q[k] for k in ("fault", "where", "what")}
        if q["path"]:
            code, out = sh(["git", "apply", q["path"]], src)
            if code == 0:  # planted: the reverse applies (each of its hunks is in the copy)
                code, out = sh(["git", "apply", "-R", "--check", q["path"]], src)
            if code != 0:
                r.update(result="patch failed", caught_by="", detail=out.strip()[-200:])
                rows.append(r)
                print(f"{q['fault']:40} patch failed", flush=True)
                continue
        t0 = time.time()
        ok = build(src, os.path.join(logs, f"{q['fault']}.build.log"))
        r["build_s"] = round(time.time() - t0, 1)
        if not ok:
            r.update(result="build failed", caught_by="", detail="see build log")
        else:
            code, out, secs = suite(src, pytest_args, seed, a.timeout, os.path.join(logs, f"{q['fault']}.tests.log"))
            r.update(classify(q["fault"], out, code, a.timeout), suite_s=secs, exit=code)
        if q["path"]:
            sh(["git", "apply", "-R", q["path"]], src)
        rows.append(r)
        print(f"{q['fault']:40} {r['result']:18} {r.get('caught_by', '')} {r.get('suite_s', '')} s", flush=True)
    env = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "no GPU", "seed": seed, "pytest_args": pytest_args}
    md = report(rows, env, "Faults planted by another hand (patches) against the ordinary test suite",
                "benchmarks/fault_patches.py")
    sys.exit(write_report(a.out, "fault_patches", rows, env, a.no_control, md))

if __name__ == "__main__":
    main()
