#!/usr/bin/env bash
# gcc-only options never make a -fprivatize build print anything more than the plain gcc
# build, nor do Clang's own warnings: idioms/flags.c compiled with -Wall -Wextra and a set
# of gcc-only flags gives the same (empty) output with and without -fprivatize; the tool
# alone ignores plugins.
# usage: gcc_flags.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-O5 -Wall -Wextra -ftree-vectorizer-verbose=0 -fno-strict-overflow -fwrapv-pointer -march=x86-64-v3
  -mtune=native -march=icelake-server --param=max-inline-insns-single=1000 --param max-unroll-times=4
  -fconserve-stack -mno-direct-extern-access -fipa-pta -fvect-cost-model=cheap -floop-interchange
  -fsched-pressure -fgcse-after-reload -fno-semantic-interposition -frecord-gcc-switches
  -fstack-clash-protection -fcf-protection=full -Wp,-D_FORTIFY_SOURCE=2 -malign-data=cacheline
  -fno-tree-loop-distribute-patterns -Wno-maybe-uninitialized -Wlogical-op -Wduplicated-cond -fmax-errors=3)
f="$src/tests/privatizer/idioms/flags.c"
"$build/bin/mpicc" "${flags[@]}" -c "$f" -o "$work/plain.o" >"$work/plain.out" 2>&1 || { cat "$work/plain.out"; echo "FAIL plain build"; exit 1; }
"$build/bin/mpicc" -fprivatize "${flags[@]}" -c "$f" -o "$work/priv.o" >"$work/priv.out" 2>&1 || { cat "$work/priv.out"; echo "FAIL -fprivatize build"; exit 1; }
if ! cmp -s "$work/plain.out" "$work/priv.out"; then
  diff "$work/plain.out" "$work/priv.out"
  echo "FAIL -fprivatize prints more than gcc"
  exit 1
fi
[ -s "$work/priv.out" ] && { cat "$work/priv.out"; echo "FAIL gcc printed something for flags.c"; exit 1; }
objdump -t "$work/priv.o" | grep -q "skn_pbss.*counter" || { objdump -t "$work/priv.o"; echo "FAIL counter was not privatized"; exit 1; }
# plugins are gcc's business: the tool must not load them
"$build/bin/skein-privatize" "$f" -o "$work/t.c" -- -isystem "$build/include" -fplugin=/nonexistent/plugin.so \
  -fplugin-arg-plugin-x=y -march=armv8-a -O9 -Wall >"$work/tool.out" 2>&1 && [ ! -s "$work/tool.out" ] ||
  { cat "$work/tool.out"; echo "FAIL the tool printed something or failed"; exit 1; }
# the link of the privatized object prints nothing either
"$build/bin/mpicc" -fprivatize "${flags[@]}" "$work/priv.o" -o "$work/app" >"$work/link.out" 2>&1 && [ ! -s "$work/link.out" ] ||
  { cat "$work/link.out"; echo "FAIL privatized link printed something"; exit 1; }
echo "PASS gcc_flags"
