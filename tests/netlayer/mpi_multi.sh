#!/usr/bin/env bash
# Runs one multi-process MPI test case (issue 6): MPI programs built with Skein's mpicc,
# one job spread over several processes that talk over UCX.
#   mpi_multi.sh CASE SKEINRUN RING ANYSOURCE STORM KILL9
# RING, ANYSOURCE, STORM: tests/mpi/{ring,anysource,storm} of the build; KILL9:
# tests/netlayer/mpi_kill9. Prints "PASS <case>" and exits 0, exits 1 with "FAIL: ..."
# on failure, or 77 (skipped) when what the case needs (a launcher, root) is missing.
# Every run has SKEIN_NETSTATS=1: each process's closing line
#   skein: net: process P/NP: R ranks, E endpoints, eager sent S, rendezvous sent Z, delivered D, held H
# proves that the job really was NP processes of one world (not NP separate jobs, which
# would also print PASS) and counts the connections.
source "$(dirname "$0")/cases.sh" # --list: the cases below
set -u
case_=$1 SKEINRUN=$2 RING=$3 ANYSOURCE=$4 STORM=$5 KILL9=$6
work=$(mktemp -d)
export TMPDIR=$work/tmp # skeinrun puts its socket directory here
mkdir -p "$TMPDIR"
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
out=$work/out err=$work/err

fail() { echo "FAIL: $case_: $*"; echo "--- stdout"; head -c 3000 "$out"; echo "--- stderr"; head -c 4000 "$err"; exit 1; }
skip() { echo "SKIPPED: $case_: $*"; exit 77; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
for exe in "$RING" "$ANYSOURCE" "$STORM" "$KILL9"; do
  [[ -x $exe ]] || { echo "FAIL: $case_: $exe is not built"; exit 1; }
done

run() {
  local t0; t0=$(ms)
  timeout -k 5 "${SKEIN_MULTI_LIMIT:-60}" "$@" >"$out" 2>"$err" </dev/null # seconds (CMakeLists: sanitizers)
  rc=$?
  end_ms=$(ms)
  elapsed=$(( end_ms - t0 ))
}
# note WHAT: one line per run, so that the test log shows how long each took
note() { echo "$1: exit code $rc, $elapsed ms"; }
expect_rc() { [[ $rc -eq $1 ]] || fail "exit code $rc, expected $1${2:+ ($2)}"; }
expect_err() { grep -Eq -- "$1" "$err" || fail "stderr does not match /$1/"; }
# expect_pass NAME: exactly one PASS line (rank 0 of one world of ranks), no FAIL line
expect_pass() {
  local n; n=$(grep -c "^PASS $1\$" "$out")
  [[ $n -eq 1 ]] || fail "$n 'PASS $1' lines, expected 1 (one job, not one per process)"
  ! grep -q 'FAIL' "$out" "$err" || fail "a rank failed"
}
# expect_netstats NP RANKS MIN_E MAX_E: one stats line per process 0..NP-1, each with
# RANKS ranks (a space-separated list, one per process) and MIN_E..MAX_E endpoints;
# leaves the endpoint counts in ENDPOINTS.
expect_netstats() {
  local np=$1 min_e=$3 max_e=$4 p line r e
  local -a ranks; read -r -a ranks <<<"$2"
  local re="skein: net: process ([0-9]+)/$np: ([0-9]+) ranks, ([0-9]+) endpoints, eager sent ([0-9]+), rendezvous sent ([0-9]+), delivered ([0-9]+), held ([0-9]+)"
  local n; n=$(grep -Ec "skein: net: process [0-9]+/[0-9]+:" "$err")
  [[ $n -eq $np ]] || fail "$n 'skein: net:' lines (SKEIN_NETSTATS=1), expected $np"
  ENDPOINTS=""
  for ((p = 0; p < np; p++)); do
    line=$(grep -E "skein: net: process $p/$np:" "$err" | head -1)
    [[ $line =~ $re ]] || fail "no well-formed stats line for process $p/$np"
    r=${BASH_REMATCH[2]} e=${BASH_REMATCH[3]}
    [[ $r -eq ${ranks[$p]} ]] || fail "process $p runs $r ranks, expected ${ranks[$p]} (block distribution)"
    [[ $e -ge $min_e && $e -le $max_e ]] || fail "process $p has $e endpoints, expected $min_e..$max_e"
    [[ $(( BASH_REMATCH[4] + BASH_REMATCH[5] )) -gt 0 && ${BASH_REMATCH[6]} -gt 0 ]] ||
      fail "process $p sent or received nothing over the network: $line"
    ENDPOINTS="$ENDPOINTS $e"
  done
}

case $case_ in
mpi_mpirun_pmix) # Open MPI's mpirun starts 2 processes and serves PMIx; 6 ranks in all
  command -v mpirun.openmpi >/dev/null || skip "Open MPI is not installed (scripts/install-deps.sh --peers)"
  for prog in "$RING" "$ANYSOURCE"; do
    name=$(basename "$prog")
    run mpirun.openmpi --allow-run-as-root --oversubscribe -n 2 -x SKEIN_NP=6 -x SKEIN_NETSTATS=1 "$prog"
    note "mpirun -n 2, SKEIN_NP=6, $name"
    expect_rc 0 "$name"; expect_pass "$name"; expect_netstats 2 "3 3" 1 1
  done ;;
