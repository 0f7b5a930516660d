#!/usr/bin/env bash
# A real Slurm cluster (slurm-wlm 22.05 + munge) of several named nodes on this one host, for the
# integration tests (tests/integration/test_slurm.py). Recipe: the project's
# slurm-on-one-host notes (outside this repository); this script is all the tests need.
#
# Usage: scripts/slurm-cluster.sh start|stop|status [DIR]
#   start   idempotent: a cluster already running in DIR is left as it is; waits (at most 60 s)
#           until every node is idle. Needs root (slurmd runs jobs as any user).
#   stop    stops every daemon by the pid in its pid file, removes the /etc/hosts entries.
#   status  exit 0 when the cluster answers and every node is up.
# DIR defaults to $TV_SLURM_DIR or /tmp/tv-slurm. Clients use SLURM_CONF=DIR/slurm.conf.
# Nodes: tvn1..tvn$TV_SLURM_NODES (default 3), 2 CPUs each, all at 127.0.0.1; the names resolve
# through /etc/hosts lines marked "# tv-slurm".
set -euo pipefail

cmd=${1:-status}
dir=${2:-${TV_SLURM_DIR:-/tmp/tv-slurm}}
nodes=${TV_SLURM_NODES:-3}
ctld_port=${TV_SLURM_PORT:-16817}
export SLURM_CONF=$dir/slurm.conf

node_names() { for i in $(seq 1 "$nodes"); do echo "tvn$i"; done; }

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_conf() {
  mkdir -p "$dir"/{spool,run,log,state,munge}
  chmod 700 "$dir/munge"
  [ -f "$dir/munge/munge.key" ] || {
    head -c 1024 /dev/urandom >"$dir/munge/munge.key"
    chmod 400 "$dir/munge/munge.key"
  }
  {
    echo "ClusterName=tvtest"
    echo "SlurmctldHost=localhost(127.0.0.1)"
    echo "SlurmctldPort=$ctld_port"
    echo "AuthType=auth/munge"
    echo "AuthInfo=socket=$dir/munge/munge.socket"
    echo "CredType=cred/munge"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "StateSaveLocation=$dir/state"
    echo "SlurmdSpoolDir=$dir/spool/%n"
    echo "SlurmctldPidFile=$dir/run/slurmctld.pid"
    echo "SlurmdPidFile=$dir/run/slurmd-%n.pid"
    echo "SlurmctldLogFile=$dir/log/slurmctld.log"
    echo "SlurmdLogFile=$dir/log/slurmd-%n.log"
    echo "SlurmdDebug=verbose"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/filetxt"
    echo "JobCompLoc=$dir/log/jobcomp.txt"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_CPU"
    echo "SwitchType=switch/none"
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    # Slurm's default, and what the tests rely on: the rendered --grace-period 25 and a worker
    # that takes 10 s to save at the time limit both fit inside it.
    echo "KillWait=30"
    echo "MinJobAge=30"
    echo "SlurmdTimeout=60"
    local port=$((ctld_port + 1))
    for n in $(node_names); do
      echo "NodeName=$n NodeAddr=127.0.0.1 Port=$port CPUs=2 State=UNKNOWN"
      port=$((port + 1))
    done
    echo "PartitionName=tv Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
  } >"$dir/slurm.conf.new"
  mv "$dir/slurm.conf.new" "$dir/slurm.conf"
}

add_hosts() {
  grep -q '# tv-slurm' /etc/hosts && return 0
  echo "127.0.0.1 $(node_names | tr '\n' ' ')# tv-slurm" >>/etc/hosts
}

remove_hosts() {
  grep -q '# tv-slurm' /etc/hosts || return 0
  # /etc/hosts may be a bind mount: rewrite it in place rather than replacing the file.
  local kept
  kept=$(grep -v '# tv-slurm' /etc/hosts)
  printf '%s\n' "$kept" >/etc/hosts
}

all_idle() {
  local states
  states=$(sinfo -h -N -o '%N %t' 2>/dev/null) || return 1
  [ "$(echo "$states" | grep -cE ' (idle|mix|alloc)$')" -ge "$nodes" ]
}

start() {
  [ "$(id -u)" -eq 0 ] || { echo "slurm-cluster: needs root" >&2; exit 77; }
  write_conf
  add_hosts
  pid_alive "$dir/munge/munged.pid" || munged --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" --force
  pid_alive "$dir/run/slurmctld.pid" || slurmctld -f "$SLURM_CONF"
  for n in $(node_names); do
    pid_alive "$dir/run/slurmd-$n.pid" || slurmd -f "$SLURM_CONF" -N "$n"
  done
  for _ in $(seq 1 120); do
    if all_idle; then
      sinfo -N
      return 0
    fi
    sleep 0.5
  done
  echo "slurm-cluster: nodes not idle after 60 s:" >&2
  sinfo -N >&2 || true
  tail -n 20 "$dir"/log/*.log >&2 || true
  exit 1
}

stop_pid() {
  local f=$1
  pid_alive "$f" || return 0
  local pid
  pid=$(cat "$f")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  if [ -f "$SLURM_CONF" ] && pid_alive "$dir/run/slurmctld.pid"; then
    scancel --full --quiet "--partition=tv" 2>/dev/null || true
  fi
  for n in $(node_names); do stop_pid "$dir/run/slurmd-$n.pid"; done
  stop_pid "$dir/run/slurmctld.pid"
  stop_pid "$dir/munge/munged.pid"
  remove_hosts
}

case $cmd in
  start) start ;;
  stop) stop ;;
  status) all_idle ;;
  *) echo "usage: $0 start|stop|status [DIR]" >&2; exit 64 ;;
esac
