#!/usr/bin/env python3
"""Build and run the MPI-level tests listed in tests/mpi/testlist.

Works with any MPI (Skein, MPICH, Open MPI): the compiler and the launch
command are parameters.  Examples:

  # Skein (adapt the workers option to the launcher's real one)
  tests/mpi/run_testlist.py --mpicc build/bin/mpicc \
      --launch 'build/bin/skeinrun -n {ranks} --workers {workers} {exe} {args}'

  # Debian's MPICH, small runs only
  tests/mpi/run_testlist.py --mpicc mpicc.mpich \
      --launch 'mpiexec.mpich -n {ranks} {exe} {args}' --max-ranks 16

The launch template may use {ranks}, {workers}, {procs}, {exe} and {args}
({procs}: the line's procs= option, 1 without; other MPIs run one process per rank).
Exit status: 0 if every selected run met its expectation, 1 otherwise.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_testlist(path):
    runs = []
    with open(path) as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 4)
            if len(parts) < 5:
                raise SystemExit(f"{path}:{lineno}: need at least 5 fields: {line}")
            name, src, ranks, workers, rest = parts
            opts = {}
            expect = rest
            while True:
                m = re.search(r"\s+(flags|args|procs|env|nosan)=(\S*)\s*$", expect)  # nosan: sanitizer builds only
                if not m:
                    break
                opts[m.group(1)] = [x for x in m.group(2).split(",") if x]
                expect = expect[:m.start()]
            expect = expect.strip()
            if not (expect == "pass" or re.fullmatch(r"exit=\d+", expect) or expect.startswith("fail:")):
                raise SystemExit(f"{path}:{lineno}: bad expectation '{expect}'")
            runs.append(dict(name=name, src=src, ranks=int(ranks), workers=int(workers),
                             expect=expect, flags=opts.get("flags", []), args=opts.get("args", []),
                             procs=int((opts.get("procs") or ["1"])[0]),
                             env=opts.get("env", []), line=lineno))
    return runs


def build(mpicc, src, flags, builddir, cflags):
    exe = os.path.join(builddir, os.path.splitext(src)[0] + ("-" + "-".join(f.strip("-") for f in flags) if flags else ""))
    if os.path.exists(exe) and os.path.getmtime(exe) >= max(
            os.path.getmtime(os.path.join(HERE, src)), os.path.getmtime(os.path.join(HERE, "mpitest.h"))):
        return exe, None
    cmd = shlex.split(mpicc) + shlex.split(cflags) + flags + ["-o", exe, os.path.join(HERE, src)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        return None, p.stdout
    return exe, (p.stdout or None)


def judge(run, rc, out, timed_out):
    prog = os.path.splitext(run["src"])[0]
    if timed_out:
        return False, "timeout"
    fails = [l for l in out.splitlines() if l.startswith("FAIL ")]
    if fails:
        return False, fails[0]
    e = run["expect"]
    if e == "pass":
        if rc != 0:
            return False, f"exit code {rc} (expected 0)"
        if not re.search(r"^PASS %s$" % re.escape(prog), out, re.M):
            return False, f"no 'PASS {prog}' line"
        return True, ""
    if e.startswith("exit="):
        want = int(e[5:])
        return (rc == want), ("" if rc == want else f"exit code {rc} (expected {want})")
    regex = e[5:]
    if rc == 0:
        return False, "exit code 0 (expected failure)"
    if not re.search(regex, out, re.M):
        return False, f"output does not match /{regex}/"
    return True, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpicc", default="mpicc")
    ap.add_argument("--cflags", default="-O2 -Wall -Wextra -std=c11")
    ap.add_argument("--launch", default="mpiexec -n {ranks} {exe} {args}")
    ap.add_argument("--testlist", default=os.path.join(HERE, "testlist"))
    ap.add_argument("--builddir", default=os.path.join(os.getcwd(), "mpitests-build"))
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--max-ranks", type=int, default=1 << 30)
    ap.add_argument("--filter", default="", help="regex on run names")
    ap.add_argument("--exclude", default="", help="regex on run names to skip")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the output of failed runs")
    a = ap.parse_args()

    os.makedirs(a.builddir, exist_ok=True)
    runs = [r for r in parse_testlist(a.testlist)
            if r["ranks"] <= a.max_ranks and re.search(a.filter, r["name"])
            and not (a.exclude and re.search(a.exclude, r["name"]))]
    nfail = 0
    for r in runs:
        exe, log = build(a.mpicc, r["src"], r["flags"], a.builddir, a.cflags)
        if exe is None:
            print(f"FAILED {r['name']}: build failed\n{log}")
            nfail += 1
            continue
        cmd = a.launch.format(ranks=r["ranks"], workers=r["workers"], procs=r["procs"], exe=shlex.quote(exe),
                              args=" ".join(shlex.quote(x) for x in r["args"]))
        t0 = time.time()
        timed_out = False
        env = dict(os.environ, **dict(kv.split("=", 1) for kv in r["env"]))
        p = subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, errors="replace", start_new_session=True, env=env)
        try:
            out, _ = p.communicate(timeout=a.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(p.pid, 9)
            out, _ = p.communicate()
        dt = time.time() - t0
        ok, why = judge(r, p.returncode, out, timed_out)
        print(f"{'ok    ' if ok else 'FAILED'} {r['name']:<24} {dt:6.2f}s  {why}", flush=True)
        if not ok:
            nfail += 1
            if a.verbose:
                print("    | " + "\n    | ".join(out.splitlines()[-30:]))
    print(f"{len(runs) - nfail}/{len(runs)} runs as expected")
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
