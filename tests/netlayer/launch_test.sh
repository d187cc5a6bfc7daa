#!/usr/bin/env bash
# Runs one launch/PMI test case: launch_test.sh CASE SKEINRUN PROGRAM [SKEIN_PROGRAM]
# PROGRAM is pmi_exchange (see its header for the modes); SKEIN_PROGRAM any program built
# with Skein's mpicc. Prints "PASS <case>" and exits 0, exits 1 with "FAIL: ..." on
# failure, or 77 (skipped) when a launcher the case needs is not installed.
source "$(dirname "$0")/cases.sh" # --list: the cases below
set -u
case_=$1 SKEINRUN=$2 PROG=$3 SKEIN_PROG=${4:-}
work=$(mktemp -d)
export TMPDIR=$work/tmp # skeinrun puts its socket directory here: checked afterwards
mkdir -p "$TMPDIR"
trap 'rm -rf "$work"' EXIT
out=$work/out err=$work/err

fail() { echo "FAIL: $case_: $*"; echo "--- stdout"; head -c 3000 "$out"; echo "--- stderr"; head -c 3000 "$err"; exit 1; }
skip() { echo "SKIPPED: $case_: $*"; exit 77; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }

# run [env...] -- args: runs the command with stdout/stderr to files, sets rc and elapsed.
run() {
  local t0; t0=$(ms)
  timeout "${SKEIN_MULTI_LIMIT:-60}" "$@" >"$out" 2>"$err" </dev/null # seconds (CMakeLists: sanitizers)
  rc=$?
  elapsed=$(( $(ms) - t0 ))
}
expect_rc() { [[ $rc -eq $1 ]] || fail "exit code $rc, expected $1"; }
expect_passes() {
  local n; n=$(grep -c '^PASS pmi_exchange proc ' "$out")
  [[ $n -eq $1 ]] || fail "$n PASS lines, expected $1"
  ! grep -q '^FAIL' "$out" || fail "a process failed"
}
expect_err() { grep -Eq -- "$1" "$err" || fail "stderr does not match /$1/"; }
expect_out() { grep -Eq -- "$1" "$out" || fail "stdout does not match /$1/"; }
expect_fast() { [[ $elapsed -lt $1 ]] || fail "took ${elapsed} ms, limit $1 ms"; }
expect_clean() { [[ -z "$(ls -A "$TMPDIR")" ]] || fail "skeinrun left files behind: $(ls -A "$TMPDIR")"; }

case $case_ in
exchange_p1) # one process: skeinrun execs the program, which runs as a singleton
  run env EXPECT_BACKEND=singleton EXPECT_PROCS=1 "$SKEINRUN" --procs 1 "$PROG"
  expect_rc 0; expect_passes 1 ;;
exchange_p2)
  run env EXPECT_BACKEND=skein EXPECT_PROCS=2 EXPECT_WORLD=2 "$SKEINRUN" --procs 2 "$PROG"
  expect_rc 0; expect_passes 2; expect_clean ;;
exchange_p4_n16) # the issue's shape: 4 processes of 4 ranks
  run env EXPECT_BACKEND=skein EXPECT_PROCS=4 EXPECT_WORLD=16 "$SKEINRUN" -n 16 --procs 4 "$PROG"
  expect_rc 0; expect_passes 4
  for p in 0 1 2 3; do expect_out "^proc $p/4 backend skein world 16 ranks $((4 * p))\+4 node 0/1 local $p/4$"; done
  expect_clean ;;
exchange_p3_n10_env) # uneven blocks (4, 3, 3), process count from SKEIN_PROCS
  run env SKEIN_PROCS=3 EXPECT_PROCS=3 EXPECT_WORLD=10 "$SKEINRUN" -n 10 "$PROG"
  expect_rc 0; expect_passes 3
  expect_out '^proc 0/3 .* ranks 0\+4 '; expect_out '^proc 1/3 .* ranks 4\+3 '; expect_out '^proc 2/3 .* ranks 7\+3 ' ;;
exchange_p16)
  run env EXPECT_PROCS=16 "$SKEINRUN" -n 32 --procs 16 "$PROG"
  expect_rc 0; expect_passes 16; expect_clean ;;
