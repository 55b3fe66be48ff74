#!/usr/bin/env bash
# slurm-cluster.sh starts, inspects and stops a throwaway single-node Slurm
# cluster on localhost, for testing tempora's Slurm export against a real
# scheduler (make test-slurm). Everything lives in one directory: the munge
# key and socket, slurm.conf, the controller's state, the node's spool and
# every log. No system file is read or changed, and no systemd is needed.
#
# Usage:
#   scripts/slurm-cluster.sh start DIR    create DIR (absent or empty), start
#                                          munged, slurmctld and slurmd in it
#                                          and wait until the node is idle
#   scripts/slurm-cluster.sh status DIR   show the controller and the node
#   scripts/slurm-cluster.sh stop DIR     cancel every job, stop the daemons,
#                                          end any process left over from the
#                                          cluster and remove DIR
#   scripts/slurm-cluster.sh exec CMD...  run CMD against a cluster in a
#                                          temporary directory (SLURM_CONF
#                                          set), then stop it whatever happens
#
# After start, point the Slurm commands at the cluster with
#   export SLURM_CONF=DIR/slurm.conf
#
# Requirements: root (the daemons run as SlurmUser=root), Debian's slurm-wlm
# and munge packages (apt-get install slurm-wlm munge), and two free TCP ports
# (the first free pair from 16817/16818 upwards, or SLURM_CLUSTER_PORT and
# SLURM_CLUSTER_PORT+1). SLURM_CLUSTER_TIMEOUT bounds every wait (seconds,
# default 60). A failure prints one line starting "slurm-cluster:" and the
# tail of the relevant log, and exits 1.
set -euo pipefail

prog=slurm-cluster
timeout=${SLURM_CLUSTER_TIMEOUT:-60}

die() {
	echo "$prog: $*" >&2
	exit 1
}

