#!/usr/bin/env bash
# netcompare.sh — Skein's UCX transport (netpingpong, no MPI) beside ucx_perftest and MPICH
# (ch4:ucx, apps/bench/pingpong.c built with mpicc.mpich) on the same UCX transport, two
# processes on this machine. Prints one line per figure and the ratios to Skein.
#   apps/bench/netcompare.sh [BUILD_DIR] [TLS...]     (default: build, tcp sm)
# Latency: 8-byte half round trip (us). Bandwidth: 4 MiB, window of 32 (MB/s).
# Needs: ucx_perftest (ucx-utils: scripts/install-deps.sh --peers); MPICH is skipped if
# mpicc.mpich is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
shift || true
tls_list=("${@:-tcp}")
[[ $# -eq 0 ]] && tls_list=(tcp sm)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
reps=${REPS:-9}

have_mpich=0
if command -v mpicc.mpich >/dev/null; then
  mpicc.mpich -O2 -o "$work/pingpong.mpich" "$here/pingpong.c" && have_mpich=1
fi

perftest() { # TEST SIZE -> median latency (us) or bandwidth (MB/s) from the Final line
  local port=$((20000 + RANDOM % 20000)) col
  ucx_perftest -p $port >/dev/null 2>&1 &
  local srv=$!
  sleep 0.5
  case $1 in *lat) col=3 ;; *) col=6 ;; esac
  ucx_perftest -p $port localhost -t "$1" -s "$2" -n "$3" ${4:+-W $4} 2>/dev/null |
    awk -v c=$col '/^Final:/ {print $c}'
  wait $srv 2>/dev/null || true
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

for tls in "${tls_list[@]}"; do
  export UCX_TLS=$tls
  echo "# UCX_TLS=$tls"
  out=$("$build/bin/skeinrun" --procs 2 "$build/bin/netpingpong" --sizes 8,4194304 --reps "$reps")
  s_lat=$(awk -F'[ =]' '/^size=8 / {print $4}' <<<"$out")
  s_bw=$(awk -F'[ =]' '/^size=4194304 / {print $6}' <<<"$out")
  idle=$(awk -F= '/^progress_idle_ns/ {print $2}' <<<"$out")
  echo "skein_net   lat_8B_us=$s_lat bw_4MiB_MBps=$s_bw progress_idle_ns=$idle"
  p_tlat=$(perftest tag_lat 8 100000); p_alat=$(perftest ucp_am_lat 8 100000)
  p_bw=$(perftest tag_bw 4194304 400 32)
  echo "ucx_perftest tag_lat_8B_us=$p_tlat ucp_am_lat_8B_us=$p_alat tag_bw_4MiB_MBps=$p_bw" \
       "(skein/perftest: lat $(ratio "$s_lat" "$p_tlat") vs tag, $(ratio "$s_lat" "$p_alat") vs am;" \
       "bw $(ratio "$s_bw" "$p_bw"))"
  if [[ $have_mpich == 1 ]]; then
    m=$(mpiexec.mpich -n 2 "$work/pingpong.mpich" latency --sizes 8 --reps "$reps")
    m_lat=$(awk '/^latency bytes=8 / {sub("usec=", "", $3); print $3}' <<<"$m")
    m=$(mpiexec.mpich -n 2 "$work/pingpong.mpich" bandwidth --sizes 4194304 --window 32 --reps "$reps")
    m_bw=$(awk '/^bandwidth bytes=4194304 / {sub("MBps=", "", $3); print $3}' <<<"$m")
    echo "mpich       lat_8B_us=$m_lat bw_4MiB_MBps=$m_bw" \
         "(skein/mpich: lat $(ratio "$s_lat" "$m_lat"), bw $(ratio "$s_bw" "$m_bw"))"
  fi
done
