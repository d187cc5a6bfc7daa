#!/usr/bin/env python3
"""Checks the layer graph the build enforces (docs/architecture.md, "Layers the build
enforces").

  check_layers.py graph BUILD_DIR SOURCE_DIR
      For every layer, takes the compile command of one of its sources from the build's
      compile_commands.json and compiles a probe that includes a published header of every
      other layer: the probe must compile exactly when that layer is one the layer may use
      (SEES below, written here apart from the CMake files that build the graph).
  check_layers.py probe BUILD_DIR SOURCE_DIR LAYER HEADER ok|fail
      One such probe (e.g. core including api/api.h must fail).
  check_layers.py relative BUILD_DIR SOURCE_DIR
      Fails on an #include with "../" in the layered folders: a relative path reaches any
      header and would bypass the include roots.
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

# layer: (a source of the layer, the header it publishes that the probes include)
LAYERS = {
    "base": ("runtime/base/base.c", "base/base.h"),
    "sched": ("runtime/sched/sched.c", "sched/sched.h"),
    "pmi": ("netlayer/pmi/pmi.c", "pmi/pmi.h"),
    "ucx": ("netlayer/ucx/net.c", "ucx/net.h"),
    "alloc": ("allocator/heap.c", "allocator/heap.h"),
    "config": ("runtime/boot/config.c", "boot/boot.h"),
    "core": ("runtime/core/rank.c", "core/core.h"),
    "io": ("runtime/io/io.c", "io/io.h"),
    "priv": ("privatizer/runtime/priv.c", "priv/priv.h"),
    "api": ("runtime/api/errors.c", "api/api.h"),
    "boot": ("runtime/boot/boot.c", "boot/blocking.h"),
}

# The layers each layer may include, directly or through the headers of those it includes.
SEES = {
    "base": set(),
    "sched": {"base"},
    "pmi": {"base"},
    "ucx": {"base", "pmi"},
    "alloc": {"base", "sched"},
    "config": {"base", "sched"},
    "core": {"base", "sched", "alloc", "pmi", "ucx"},
    "io": {"base", "sched", "core"},
    "priv": {"base", "sched", "core"},
    "api": {"base", "sched", "core", "io", "pmi", "config"},
    "boot": {"base", "sched", "core", "alloc", "priv", "pmi", "config"},
}

# Folders whose includes must be rooted.
LAYERED = ["runtime", "allocator", "netlayer", "privatizer/runtime"]


def commands(build):
    with open(os.path.join(build, "compile_commands.json")) as f:
        return {os.path.realpath(e["file"]): e for e in json.load(f)}


def probe_argv(entry):
    """The layer's compile command, checking syntax only, without its source and outputs."""
    argv = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    if os.path.basename(argv[0]) == "ccache":
        argv = argv[1:]
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in ("-o", "-MT", "-MF", "-MQ"):
            skip = True
        elif a in ("-c", "-MD", "-MMD") or os.path.realpath(os.path.join(entry["directory"], a)) == entry["_src"]:
            pass
        else:
            out.append(a)
    return out + ["-fsyntax-only"]


def compiles(entry, header, tmp):
    fd, path = tempfile.mkstemp(suffix=".c", dir=tmp)
    with os.fdopen(fd, "w") as f:
        f.write('#include "%s"\nint skn_layer_probe;\n' % header)
    r = subprocess.run(probe_argv(entry) + [path], cwd=entry["directory"], capture_output=True, text=True)
    err = next((l for l in r.stderr.splitlines() if "error" in l), r.stderr.strip()[:200])
    return r.returncode == 0, err


def entry_of(cmds, src_dir, layer):
    src = os.path.realpath(os.path.join(src_dir, LAYERS[layer][0]))
    if src not in cmds:
        sys.exit("check_layers: no compile command for %s (layer %s)" % (src, layer))
    e = dict(cmds[src])
    e["_src"] = src
    return e


def graph(build, src_dir):
    left = dict(SEES)  # the table itself must only point downward: no cycle
    while left:
        leaves = [l for l, seen in left.items() if not seen & left.keys()]
        assert leaves, "SEES has a cycle among " + ", ".join(sorted(left))
        for l in leaves:
            del left[l]
    cmds = commands(build)
    jobs = [(l, u) for l in LAYERS for u in LAYERS if u != l]
    bad = []
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = pool.map(lambda j: compiles(entry_of(cmds, src_dir, j[0]), LAYERS[j[1]][1], tmp), jobs)
        for (l, u), (ok, err) in zip(jobs, results):
            want = u in SEES[l]
            if ok != want:
                bad.append("%s including %s: %s, expected %s%s" % (l, LAYERS[u][1], "compiles" if ok else "fails",
                           "to compile" if want else "to fail", "" if ok else " (" + err + ")"))
    print("layers: %d probes, %d may include, %d must fail" % (len(jobs), sum(len(s) for s in SEES.values()),
          len(jobs) - sum(len(s) for s in SEES.values())))
    for b in bad:
        print("MISMATCH", b)
    return 1 if bad else 0


def probe(build, src_dir, layer, header, want):
    ok, err = compiles(entry_of(commands(build), src_dir, layer), header, tempfile.gettempdir())
    print("%s including %s: %s%s" % (layer, header, "compiles" if ok else "fails", "" if ok else " (" + err + ")"))
    return 0 if ok == (want == "ok") else 1


def relative(src_dir):
    bad = []
    inc = re.compile(r'^\s*#\s*include\s*"([^"]*\.\./[^"]*)"')
    for top in LAYERED:
        for d, _, files in os.walk(os.path.join(src_dir, top)):
            for name in files:
                if not name.endswith((".c", ".h", ".cpp", ".S")):
                    continue
                path = os.path.join(d, name)
                rel = os.path.relpath(path, src_dir)
                with open(path, errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = inc.match(line)
                        if m:
                            bad.append("%s:%d: #include \"%s\"" % (rel, n, m.group(1)))
    for b in bad:
        print("relative include:", b)
    print("relative includes: %d" % len(bad))
    return 1 if bad else 0


if __name__ == "__main__":
    mode, build, src_dir = sys.argv[1:4]
    if mode == "graph":
        sys.exit(graph(build, src_dir))
    if mode == "probe":
        sys.exit(probe(build, src_dir, *sys.argv[4:7]))
    if mode == "relative":
        sys.exit(relative(src_dir))
    sys.exit("usage: check_layers.py graph|probe|relative BUILD_DIR SOURCE_DIR ...")
