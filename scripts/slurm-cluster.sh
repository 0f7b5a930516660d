#!/usr/bin/env bash
# A real Slurm cluster (slurm-wlm 22.05 + munge) of several named nodes on this one host, for the
# integration tests (tests/integration/test_slurm.py). Recipe: the project's
# slurm-on-one-host notes (outside this repository); this script is all the tests need.
#
# Usage: scripts/slurm-cluster.sh start|stop|status [DIR]
#   start   idempotent: a cluster already running in DIR is left as it is; waits (at most 60 s)
#           until every node is idle, then runs one step on every node (at most 60 s) to prove
#           that jobs run. Needs root (slurmd runs jobs as any user). A cluster that is not
#           running starts empty: the job and node state, spools and job ids of an earlier run
#           in DIR (a CI machine's /tmp outlives its processes) are removed first, and a pid
#           file counts only while its pid is still that daemon (after a reboot, another
#           process may have the pid).
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

# pid_alive FILE NAME [NODE]: FILE's pid is alive and is the daemon NAME (for slurmd: of NODE).
pid_alive() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] || return 1
  [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ] || return 1
  [ -z "${3:-}" ] || tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "-N $3 " || return 1
}

# An earlier run's leftovers in DIR, before a cluster starts there: its saved jobs and nodes
# (a node saved idle whose slurmd is gone takes jobs that never start), spools and job log.
forget_earlier_run() {
  local n
  for n in $(node_names); do stop_pid "$dir/run/slurmd-$n.pid" slurmd "$n"; done
  rm -rf "$dir/state" "$dir/spool" "$dir/log/jobcomp.txt" "$dir"/run/*.pid
  mkdir -p "$dir/state" "$dir/spool"
}

# Where a cluster that does not work says why: its nodes, queue and the daemons' last lines.
report() {
  sinfo -N -o '%N %T %E' >&2 || true
  squeue >&2 || true
  tail -n 20 "$dir"/log/*.log >&2 || true
}

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
  states=$(timeout 10 sinfo -h -N -o '%N %t' 2>/dev/null) || return 1
  [ "$(echo "$states" | grep -cE ' (idle|mix|alloc)$')" -ge "$nodes" ]
}

start() {
  [ "$(id -u)" -eq 0 ] || { echo "slurm-cluster: needs root" >&2; exit 77; }
  write_conf
  add_hosts
  pid_alive "$dir/run/slurmctld.pid" slurmctld || forget_earlier_run
  pid_alive "$dir/munge/munged.pid" munged || munged --socket="$dir/munge/munge.socket" \
    --key-file="$dir/munge/munge.key" --pid-file="$dir/munge/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" --force
  pid_alive "$dir/run/slurmctld.pid" slurmctld || slurmctld -f "$SLURM_CONF"
  for n in $(node_names); do
    pid_alive "$dir/run/slurmd-$n.pid" slurmd "$n" || slurmd -f "$SLURM_CONF" -N "$n"
  done
  local idle=0
  for _ in $(seq 1 120); do
    all_idle && { idle=1; break; }
    sleep 0.5
  done
  if ((!idle)); then
    echo "slurm-cluster: nodes not idle after 60 s:" >&2
    report
    exit 1
  fi
  # Idle is slurmctld's word; a step on every node is the proof that jobs run.
  if ! timeout 60 srun --quiet -N "$nodes" -n "$nodes" -J tv-cluster-check -t 1 true; then
    echo "slurm-cluster: a one-step job on all $nodes nodes did not run within 60 s:" >&2
    report
    exit 1
  fi
  sinfo -N
}

stop_pid() {
  local f=$1
  pid_alive "$@" || return 0
  local pid
  pid=$(cat "$f")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  if [ -f "$SLURM_CONF" ] && pid_alive "$dir/run/slurmctld.pid" slurmctld; then
    scancel --full --quiet "--partition=tv" 2>/dev/null || true
  fi
  for n in $(node_names); do stop_pid "$dir/run/slurmd-$n.pid" slurmd "$n"; done
  stop_pid "$dir/run/slurmctld.pid" slurmctld
  stop_pid "$dir/munge/munged.pid" munged
  remove_hosts
}

case $cmd in
  start) start ;;
  stop) stop ;;
  status) all_idle ;;
  *) echo "usage: $0 start|stop|status [DIR]" >&2; exit 64 ;;
esac