mpi_slurm_pmi2) # srun --mpi=pmi2 on the one-node Slurm that slurm-local.sh starts
  command -v srun >/dev/null || skip "Slurm is not installed (scripts/install-deps.sh installs slurm-wlm)"
  [[ $(id -u) -eq 0 ]] || skip "starting a local Slurm needs root"
  here=$(cd "$(dirname "$0")" && pwd)
  exec 9>/tmp/skein-slurm.lock # one local cluster at a time on this machine (fixed ports)
  flock -w 80 9 || fail "another test holds the local Slurm"
  trap 'bash "$here/slurm-local.sh" stop 9>&-; cleanup' EXIT
  # A cluster that cannot start here is the machine's problem, not Skein's: skip, loudly.
  if ! bash "$here/slurm-local.sh" start >"$work/slurm-start" 2>&1 9>&-; then
    cat "$work/slurm-start"; tail -5 /tmp/skein-slurm/*.log 2>/dev/null
    skip "the local Slurm did not start (see above)"
  fi
  export SLURM_CONF=/tmp/skein-slurm/slurm.conf
  for prog in "$RING" "$ANYSOURCE"; do
    name=$(basename "$prog")
    run srun --mpi=pmi2 -O -n 2 --export=ALL,SKEIN_NP=6,SKEIN_NETSTATS=1 "$prog"
    note "srun --mpi=pmi2 -n 2, SKEIN_NP=6, $name"
    expect_rc 0 "$name"; expect_pass "$name"; expect_netstats 2 "3 3" 1 1
  done ;;
mpi_kill9) # a process dies of SIGKILL mid-traffic: the survivors end the job within 10 s
  hosts="$(hostname)|$(hostname -s)|$(hostname -f 2>/dev/null || hostname)"
  for tls in default tcp; do
    envs=(); [[ $tls == tcp ]] && envs=(UCX_TLS=tcp)
    run env "${envs[@]}" "$SKEINRUN" -n 4 --procs 2 "$KILL9"
    note "UCX_TLS=$tls"
    [[ $rc -ne 0 ]] || fail "UCX_TLS=$tls: the job exited 0 after losing a process"
    [[ $rc -ne 124 ]] || fail "UCX_TLS=$tls: the job was still running after ${SKEIN_MULTI_LIMIT:-60} s"
    ! grep -q '^FAIL' "$out" || fail "UCX_TLS=$tls: a survivor was still running 30 s after start"
    kill_ms=$(sed -n 's/^mpi_kill9: rank 2 kills its process .* at \([0-9]*\) ms$/\1/p' "$err")
    [[ -n $kill_ms ]] || fail "UCX_TLS=$tls: rank 2 did not report killing its process"
    after=$(( end_ms - kill_ms ))
    [[ $after -lt 10000 ]] || fail "UCX_TLS=$tls: the job ended $after ms after the kill, limit 10000 ms"
    expect_err "skein: lost process 1 \(ranks 2-3, node [0-9]+, host ($hosts)\): .+; ending the job"
    echo "UCX_TLS=$tls: the job ended $after ms after the kill"
    grep -E 'lost process' "$err" | head -3
  done ;;
mpi_lost_once) # a process of four dies: one "lost process" line for it, not one per survivor
  run env UCX_TLS=tcp "$SKEINRUN" -n 4 --procs 4 "$KILL9"
  note "4 processes, process 2 killed"
  [[ $rc -ne 0 && $rc -ne 124 ]] || fail "exit code $rc after losing a process"
  expect_err '^skein: lost process 2 \(rank 2, node [0-9]+, host [^)]+\): .+; ending the job$'
  n=$(grep -c 'lost process' "$err")
  [[ $n -eq 1 ]] || fail "$n 'lost process' lines, expected 1"
  ! grep -q 'UCX transport: process [0-9]* failed' "$err" || fail "the transport's line repeats the report" ;;
mpi_netns) # two "hosts": network namespaces joined by a veth pair, UCX over tcp on it
  [[ $(id -u) -eq 0 ]] || skip "network namespaces need root"
  command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
  nsa=skn-a-$$ nsb=skn-b-$$ dev=sknv # the device has the same name in both namespaces
  trap 'ip netns del "$nsa" 2>/dev/null; ip netns del "$nsb" 2>/dev/null; cleanup' EXIT
  { ip netns add "$nsa" && ip netns add "$nsb" &&
    ip link add $dev netns "$nsa" type veth peer name $dev netns "$nsb" &&
    ip -n "$nsa" addr add 10.231.0.1/24 dev $dev && ip -n "$nsb" addr add 10.231.0.2/24 dev $dev &&
    ip -n "$nsa" link set $dev up && ip -n "$nsb" link set $dev up; } 2>"$work/ns-err" ||
    skip "cannot create network namespaces: $(head -1 "$work/ns-err")"
  # The kernel reports carrier on a new link up to ~1 s later; UCX ignores an interface
  # that is not yet running ("no usable transports/devices").
  for _ in $(seq 50); do
    [[ $(ip netns exec "$nsa" cat /sys/class/net/$dev/operstate) == up &&
       $(ip netns exec "$nsb" cat /sys/class/net/$dev/operstate) == up ]] && break
    sleep 0.1
  done
  # Process 0 runs in namespace a, process 1 in b. Only the veth and a loopback that is
  # down exist there, and UCX_TLS=tcp leaves out shared memory: the link is the only way.
  # skeinrun's key-value service is a Unix socket, reachable from any network namespace.
  wrapper=$work/in-netns
  # shellcheck disable=SC2016 # expanded by the wrapper, per process
  printf '#!/bin/bash\nexec ip netns exec skn-$( ((SKEIN_PROC)) && echo b || echo a )-%s "$@"\n' $$ >"$wrapper"
  chmod +x "$wrapper"
  counter() { ip netns exec "$nsa" cat /sys/class/net/$dev/statistics/"$1"; }
  tx0=$(counter tx_bytes) rx0=$(counter rx_bytes)
  run env UCX_TLS=tcp UCX_NET_DEVICES=$dev SKEIN_NETSTATS=1 "$SKEINRUN" -n 4 --procs 2 "$wrapper" "$RING"
  note "netns ring"
  tx=$(( $(counter tx_bytes) - tx0 )) rx=$(( $(counter rx_bytes) - rx0 ))
  expect_rc 0; expect_pass ring; expect_netstats 2 "2 2" 1 1
  # ring.c with 4 ranks (0-1 in a, 2-3 in b) sends 16 MiB messages 1->2 in its token ring
  # and its shift, 1->2 and 0->3 in its two-way exchange: 64 MiB from a to b, and as much
  # back (3->0, 3->0, 2->1 and 3->0). Smaller sizes add about 9 MiB more each way.
  need=$(( 64 << 20 ))
  echo "veth in $nsa: sent $tx bytes, received $rx bytes (at least $need each way needed)"
  [[ $tx -ge $need ]] || fail "only $tx bytes left namespace a over $dev, expected >= $need"
  [[ $rx -ge $need ]] || fail "only $rx bytes reached namespace a over $dev, expected >= $need" ;;
mpi_netstats) # connection state is per process: 16 ranks all-to-all over 4 processes
  run env SKEIN_NETSTATS=1 "$SKEINRUN" -n 16 --procs 4 "$STORM"
  note "storm -n 16 --procs 4"
  expect_rc 0; expect_pass storm
  # Every rank sends to every rank, so each process talks to the 3 others: 3 endpoints,
  # where one per remote rank pair would be 4 local ranks x 12 remote ones = 48.
  expect_netstats 4 "4 4 4 4" 3 3
  echo "endpoints per process:$ENDPOINTS" ;;
*) echo "unknown case $case_"; exit 2 ;;
esac
echo "PASS $case_"
