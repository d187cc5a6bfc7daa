#!/usr/bin/env bash
# The compile server behind mpicc -fprivatize (privatizer/tool/client.c, server.cpp): a
# served request gives exactly what the tool gives in-process (rewritten text, report on
# stdout, errors on stderr, exit status), in the client's directory and environment; eight
# concurrent requests; one server per tool, gone when idle; the client falls back to
# in-process when the socket's directory is not safe or the server is disabled.
# usage: server.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export TMPDIR=$work/tmp SKEIN_PRIVATIZE_SERVER_IDLE=8
mkdir -p "$TMPDIR"
tool=$build/bin/skein-privatize
client=$build/bin/skein-privatize-client
fail() { echo "FAIL $*"; exit 1; }
servers() { pgrep -f -- "--serve $TMPDIR/" | wc -l; }

mkdir -p "$work/src/inc" "$work/a" "$work/b"
cat > "$work/src/inc/cfg.h" <<'EOF'
extern int level;
static inline int bump(void) { return ++level; }
EOF
for i in 1 2 3 4 5 6 7 8; do
  cat > "$work/src/s$i.c" <<EOF
#include <stdio.h>
#include "cfg.h"
int level;
static double hist$i[16];
int f$i(int x) { static int calls; calls += x; hist$i[x & 15] += bump(); return calls + level; }
EOF
done
printf '__attribute__((section("mine"))) int broken;\nint use(void) { return broken; }\n' > "$work/src/err.c"
flags=(-- -isystem "$build/include" -O2)

# 1. the same text through the server as in-process; cfg.h found through CPATH (the
#    client's environment) and the output path relative to the client's directory
(cd "$work/a" && CPATH=$work/src/inc SKEIN_PRIVATIZE_SERVER=0 "$client" "$tool" --header-dir="$work/a/h" \
  "$work/src/s1.c" -o s1.c "${flags[@]}") || fail "in-process rewrite"
(cd "$work/b" && CPATH=$work/src/inc "$client" "$tool" --header-dir="$work/b/h" "$work/src/s1.c" -o s1.c "${flags[@]}") ||
  fail "served rewrite"
[ "$(servers)" = 1 ] || fail "expected one server, found $(servers)"
grep -q "SKN_PRIV" "$work/b/s1.c" || fail "the served rewrite privatized nothing"
sed "s|$work/a/h|H|g" "$work/a/s1.c" > "$work/a.txt"
sed "s|$work/b/h|H|g" "$work/b/s1.c" > "$work/b.txt"
cmp -s "$work/a.txt" "$work/b.txt" || { diff "$work/a.txt" "$work/b.txt"; fail "served and in-process rewrites differ"; }

# 2. report on stdout, errors on stderr, exit status: identical
for mode in 0 1; do
  SKEIN_PRIVATIZE_SERVER=$mode CPATH=$work/src/inc "$client" "$tool" --report "$work/src/s2.c" "$work/src/err.c" \
    "${flags[@]}" >"$work/report.$mode" 2>"$work/report.err.$mode"
  echo $? >> "$work/report.$mode"
  SKEIN_PRIVATIZE_SERVER=$mode "$client" "$tool" "$work/src/err.c" -o "$work/err.$mode.c" "${flags[@]}" \
    >"$work/err.out.$mode" 2>"$work/err.$mode"
  echo $? >> "$work/err.$mode"
done
grep -q "level" "$work/report.1" || { cat "$work/report.1"; fail "report names no global"; }
grep -q "error:" "$work/err.1" || { cat "$work/err.1"; fail "no error for err.c"; }
[ "$(tail -1 "$work/err.1")" != 0 ] || fail "err.c: exit status 0 through the server"
for f in report report.err err err.out; do
  cmp -s "$work/$f.0" "$work/$f.1" || { diff "$work/$f.0" "$work/$f.1"; fail "$f differs through the server"; }
done

# 3. eight concurrent -fprivatize compiles (as make -j8) against in-process ones
for i in 1 2 3 4 5 6 7 8; do
  CPATH=$work/src/inc "$build/bin/mpicc" -fprivatize -O2 -c "$work/src/s$i.c" -o "$work/b/s$i.o" &
done
wait
[ "$(servers)" = 1 ] || fail "expected one server after concurrent builds, found $(servers)"
for i in 1 2 3 4 5 6 7 8; do
  CPATH=$work/src/inc SKEIN_PRIVATIZE_SERVER=0 "$build/bin/mpicc" -fprivatize -O2 -c "$work/src/s$i.c" -o "$work/a/s$i.o" ||
    fail "in-process s$i"
  [ -f "$work/b/s$i.o" ] || fail "concurrent s$i"
  cmp -s <(nm "$work/a/s$i.o") <(nm "$work/b/s$i.o") || fail "s$i.o differs through the server"
  nm "$work/b/s$i.o" | grep -q "hist$i" && objdump -t "$work/b/s$i.o" | grep -q "skn_pbss.*hist$i" ||
    fail "hist$i not privatized"
done

# 4. idle: the server goes, and the next request starts another
sleep 11
[ "$(servers)" = 0 ] || fail "the server did not exit when idle"
ls "$TMPDIR"/skein-priv-*/*.sock >/dev/null 2>&1 && fail "the idle server left its socket"
CPATH=$work/src/inc "$build/bin/mpicc" -fprivatize -c "$work/src/s3.c" -o "$work/b/again.o" || fail "after idle"
[ "$(servers)" = 1 ] || fail "no new server"

# 5. a socket directory that others could enter: no server, in-process, same object
export TMPDIR=$work/tmp2
mkdir -p "$TMPDIR/skein-priv-$(id -u)" && chmod 755 "$TMPDIR/skein-priv-$(id -u)"
CPATH=$work/src/inc "$build/bin/mpicc" -fprivatize -O2 -c "$work/src/s4.c" -o "$work/b/unsafe.o" || fail "fallback build"
[ "$(servers)" = 0 ] || fail "a server started in an unsafe directory"
cmp -s <(nm "$work/a/s4.o") <(nm "$work/b/unsafe.o") || fail "fallback object differs"
echo "PASS server"
