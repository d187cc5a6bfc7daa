#!/usr/bin/env python3
"""Checks skein-privatize's output against expectations written beside the input
(clang-tidy style).

  check_tool.py golden TOOL SRC [tool options] -- FLAGS
      the rewritten SRC must equal SRC.expected (the source directory reads @SRCDIR@);
      with --header-dir=DIR among the options, every header written under DIR must equal
      <header>.expected beside the original header
  check_tool.py errors TOOL SRC [tool options] -- FLAGS
      the tool must fail; every line of SRC or of the headers it includes from its own
      directory that says "expected-error {{text}}" must get an error containing text,
      and no other line may get one
  check_tool.py report TOOL EXPECTED [tool options] -- FLAGS
      the report (stdout) must equal EXPECTED, with @SRCDIR@ for the source directory
      and @BINDIR@ for the current directory
  Set UPDATE=1 to rewrite the expected files of golden and report checks.
"""
import os
import re
import subprocess
import sys


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p.returncode, p.stdout, p.stderr


def compare(got, expected_path):
    if os.environ.get("UPDATE"):
        with open(expected_path, "w") as f:
            f.write(got)
        return 0
    with open(expected_path) as f:
        want = f.read()
    if got == want:
        return 0
    import difflib
    sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True), expected_path, "got"))
    print("FAIL: output differs from " + expected_path)
    return 1


def main():
    mode, tool, target = sys.argv[1:4]
    rest = sys.argv[4:]
    if mode == "golden":
        srcdir = os.path.dirname(os.path.abspath(target))
        hdir = None
        for a in rest:
            if a.startswith("--header-dir="):
                hdir = os.path.abspath(a.split("=", 1)[1])
                import shutil
                shutil.rmtree(hdir, ignore_errors=True)
        rc, out, err = run([tool, os.path.abspath(target)] + rest)
        if rc != 0:
            print(err)
            print("FAIL: skein-privatize exited with %d" % rc)
            return 1
        bad = 0
        if hdir:
            for root, _, names in os.walk(hdir):
                for n in sorted(names):
                    path = os.path.join(root, n)
                    orig = path[len(hdir):]
                    with open(path) as f:
                        text = f.read()
                    text = text.replace(hdir, "@HEADERDIR@").replace(srcdir, "@SRCDIR@")
                    bad += compare(text, orig + ".expected")
        return bad + compare(out.replace(hdir or "\0", "@HEADERDIR@").replace(srcdir, "@SRCDIR@"), target + ".expected")
    if mode == "report":
        rc, out, err = run([tool] + rest)
        sys.stderr.write(err)
        srcdir = os.path.dirname(os.path.abspath(target))
        out = out.replace(srcdir, "@SRCDIR@").replace(os.getcwd(), "@BINDIR@")
        return compare(out, target)
    if mode == "errors":
        src = os.path.abspath(target)
        srcdir = os.path.dirname(src)
        files = [src]
        with open(src) as f:
            text = f.read()
        files += [os.path.join(srcdir, h) for h in re.findall(r'#include "([^"]+)"', text)]
        want = {}
        for path in files:
            with open(path) as f:
                for n, line in enumerate(f, 1):
                    for m in re.finditer(r"expected-error \{\{(.*?)\}\}", line):
                        want.setdefault((path, n), []).append(m.group(1))
        rc, out, err = run([tool, src] + rest)
        if rc == 0:
            print("FAIL: skein-privatize accepted the file")
            return 1
        got = {}
        for m in re.finditer(r"^(/[^:\n]+):(\d+):\d+: error: (.*)$", err, re.M):
            got.setdefault((os.path.realpath(m.group(1)), int(m.group(2))), []).append(m.group(3))
        bad = 0
        for (path, n), texts in want.items():
            msgs = got.get((os.path.realpath(path), n), [])
            for t in texts:
                if not any(t in m for m in msgs):
                    print("FAIL: %s:%d: expected an error containing '%s', got %s" % (path, n, t, msgs))
                    bad += 1
        for (path, n), msgs in got.items():
            if not any(os.path.realpath(p) == path and k == n for (p, k) in want):
                print("FAIL: %s:%d: unexpected error: %s" % (path, n, msgs))
                bad += 1
        if bad:
            print(err)
        return 1 if bad else 0
    print("unknown mode " + mode)
    return 2


if __name__ == "__main__":
    sys.exit(main())
