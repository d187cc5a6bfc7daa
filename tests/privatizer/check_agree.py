#!/usr/bin/env python3
"""Report and build agree: runs `skein-privatize --report` over SOURCES and builds each
source with `mpicc -fprivatize-keep -c` (same flags), then compares, variable by variable,
what the report says with what the build did:
  - error lines: the build's stderr and the report list the same errors, word for word;
  - "privatized" (section): the object has the variable in section skn_pdata/skn_pbss;
  - "privatized" found by address, per thread, or a static local object: the rewritten
    source wraps its uses (SKN_PRIV_ADDR / SKN_PRIV_TLS) or builds it per rank
    (__skn_key_<name>), and the object has no copy of it in the sections;
  - "left shared": the variable is not in the sections;
  - no variable is listed as both privatized and refused.
  check_agree.py BINDIR WORKDIR SOURCE... -- FLAGS
"""
import os
import re
import subprocess
import sys


def main():
    bindir, work = sys.argv[1:3]
    rest = sys.argv[3:]
    cut = rest.index("--")
    sources, flags = [os.path.abspath(s) for s in rest[:cut]], rest[cut + 1:]
    os.makedirs(work, exist_ok=True)
    cxx = any(s.endswith((".cpp", ".cc", ".cxx")) for s in sources)
    tool = os.path.join(bindir, "skein-privatize")
    cc = os.path.join(bindir, "mpicxx" if cxx else "mpicc")
    extra = ["--extra-arg-before=-xc++"] if cxx else []
    rep = subprocess.run([tool, "--report"] + extra + sources + ["--", "-isystem", os.path.join(bindir, "..", "include")] + flags,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line_re = re.compile(r"^(/[^:\n]+):(\d+):(\d+): (warning|error): (.*) \[skein-privatize\]$", re.M)
    decided = {}  # (source-independent) (file, line, col) -> (name, verdict)
    report_errors = set()
    by_name = {}
    for m in line_re.finditer(rep.stdout):
        f, l, c, sev, text = m.groups()
        if sev == "error":
            report_errors.add("%s:%s:%s: error: %s" % (os.path.realpath(f), l, c, text))
        v = re.match(r"^(.*?) '([^']+)' of type '.*?', (?:\d+ bytes|size depends on template arguments): (.*)$", text)
        if not v:
            continue
        kind, name, what = v.groups()
        verdict = "error" if sev == "error" else ("shared" if what.startswith("left shared") else "private")
        how = "section"
        if "found by address" in what:
            how = "addr"
        elif "per thread" in what:
            how = "tls"
        elif "when the rank first passes it" in what:
            how = "local"
        by_name.setdefault(name, set()).add(verdict)
        decided[(os.path.realpath(f), l, c)] = (name, verdict, how)
    bad = 0
    for name, verdicts in by_name.items():
        if "error" in verdicts and "private" in verdicts:
            print("FAIL: '%s' listed both privatized and refused" % name)
            bad += 1
    # the build, one source at a time
    build_errors = set()
    in_sections = {}  # short name -> bool, over all objects
    rewritten = ""
    for i, s in enumerate(sources):
        obj = os.path.join(work, "%d.o" % i)
        p = subprocess.run([cc, "-fprivatize-keep", "-c", s, "-o", obj] + flags, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        for m in line_re.finditer(p.stderr):
            f, l, c, sev, text = m.groups()
            if sev == "error":
                build_errors.add("%s:%s:%s: error: %s" % (os.path.realpath(f), l, c, text))
        if p.returncode != 0:
            if not any(True for _ in line_re.finditer(p.stderr)):
                print(p.stderr)
                print("FAIL: %s: the build failed without a privatizer error" % s)
                bad += 1
            continue
        syms = subprocess.run(["objdump", "-t", "-C", obj], stdout=subprocess.PIPE, text=True).stdout
        for ln in syms.splitlines():
            # "addr flags section<TAB>size name": objects only
            if "\t" not in ln:
                continue
            left, right = ln.split("\t", 1)
            lp = left.split()
            if len(lp) < 3 or "O" not in lp[1:-1]:
                continue
            rp = right.split(None, 1)
            if len(rp) < 2:
                continue
            full = re.sub(r"^\.hidden ", "", rp[1].strip())
            full = re.sub(r"\.\d+$", "", full)
            short = re.sub(r"<.*>|\[abi:[^\]]*\]", "", full).split("::")[-1]
            in_sections[short] = in_sections.get(short, False) or lp[-1].startswith("skn_p")
    kdir = os.path.join(work, "skein-privatized")
    for root, _, names in os.walk(kdir):
        for n in names:
            with open(os.path.join(root, n), errors="replace") as fh:
                rewritten += fh.read()
    if build_errors != report_errors:
        for e in sorted(report_errors - build_errors):
            print("FAIL: only the report says: " + e)
        for e in sorted(build_errors - report_errors):
            print("FAIL: only the build says: " + e)
        bad += 1
    checked = 0
    for (f, l, c), (name, verdict, how) in sorted(decided.items()):
        short = re.sub(r"<.*>", "", name).split("::")[-1]
        if verdict == "error" or build_errors:
            continue
        sect = in_sections.get(short, False)
        if verdict == "private" and how == "section" and not sect:
            print("FAIL: %s:%s: '%s': the report says privatized, the build left it out of the sections" % (f, l, name))
            bad += 1
        elif verdict == "private" and how != "section":
            wrap = {"addr": "SKN_PRIV_ADDR(", "tls": "SKN_PRIV_TLS("}.get(how)
            found = ("__skn_key_" + short) in rewritten if how == "local" else re.search(
                re.escape(wrap) + r"[^;]*\b" + re.escape(short) + r"\b", rewritten) is not None
            if not found:
                print("FAIL: %s:%s: '%s': the report says privatized (%s), the build does not rewrite it so" % (f, l, name, how))
                bad += 1
        elif verdict == "shared" and sect:
            print("FAIL: %s:%s: '%s': the report says left shared, the build privatized it" % (f, l, name))
            bad += 1
        checked += 1
    if bad:
        print(rep.stdout)
        print(rep.stderr)
        return 1
    print("agree: %d variables, %d errors, %d sources" % (checked, len(report_errors), len(sources)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
