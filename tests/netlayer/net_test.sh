#!/usr/bin/env bash
# Runs one UCX transport case: net_test.sh CASE SKEINRUN NET_TEST
# Prints "PASS <case>" and exits 0, or "FAIL: ..." with the output and exits 1.
source "$(dirname "$0")/cases.sh" # --list: the cases below
set -u
case_=$1 SKEINRUN=$2 PROG=$3
work=$(mktemp -d)
export TMPDIR=$work
trap 'rm -rf "$work"' EXIT
out=$work/out err=$work/err
fail() { echo "FAIL: $case_: $*"; echo "--- stdout"; head -c 4000 "$out"; echo "--- stderr"; head -c 4000 "$err"; exit 1; }
run() { timeout "${SKEIN_MULTI_LIMIT:-120}" "$@" >"$out" 2>"$err" </dev/null; rc=$?; } # seconds (CMakeLists: sanitizers)
expect_rc() { [[ $rc -eq $1 ]] || fail "exit code $rc, expected $1"; }
expect_passes() {
  local n; n=$(grep -c "^PASS net_test " "$out")
  [[ $n -eq $1 ]] || fail "$n PASS lines, expected $1"
  ! grep -q '^FAIL' "$out" || fail "a process failed"
}
expect_out() { grep -Eq -- "$1" "$out" || fail "stdout does not match /$1/"; }
# normal P [env...] -- MODE: P processes; every one must pass.
normal() {
  local p=$1; shift
  run env "$@" "$SKEINRUN" --procs "$p" "$PROG" "${ARGS[@]}"
  expect_rc 0; expect_passes "$p"
}

case $case_ in
pingpong_p2)      ARGS=(pingpong); normal 2 ;;
pingpong_p3_tcp)  ARGS=(pingpong); normal 3 UCX_TLS=tcp ;;
order_p4_n8)      ARGS=(order); run "$SKEINRUN" -n 8 --procs 4 "$PROG" order; expect_rc 0; expect_passes 4
                  for p in 0 1 2 3; do expect_out "^stats proc $p: endpoints 3 "; done ;;
order_p3_tcp)     ARGS=(order); normal 3 UCX_TLS=tcp ;;
order_swap_p2)    ARGS=(order); normal 2 SKEIN_NET_TEST_SWAP=1
                  grep -Eq '^stats proc 0: .* held [1-9]' "$out" || fail "no message was held back: the reorder buffer was not exercised" ;;
order_swap_p3_tcp) ARGS=(order); normal 3 SKEIN_NET_TEST_SWAP=1 UCX_TLS=tcp
                  grep -Eq '^stats proc 1: .* held [1-9]' "$out" || fail "no message was held back" ;;
threads_p2_n8)    run "$SKEINRUN" -n 8 --procs 2 "$PROG" threads; expect_rc 0; expect_passes 2 ;;
threads_p3_n9_tcp) run env UCX_TLS=tcp "$SKEINRUN" -n 9 --procs 3 "$PROG" threads; expect_rc 0; expect_passes 3 ;;
delayed_p2)       ARGS=(delayed); normal 2 ;;
sleep_p2)         ARGS=(sleep); normal 2; expect_out '^proc 1: slept [0-9]+ times' ;;
sleep_p2_tcp)     ARGS=(sleep); normal 2 UCX_TLS=tcp; expect_out '^proc 1: slept [0-9]+ times' ;;
delayed_p2_tcp)   ARGS=(delayed); normal 2 UCX_TLS=tcp ;;
discard_p2)       ARGS=(discard); normal 2 ;;
discard_p2_tcp)   ARGS=(discard); normal 2 UCX_TLS=tcp ;;
sync_p2)          ARGS=(sync); normal 2 ;;
sync_p2_tcp)      ARGS=(sync); normal 2 UCX_TLS=tcp ;;
kill9_p3|kill9_p3_tcp|kill9_p4_peer_tcp)
  if [[ $case_ == kill9_p3 ]]; then
    run "$SKEINRUN" --procs 3 "$PROG" kill 1; np=3; victim=1
  elif [[ $case_ == kill9_p3_tcp ]]; then # same host over tcp: pidfd or UCX, whichever is first
    run env UCX_TLS=tcp "$SKEINRUN" --procs 3 "$PROG" kill 1; np=3; victim=1
  else # every peer treated as remote: UCX's own error detection, over tcp only
    run env SKEIN_NET_ERRMODE=peer UCX_TLS=tcp "$SKEINRUN" --procs 4 "$PROG" kill 2; np=4; victim=2
  fi
  expect_rc 137
  expect_out "^proc $victim: killing myself"
  n=$(grep -c "^proc [0-9]: detected the death of process $victim after" "$out")
  [[ $n -eq $((np - 1)) ]] || fail "$n processes detected the death, expected $((np - 1))"
  expect_passes $((np - 1))
  grep "detected" "$out" ;;
*) echo "unknown case $case_"; exit 2 ;;
esac
echo "PASS $case_"
