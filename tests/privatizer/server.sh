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
servers() {  # server processes, not their per-request or PCH-building children
  local all n=0 p
  all=$(pgrep -f -- "--serve $TMPDIR/")
  for p in $all; do grep -qx "$(ps -o ppid= -p "$p" | tr -d ' ')" <<<"$all" || n=$((n + 1)); done
  echo $n
}

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

# 2b. workers serve request after request (server.cpp): nothing of one request carries
#    into the next (options, failures, report lines, environment), each gives the in-process
#    text, a worker lets go of the client's pipes when it answers, and requests in sequence
#    reuse workers instead of forking one each
seq_req() {  # seq_req MODE N: the same sequence of requests, each one's output and status in $work/seq.MODE.N
  local m=$1 k=0 r rc
  for r in "--shared=level $work/src/s5.c" "$work/src/err.c" "$work/src/s5.c" "--report $work/src/s6.c" \
           "$work/src/s6.c" "--shared=hist6 --report $work/src/s6.c" "$work/src/s6.c"; do
    k=$((k + 1))
    # shellcheck disable=SC2086 # the request's words
    if [[ $r == --report* || $r == *" --report "* ]]; then
      SKEIN_PRIVATIZE_SERVER=$m CPATH=$work/src/inc "$client" "$tool" $r "${flags[@]}" >"$work/seq.$m.$k" 2>&1
      rc=$?
    else
      SKEIN_PRIVATIZE_SERVER=$m CPATH=$work/src/inc "$client" "$tool" --header-dir="$work/seqh" $r -o "$work/seq.$m.$k.c" \
        "${flags[@]}" >"$work/seq.$m.$k" 2>&1
      rc=$?
      cat "$work/seq.$m.$k.c" >>"$work/seq.$m.$k" 2>/dev/null
    fi
    echo "status $rc" >>"$work/seq.$m.$k"
  done
}
seq_req 0
seq_req 1
for k in 1 2 3 4 5 6 7; do
  cmp -s "$work/seq.0.$k" "$work/seq.1.$k" || { diff "$work/seq.0.$k" "$work/seq.1.$k"; fail "request $k of a sequence differs through the server"; }
done
grep -q "SKN_PRIV(level)" "$work/seq.1.1.c" && fail "--shared=level of one request ignored"
grep -q "SKN_PRIV(level)" "$work/seq.1.3.c" || fail "--shared=level of an earlier request kept"
grep -q "error:" "$work/seq.1.2" && grep -q "SKN_PRIV" "$work/seq.1.3" || fail "a failed request's state kept"
timeout 60 bash -c 'CPATH=$1 "$2" "$3" --report "$4" "${@:5}" | cat >/dev/null' sh "$work/src/inc" "$client" "$tool" \
  "$work/src/s2.c" "${flags[@]}" || fail "a worker kept the client's pipe open after its answer"
workers() {  # processes whose parent is a server
  local s w n=0
  for s in $(pgrep -f -- "--serve $TMPDIR/"); do
    for w in $(pgrep -P "$s"); do n=$((n + 1)); done
  done
  echo $n
}
for i in $(seq 1 10); do
  CPATH=$work/src/inc "$client" "$tool" --header-dir="$work/seqh" "$work/src/s7.c" -o "$work/seq7.c" "${flags[@]}" ||
    fail "request $i of ten"
done
[ "$(workers)" -le 3 ] || fail "$(workers) workers after ten requests in sequence: not reused"

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

