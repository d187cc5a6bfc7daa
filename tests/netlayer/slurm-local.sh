#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for testing Skein under srun.
#   slurm-local.sh start   writes a configuration, starts munged (if needed), slurmctld and
#                          slurmd, waits until the node is idle, prints "SLURM_CONF=<path>"
#   slurm-local.sh stop    stops the daemons it started
# State lives in $SKEIN_SLURM_DIR (default /tmp/skein-slurm). Needs root and Debian's
# slurm-wlm (scripts/install-deps.sh installs it). Then: SLURM_CONF=<path> srun --mpi=pmi2 ...
set -euo pipefail
dir=${SKEIN_SLURM_DIR:-/tmp/skein-slurm}
conf=$dir/slurm.conf

stop() {
  for d in slurmd slurmctld; do
    if [[ -f $dir/$d.pid ]]; then
      pid=$(cat "$dir/$d.pid")
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      rm -f "$dir/$d.pid"
    fi
  done
}

start() {
  command -v slurmctld >/dev/null || { echo "slurm-local: slurm-wlm is not installed" >&2; exit 1; }
  [[ $(id -u) -eq 0 ]] || { echo "slurm-local: needs root" >&2; exit 1; }
  stop
  mkdir -p "$dir/state" "$dir/spool"
  host=$(hostname -s)
  cat >"$conf" <<EOF
ClusterName=skein
SlurmctldHost=$host
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  # munge authenticates Slurm's messages; the package made a key, the daemon may be down.
  if ! pgrep -x munged >/dev/null; then
    mkdir -p /run/munge && chown munge: /run/munge
    su -s /bin/sh munge -c munged
  fi
  export SLURM_CONF=$conf
  slurmctld -i
  slurmd
  for _ in $(seq 100); do
    if sinfo -h -o %t 2>/dev/null | grep -qx idle; then
      echo "SLURM_CONF=$conf"
      return 0
    fi
    sleep 0.2
  done
  echo "slurm-local: the node did not become idle; see $dir/*.log" >&2
  return 1
}

case ${1:-} in
start) start ;;
stop) stop ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