hostile) # strangers and malformed messages are refused; the exchange is unharmed
  run "$SKEINRUN" --procs 3 "$PROG" --hostile
  expect_rc 0; expect_passes 3; expect_out 'attacks refused'
  for why in 'wrong secret' 'did not start with a well-formed hello' 'message of 4294967280 bytes' \
             'message of 0 bytes' 'process index 3 out of range' 'process 0 has already connected' \
             'closed in the middle of a message' 'too many connections' 'closed without a hello'; do
    expect_err "skeinrun: refused connection [0-9]+: $why"
  done
  expect_clean ;;
kill9) # a process dies of SIGKILL: the job ends non-zero within 10 s, naming its ranks
  run "$SKEINRUN" -n 8 --procs 4 "$PROG" --kill 2
  expect_rc 137; expect_fast 10000
  expect_err 'skeinrun: process 2 \(ranks 4-5\) was killed by signal 9'; expect_clean ;;
kill9_stubborn) # the survivors ignore SIGTERM: SIGKILL follows, still within 10 s
  run "$SKEINRUN" -n 4 --procs 4 "$PROG" --kill-stubborn 1
  expect_rc 137; expect_fast 10000
  expect_err 'skeinrun: process 1 \(rank 1\) was killed by signal 9'; expect_clean ;;
kill9_external) # kill -9 from outside, as a user or the OOM killer would
  t0=$(ms)
  "$SKEINRUN" -n 6 --procs 3 "$PROG" --kill -1 >"$out" 2>"$err" </dev/null &
  launcher=$!
  for _ in $(seq 100); do [[ $(grep -c '^PASS' "$out") -eq 3 ]] && break; sleep 0.1; done
  victim=$(pgrep -P "$launcher" | sed -n 2p)
  [[ -n "$victim" ]] || fail "no child processes found"
  kill -9 "$victim"
  t1=$(ms)
  wait "$launcher"; rc=$?
  elapsed=$(( $(ms) - t1 ))
  expect_rc 137; expect_fast 10000
  expect_err 'skeinrun: process [0-2] \(ranks [0-9]-[0-9]\) was killed by signal 9'
  expect_err 'ending the job: stopping the 2 remaining processes'; expect_clean ;;
exit_code) # the first non-zero exit code is the job's
  run "$SKEINRUN" --procs 3 "$PROG" --exit 1 7
  expect_rc 7; expect_err 'skeinrun: process 1 \(rank 1\) exited with code 7' ;;
abort)
  run "$SKEINRUN" -n 6 --procs 3 "$PROG" --abort 2 5
  expect_rc 5; expect_fast 10000
  expect_err 'skeinrun: process 2 \(ranks 4-5\) aborted the job with code 5: the test asked for it'; expect_clean ;;
skip_fence) # a process that leaves without joining a fence would hang the others
  for delay in 0 500; do # before the others reach the fence, and while they wait in it
    run "$SKEINRUN" --procs 3 "$PROG" --skip-fence 1 $delay
    expect_rc 1; expect_fast 10000
    expect_err 'skeinrun: process 1 \(rank 1\) exited without joining the key-value fence'
  done ;;
signals) # SIGTERM, SIGINT and SIGHUP sent to the launcher reach every process
  for sig in TERM INT HUP; do
    : >"$out" # now: the background job's own redirection may come after our first look
    "$SKEINRUN" --procs 3 "$PROG" --signal >"$out" 2>"$err" </dev/null &
    launcher=$!
    for _ in $(seq 100); do [[ $(grep -c 'ready$' "$out") -eq 3 ]] && break; sleep 0.1; done
    [[ $(grep -c 'ready$' "$out") -eq 3 ]] || fail "the processes did not start"
    mode=$(stat -c %a "$TMPDIR"/skein-*)
    [[ $mode == 700 ]] || fail "socket directory has mode $mode"
    kill -$sig "$launcher"
    wait "$launcher"; rc=$?
    expect_rc 0
    num=$(kill -l $sig)
    [[ $(grep -c "got signal $num x 1\$" "$out") -eq 3 ]] || fail "SIG$sig did not reach all 3 processes once"
    expect_clean
  done ;;