usage() {
	sed -n '/^# Usage:/,/^# After start/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

# need checks that every program named is on PATH.
need() {
	local missing=()
	for p in "$@"; do
		command -v "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	if ((${#missing[@]})); then
		die "missing ${missing[*]} (on Debian: apt-get install -y slurm-wlm munge)"
	fi
}

# absdir prints the absolute path of directory $1 (which need not exist).
absdir() {
	case $1 in
	/*) printf '%s\n' "$1" ;;
	*) printf '%s/%s\n' "$PWD" "$1" ;;
	esac
}

# port_busy succeeds if TCP port $1 is listening (IPv4 or IPv6).
port_busy() {
	local hex
	hex=$(printf ':%04X ' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p="$hex" 'index($2 " ", p) && $4 == "0A" { found = 1 } END { exit !found }'
}

pick_port() {
	if [[ -n ${SLURM_CLUSTER_PORT:-} ]]; then
		[[ $SLURM_CLUSTER_PORT =~ ^[0-9]+$ ]] || die "SLURM_CLUSTER_PORT=$SLURM_CLUSTER_PORT is not a port number"
		echo "$SLURM_CLUSTER_PORT"
		return
	fi
	local p
	for ((p = 16817; p < 17817; p += 2)); do
		if ! port_busy "$p" && ! port_busy $((p + 1)); then
			echo "$p"
			return
		fi
	done
	die "no free pair of TCP ports between 16817 and 17817 (set SLURM_CLUSTER_PORT)"
}

# wait_for runs "$@" until it succeeds or the timeout passes.
wait_for() {
	local deadline=$((SECONDS + timeout))
	until "$@" >/dev/null 2>&1; do
		((SECONDS < deadline)) || return 1
		sleep 0.2
	done
}

# logtail prints the last lines of each log file given, for a failure report.
logtail() {
	local f
	for f in "$@"; do
		[[ -s $f ]] || continue
		echo "--- last lines of $f" >&2
		tail -n 15 "$f" >&2
	done
}

# daemon_pid prints the pid in pid file $1 if that process is alive and
# named $2 (so a recycled pid is never taken for ours).
daemon_pid() {
	local pid comm
	[[ -r $1 ]] || return 1
	pid=$(<"$1")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	{ read -r comm <"/proc/$pid/comm"; } 2>/dev/null || return 1
	[[ $comm == "$2" ]] || return 1
	echo "$pid"
}

# cluster_pids prints every process left from the cluster in $dir other
# than the daemons the pid files name: processes whose working directory is
# the cluster's log or spool directory (the daemons' and slurmstepd's), their
# descendants, and job processes (their environment holds a SLURM_JOB_ID and
# names this cluster's slurm.conf) that a dead slurmstepd left to init.
cluster_pids() {
	# Only shell builtins in the loop: it visits every process.
	local p pid ppid rest e job conf
	local -a env
	local -A parent=() ours=()
	for p in /proc/[0-9]*; do
		pid=${p#/proc/}
		# /proc/PID/stat: pid (comm) state ppid ...; comm may hold blanks.
		{ read -r rest <"$p/stat"; } 2>/dev/null || continue
		rest=${rest##*) }
		ppid=${rest#* }
		ppid=${ppid%% *}
		parent[$pid]=$ppid
		if [[ $p/cwd -ef $dir/log || $p/cwd -ef $dir/spool ]]; then
			ours[$pid]=1
			continue
		fi
		{ mapfile -d '' env <"$p/environ"; } 2>/dev/null || continue
		job= conf=
		for e in "${env[@]}"; do
			case $e in
			SLURM_JOB_ID=*) job=1 ;;
			"SLURM_CONF=$dir/slurm.conf") conf=1 ;;
			esac
		done
		if [[ -n $job && -n $conf ]]; then
			ours[$pid]=1
		fi
	done
	# Add descendants until nothing changes.
	local changed=1
	while ((changed)); do
		changed=0
		for pid in "${!parent[@]}"; do
			if [[ -z ${ours[$pid]:-} && -n ${ours[${parent[$pid]}]:-} ]]; then
				ours[$pid]=1
				changed=1
			fi
		done
	done
	for pid in "${!ours[@]}"; do
		((pid == $$ || pid == BASHPID)) || echo "$pid"
	done
}

# stop_pid sends SIGTERM to $2 (named $1), waits for it to go, and sends
# SIGKILL if it outlives the grace period.
stop_pid() {
	local name=$1 pid=$2 i
	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 50; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "$prog: $name (pid $pid) ignored SIGTERM for 5 s; killing it" >&2
	kill -KILL "$pid" 2>/dev/null || true
}

write_conf() {
	local port=$1 cpus mem
	cpus=$(nproc)
	# RealMemory in MB, a little below what the machine has; with
	# SlurmdParameters=config_overrides the node is never drained for it.
	mem=$(awk '/^MemTotal:/ { m = int($2 / 1024 * 0.9); print (m > 0 ? m : 1) }' /proc/meminfo)
	cat >"$dir/slurm.conf" <<EOF
# A single-node test cluster written by scripts/slurm-cluster.sh.
ClusterName=tempora-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
PlugStackConfig=$dir/plugstack.conf
TmpFS=$dir/tmp
MpiDefault=none
# Signals (scancel, time limits) go to the job's process group. With
# proctrack/linuxproc, scancel left running a program whose file name holds
# a blank (Slurm 22.05), which make test-slurm uses on purpose.
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SwitchType=switch/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MailProg=/bin/true
# Finished jobs stay visible to scontrol for 10 minutes (there is no
# accounting database to ask instead).
MinJobAge=600
KillWait=5
InactiveLimit=0
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
	: >"$dir/plugstack.conf"
}

node_idle() {
	[[ $(sinfo -h -N -o %T 2>/dev/null) == idle ]]
}

start() {
	need munge munged mungekey slurmctld slurmd sinfo squeue scancel scontrol
	((EUID == 0)) || die "start must run as root (the test cluster's daemons run as SlurmUser=root)"
	if [[ -e $dir ]] && [[ -n $(ls -A "$dir") ]]; then
		die "$dir exists and is not empty"
	fi
	# munged insists that every directory above its socket be searchable by
	# everyone.
	local up
	up=$(dirname "$dir")
	while [[ $up != / ]]; do
		if [[ -d $up ]] && [[ $(stat -c %A "$up") != ?????????[xt] ]]; then
			die "munged needs every directory above its socket to be searchable by everyone; $up is not (chmod o+x it, or choose another DIR)"
		fi
		up=$(dirname "$up")
	done
	mkdir -p "$dir"/{munge,state,spool,log,run,tmp}
	chmod 755 "$dir" "$dir/munge"
	local port
	port=$(pick_port)
	write_conf "$port"
	export SLURM_CONF=$dir/slurm.conf

	# If anything below fails, take down what did start (exec has its own
	# EXIT trap that does so).
	local own_trap=
	if [[ -z $(trap -p EXIT) ]]; then
		own_trap=1
		trap 'echo "$prog: start failed; stopping what was started" >&2; stop_daemons' EXIT
	fi

	mungekey --create --bits=1024 --keyfile="$dir/munge/munge.key" >/dev/null 2>&1 ||
		die "mungekey could not create $dir/munge/munge.key"
	munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
		--pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
		--seed-file="$dir/munge/munged.seed" ||
		{ logtail "$dir/munge/munged.log"; die "munged did not start"; }
	wait_for munge --socket="$dir/munge/munge.socket" --no-input ||
		{ logtail "$dir/munge/munged.log"; die "munged is not answering on $dir/munge/munge.socket after ${timeout} s"; }

	slurmctld -f "$dir/slurm.conf" ||
		{ logtail "$dir/log/slurmctld.log"; die "slurmctld did not start"; }
	wait_for scontrol ping ||
		{ logtail "$dir/log/slurmctld.log"; die "slurmctld is not answering on port $port after ${timeout} s"; }
	slurmd -f "$dir/slurm.conf" -N localhost ||
		{ logtail "$dir/log/slurmd.log"; die "slurmd did not start"; }
	wait_for node_idle ||
		{ sinfo -N -l >&2 || true; logtail "$dir/log/slurmctld.log" "$dir/log/slurmd.log"; die "node localhost is not idle after ${timeout} s"; }
	if [[ -n $own_trap ]]; then trap - EXIT; fi
	echo "$prog: cluster up in $dir (ports $port and $((port + 1)))"
	echo "export SLURM_CONF=$(printf '%q' "$dir/slurm.conf")"
}

# step_sockets succeeds if a slurmstepd socket is left in the spool
# directory.
step_sockets() {
	local f
	for f in "$dir"/spool/*; do
		[[ -S $f ]] && return 0
	done
	return 1
}

# stop_daemons cancels every job, stops slurmd, slurmctld and munged, and
# ends any process left from the cluster. It is safe on a half-started or
# already stopped cluster.
stop_daemons() {
	export SLURM_CONF=$dir/slurm.conf
	local pid deadline
	if pid=$(daemon_pid "$dir/run/slurmctld.pid" slurmctld); then
		if [[ -n $(squeue -h -o %i 2>/dev/null) ]]; then
			scancel --quiet "--user=$(id -un)" 2>/dev/null || true
			deadline=$((SECONDS + 30))
			while [[ -n $(squeue -h -o %i 2>/dev/null) ]] && ((SECONDS < deadline)); do
				sleep 0.2
			done
		fi
	fi
	# A job step's slurmstepd may outlive the job's last appearance in
	# squeue by a moment; its socket in the spool directory goes with it.
	deadline=$((SECONDS + 15))
	while step_sockets && ((SECONDS < deadline)); do
		sleep 0.2
	done
	if pid=$(daemon_pid "$dir/run/slurmd.pid" slurmd); then stop_pid slurmd "$pid"; fi
	if pid=$(daemon_pid "$dir/run/slurmctld.pid" slurmctld); then stop_pid slurmctld "$pid"; fi
	if pid=$(daemon_pid "$dir/munge/munged.pid" munged); then stop_pid munged "$pid"; fi
	local left
	left=$(cluster_pids | tr '\n' ' ')
	if [[ -n $left ]]; then
		echo "$prog: ending processes left from the cluster: $left" >&2
		# shellcheck disable=SC2086
		kill -KILL $left 2>/dev/null || true
	fi
}

stop() {
	[[ -d $dir ]] || die "$dir: no such cluster directory"
	[[ -e $dir/slurm.conf ]] || die "$dir does not hold a cluster (no slurm.conf); not touching it"
	stop_daemons
	rm -rf -- "$dir"
}

status() {
	[[ -e $dir/slurm.conf ]] || die "$dir does not hold a cluster (no slurm.conf)"
	export SLURM_CONF=$dir/slurm.conf
	local name ok=0
	for name in munged slurmctld slurmd; do
		local file=$dir/run/$name.pid
		[[ $name == munged ]] && file=$dir/munge/munged.pid
		if pid=$(daemon_pid "$file" "$name"); then
			echo "$name: running (pid $pid)"
		else
			echo "$name: not running"
			ok=1
		fi
	done
	scontrol ping || ok=1
	sinfo -N -l || ok=1
	squeue || ok=1
	return "$ok"
}

cmd=${1:-}
case $cmd in
start | stop | status)
	[[ $# -eq 2 ]] || usage
	dir=$(absdir "$2")
	"$cmd"
	;;
exec)
	shift
	[[ $# -ge 1 ]] || usage
	base=$(mktemp -d "${TMPDIR:-/tmp}/slurm-cluster.XXXXXX")
	chmod 755 "$base"
	dir=$base/cluster
	trap 'stop_daemons; rm -rf -- "$base"' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	start
	export SLURM_CONF=$dir/slurm.conf
	set +e
	"$@"
	rc=$?
	set -e
	exit "$rc"
	;;
*)
	usage
	;;
esac