# 3b. precompiled system headers (privatizer/tool/pch.cpp): the first request of a prefix
#    of <...> includes builds a PCH after its reply, later ones load it and give the
#    in-process text; a system header changed since is read anew, without a message; a
#    prefix that reaches a project header (-I and <...>) is never precompiled
mkdir -p "$work/sys" "$work/p"
printf '#ifndef SYSDEP_H\n#define SYSDEP_H\n#define SYS_CONST const\n#endif\n' > "$work/sys/sysdep.h"
cat > "$work/p/u.c" <<'EOF'
#include <stdio.h>
#include <sysdep.h>  /* a system header of ours */
#include "cfg.h"
SYS_CONST int table[2] = {1, 2};
int g(void) { return table[0] + bump(); }
EOF
pch() { ls "$TMPDIR"/skein-priv-*/*.pch.*/*."$1" 2>/dev/null | wc -l; }
rewrite() {  # rewrite NAME [SERVER]: u.c into NAME.c, messages into NAME.err, header paths made equal
  (cd "$work/p" && SKEIN_PRIVATIZE_SERVER=${2:-1} CPATH=$work/src/inc "$client" "$tool" --header-dir="$work/p/h$1" u.c \
    -o "$1.c" -- -isystem "$build/include" -isystem "$work/sys" -O2 2>"$1.err") || fail "rewrite $1"
  sed -i "s|$work/p/h$1|H|g" "$work/p/$1.c"
  [ ! -s "$work/p/$1.err" ] || { cat "$work/p/$1.err"; fail "messages from rewrite $1"; }
}
# The compiles above may have built PCHs of their own prefixes, after their replies: wait
# for those builds (each holds <key>.pch.lock) to end. The PCHs are then told apart by
# name (<key>.pch), not counted: the in-process compiles of step 3 can outlast the idle
# limit, and a server that exits then takes its PCH directory with it, possibly between a
# count and the request (CI's ASan stage once saw "3 PCHs before it, 1 after").
pch_names() { ls "$TMPDIR"/skein-priv-*/*.pch.*/*.pch 2>/dev/null | xargs -rn1 basename | sort -u; }
for i in $(seq 1 300); do [ "$(pch lock)" = 0 ] && break; sleep 0.1; done
pchs_before=$(pch_names)
new_pchs() { comm -13 <(echo "$pchs_before") <(pch_names) | grep -c .; }
rewrite first
for i in $(seq 1 300); do [ "$(new_pchs)" = 0 ] || break; sleep 0.1; done
[ "$(new_pchs)" = 1 ] ||
  fail "no PCH after the first request of a prefix ($(new_pchs) new; before: $(echo $pchs_before); after: $(echo $(pch_names)))"
rewrite served
rewrite inproc 0
grep -q "table" "$work/p/inproc.c" && ! grep -q "SKN_PRIV(table)" "$work/p/inproc.c" || fail "const table privatized"
cmp -s "$work/p/served.c" "$work/p/inproc.c" || { diff "$work/p/served.c" "$work/p/inproc.c"; fail "with the PCH: not the in-process text"; }
printf '#ifndef SYSDEP_H\n#define SYSDEP_H\n#define SYS_CONST /* writable now */\n#endif\n' > "$work/sys/sysdep.h"
rewrite changed
grep -q "SKN_PRIV(table)" "$work/p/changed.c" || { cat "$work/p/changed.c"; fail "a system header changed after the PCH was built: old header used"; }
printf '#include <stdio.h>\n#include <cfg.h>\nint table2[2];\nint h(void) { return table2[1] + bump(); }\n' > "$work/p/u2.c"
for i in 1 2; do
  (cd "$work/p" && "$client" "$tool" --header-dir="$work/p/hu$i" u2.c -o "user$i.c" -- -I "$work/src/inc" -O2) ||
    fail "rewrite with a project header in the prefix"
  grep -q "SKN_PRIV(table2)" "$work/p/user$i.c" && grep -q "SKN_PRIV(level)" "$work/p/hu$i$work/src/inc/cfg.h" ||
    fail "a project header in the prefix: not rewritten"
  for t in $(seq 1 100); do [ "$(pch user)" = 0 ] || break; sleep 0.1; done
done
[ "$(pch user)" = 1 ] || fail "a prefix reaching a project header is not refused"

# 4. idle: the server goes, and the next request starts another
sleep 11
[ "$(servers)" = 0 ] || fail "the server did not exit when idle"
ls "$TMPDIR"/skein-priv-*/*.sock >/dev/null 2>&1 && fail "the idle server left its socket"
ls -d "$TMPDIR"/skein-priv-*/*.pch.* >/dev/null 2>&1 && fail "the idle server left its PCH directory"
CPATH=$work/src/inc "$build/bin/mpicc" -fprivatize -c "$work/src/s3.c" -o "$work/b/again.o" || fail "after idle"
[ "$(servers)" = 1 ] || fail "no new server"

# 5. a socket directory that others could enter: no server, in-process, same object
export TMPDIR=$work/tmp2
mkdir -p "$TMPDIR/skein-priv-$(id -u)" && chmod 755 "$TMPDIR/skein-priv-$(id -u)"
CPATH=$work/src/inc "$build/bin/mpicc" -fprivatize -O2 -c "$work/src/s4.c" -o "$work/b/unsafe.o" || fail "fallback build"
[ "$(servers)" = 0 ] || fail "a server started in an unsafe directory"
cmp -s <(nm "$work/a/s4.o") <(nm "$work/b/unsafe.o") || fail "fallback object differs"
echo "PASS server"