tty_interrupt) # Ctrl-C at a terminal: every process gets SIGINT once (not again from the launcher)
  command -v tmux >/dev/null || skip "tmux is not installed"
  session=skein-tty-$$
  : >"$out"
  tmux new-session -d -s $session -x 120 -y 20 "'$SKEINRUN' --procs 3 '$PROG' --signal >'$out' 2>'$err'; echo rc=\$? >>'$out'"
  for _ in $(seq 100); do [[ $(grep -c 'ready$' "$out" 2>/dev/null) -eq 3 ]] && break; sleep 0.1; done
  [[ $(grep -c 'ready$' "$out") -eq 3 ]] || { tmux kill-session -t $session; fail "the processes did not start"; }
  tmux send-keys -t $session C-c
  for _ in $(seq 100); do grep -q '^rc=' "$out" && break; sleep 0.1; done
  tmux kill-session -t $session 2>/dev/null
  expect_out '^rc=0$'
  [[ $(grep -c 'got signal 2 x 1$' "$out") -eq 3 ]] || fail "SIGINT did not reach all 3 processes exactly once"
  expect_clean ;;
stdio) # stdout of the processes passes through with every line intact, to a pipe and a file
  for dest in pipe file; do
    t0=$(ms)
    if [[ $dest == pipe ]]; then
      "$SKEINRUN" --procs 4 "$PROG" --lines 4000 2>"$err" </dev/null | cat >"$out"; rc=${PIPESTATUS[0]}
    else
      "$SKEINRUN" --procs 4 "$PROG" --lines 4000 >"$out" 2>"$err" </dev/null; rc=$?
    fi
    expect_rc 0; expect_passes 4
    total=$(grep -c '^line ' "$out")
    [[ $total -eq 16000 ]] || fail "$dest: $total lines, expected 16000"
    bad=$(grep -Evc '^(line proc=[0-3] i=[0-9]+ [a-z]+ end|PASS .*|proc .*)$' "$out")
    [[ $bad -eq 0 ]] || fail "$dest: $bad broken lines"
    for p in 0 1 2 3; do
      n=$(grep -c "^line proc=$p i=" "$out")
      [[ $n -eq 4000 ]] || fail "$dest: process $p printed $n lines, expected 4000"
    done
  done ;;
stdin) # process 0 gets the launcher's stdin, the others /dev/null
  printf 'one\ntwo\n' | "$SKEINRUN" --procs 3 "$PROG" --stdin >"$out" 2>"$err"; rc=$?
  expect_rc 0; expect_passes 3
  expect_out '^proc 0 stdin: one$'; expect_out '^proc 0 stdin: two$'; expect_out '^proc 0 read 2 lines$'
  expect_out '^proc 1 read 0 lines$'; expect_out '^proc 2 read 0 lines$' ;;
usage)
  run "$SKEINRUN" --procs 0 "$PROG"; expect_rc 2; expect_err 'process count must be a positive integer'
  run "$SKEINRUN" -n 2 --procs 4 "$PROG"; expect_rc 2; expect_err '4 processes need at least 4 ranks'
  run env SKEIN_PROCS=x "$SKEINRUN" "$PROG"; expect_rc 2; expect_err 'SKEIN_PROCS=x: the process count must be a positive integer'
  # counts that do not fit in the runtime's int are refused, naming the flag (issue 31)
  run "$SKEINRUN" -n 99999999999 "$PROG"; expect_rc 2; expect_err '^skeinrun: -n 99999999999: the rank count is too large'
  run "$SKEINRUN" --workers 4294967297 "$PROG"; expect_rc 2; expect_err '^skeinrun: --workers 4294967297: the worker count is too large'
  run "$SKEINRUN" --procs 99999999999999999999 "$PROG"; expect_rc 2; expect_err '^skeinrun: --procs 9+: the process count is too large'
  run "$SKEINRUN" --timeout 2147483648 "$PROG"; expect_rc 2; expect_err '^skeinrun: --timeout 2147483648: the time limit in seconds is too large'
  run env MPIEXEC_TIMEOUT=5000000000 "$SKEINRUN" "$PROG"; expect_rc 2; expect_err '^skeinrun: MPIEXEC_TIMEOUT=5000000000: the time limit'
  run env SKEIN_NP=3000000000 "$SKEINRUN" "$PROG"; expect_rc 2; expect_err '^skeinrun: SKEIN_NP=3000000000: the rank count is too large'
  run "$SKEINRUN" --procs 2 no-such-program-here; expect_rc 2; expect_err 'program not found'
  run "$SKEINRUN" --procs 2 /nonexistent/prog; expect_rc 127; expect_err 'cannot run /nonexistent/prog'
  printf 'not a program\n' >"$work/junk"; chmod +x "$work/junk" # executable, but exec fails
  run "$SKEINRUN" --procs 2 "$work/junk"; expect_rc 127; expect_err 'process [01]: cannot run .*junk: Exec format error'
  if [[ -n "$SKEIN_PROG" && -x "$SKEIN_PROG" ]]; then
    # an MPI program over several processes (issue 6): runs, no longer refused
    run env UCX_TLS=tcp "$SKEINRUN" -n 4 --procs 2 "$SKEIN_PROG"; expect_rc 0; expect_out '^PASS '
  fi
  expect_clean ;;
pmix_mpirun) # Open MPI's mpirun is a PMIx server
  command -v mpirun.openmpi >/dev/null || skip "Open MPI is not installed (scripts/install-deps.sh --peers)"
  run mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 -x EXPECT_BACKEND=pmix -x EXPECT_PROCS=2 "$PROG"
  expect_rc 0; expect_passes 2
  run mpirun.openmpi --allow-run-as-root --oversubscribe -n 4 -x EXPECT_BACKEND=pmix -x SKEIN_NP=10 -x EXPECT_WORLD=10 "$PROG"
  expect_rc 0; expect_passes 4; expect_out '^proc 3/4 backend pmix world 10 ranks 8\+2 node 0/1 local 3/4$'
  run mpirun.openmpi --allow-run-as-root --oversubscribe -n 3 -x SKEIN_NP=6 "$PROG" --abort 1 5
  expect_rc 5; expect_fast 10000; expect_err 'process 1 \(ranks 2-3\) aborted the job with code 5: the test asked for it' ;;
pmi1_hydra) # MPICH's hydra serves the PMI-1 wire protocol on PMI_FD
  command -v mpiexec.mpich >/dev/null || skip "MPICH is not installed (scripts/install-deps.sh --peers)"
  run mpiexec.mpich -n 3 -genv EXPECT_BACKEND pmi1 -genv EXPECT_PROCS 3 "$PROG"
  expect_rc 0; expect_passes 3; expect_out '^proc 2/3 backend pmi1 world 3 ranks 2\+1 node 0/1 local 2/3$'
  run mpiexec.mpich -n 3 "$PROG" --abort 2 6
  expect_rc 6; expect_fast 10000; expect_err 'process 2 \(rank 2\) aborted the job with code 6: the test asked for it' ;;
slurm_pmi2) # srun --mpi=pmi2 (PMI-1 wire protocol) and --mpi=pmix on a one-node Slurm this test starts
  command -v srun >/dev/null || skip "Slurm is not installed (scripts/install-deps.sh installs slurm-wlm)"
  [[ $(id -u) -eq 0 ]] || skip "starting a local Slurm needs root"
  here=$(cd "$(dirname "$0")" && pwd)
  exec 9>/tmp/skein-slurm.lock # one local cluster at a time on this machine (fixed ports)
  flock -w 80 9 || fail "another test holds the local Slurm"
  trap 'bash "$here/slurm-local.sh" stop 9>&-; rm -rf "$work"' EXIT
  # A cluster that cannot start here is the machine's problem, not Skein's: skip, loudly.
  if ! bash "$here/slurm-local.sh" start >"$work/slurm-start" 2>&1 9>&-; then
    cat "$work/slurm-start"; tail -5 /tmp/skein-slurm/*.log 2>/dev/null
    skip "the local Slurm did not start (see above)"
  fi
  export SLURM_CONF=/tmp/skein-slurm/slurm.conf
  run srun --mpi=pmi2 -O -n 3 --export=ALL,EXPECT_BACKEND=pmi1,EXPECT_PROCS=3 "$PROG"
  expect_rc 0; expect_passes 3; expect_out '^proc 2/3 backend pmi1 world 3 ranks 2\+1 node 0/1 local 2/3$'
  run srun --mpi=pmix -O -n 2 --export=ALL,EXPECT_BACKEND=pmix,SKEIN_NP=4 "$PROG"
  expect_rc 0; expect_passes 2; expect_out '^proc 1/2 backend pmix world 4 ranks 2\+2 node 0/1 local 1/2$'
  run srun --mpi=pmi2 -O -n 3 "$PROG" --abort 1 5
  [[ $rc -ne 0 ]] || fail "srun: an aborted job exited 0"
  expect_fast 10000; expect_err 'process 1 \(rank 1\) aborted the job with code 5: the test asked for it' ;;
*) echo "unknown case $case_"; exit 2 ;;
esac
echo "PASS $case_"
