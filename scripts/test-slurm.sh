#!/usr/bin/env bash
# test-slurm.sh tests tempora's Slurm export end to end against a real
# scheduler (make test-slurm): it starts a throwaway single-node cluster
# (scripts/slurm-cluster.sh), exports a 2-model table1 suite in 2 shards and
# submits the job array with sbatch. As soon as a record appears it cancels
# the array (scancel sends SIGTERM: tempora must log its one-line message,
# keep its records and leave no temporary file), resubmits the same file,
# which must resume and complete, merges the shards, renders the report, and
# checks that records and report equal those of an unsharded local run apart
# from runtimes (internal/tools/reportdiff). Every path
# involved (the output directory and the binary) holds a blank, a single
# quote and a percent sign, which the job file must quote for sbatch and the
# shell.
#
# Environment:
#   TEMPORA_BIN          the tempora binary to test (default bin/tempora)
#   TEST_SLURM_FLAGS     the suite flags (default "-suite table1 -models 2
#                        -quick"; drop -quick for paper scale, about 1 minute
#                        of CPU per model and method set)
#   TEST_SLURM_TIMEOUT   seconds to wait for the job array (default 600)
#   TEST_SLURM_KEEP=1    keep the work directory (it is printed)
#
# Needs root, slurm-wlm and munge (see scripts/slurm-cluster.sh) and go.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${TEMPORA_BIN:-$root/bin/tempora}
read -r -a suite <<<"${TEST_SLURM_FLAGS:--suite table1 -models 2 -quick}"
timeout=${TEST_SLURM_TIMEOUT:-600}
go=${GO:-go}

say() { echo "test-slurm: $*"; }
fail() {
	echo "test-slurm: FAIL: $*" >&2
	exit 1
}

[[ -x $bin ]] || fail "$bin is not an executable (run make build, or set TEMPORA_BIN)"

work=$(mktemp -d "${TMPDIR:-/tmp}/tempora-test-slurm.XXXXXX")
chmod 755 "$work" # munged wants the directories above its socket searchable
cluster=$work/cluster
cleanup() {
	local rc=$?
	trap - EXIT INT TERM
	if [[ -e $cluster/slurm.conf ]]; then
		"$root/scripts/slurm-cluster.sh" stop "$cluster" || rc=1
	fi
	if [[ ${TEST_SLURM_KEEP:-} == 1 ]]; then
		say "kept $work"
	else
		rm -rf -- "$work"
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'echo "test-slurm: FAIL: line $LINENO: $BASH_COMMAND exited with status $?" >&2' ERR
trap 'exit 130' INT
trap 'exit 143' TERM

# Blanks, a single quote and a percent sign (a Slurm file-name pattern
# character) in every path the job file names.
dir="$work/runs dir/it's 100%"
mkdir -p "$dir"
job_bin="$dir/tempora bin"
cp "$bin" "$job_bin"
sharded=$dir/sharded
local_run=$dir/local

start=$SECONDS
"$root/scripts/slurm-cluster.sh" start "$cluster"
export SLURM_CONF=$cluster/slurm.conf
say "cluster up in $((SECONDS - start)) s"

"$bin" export "${suite[@]}" -workers 1 -shards 2 -out "$sharded" -binary "$job_bin" slurm >"$dir/job.sh"
mkdir -p "$sharded/logs"

# submit submits the job file and sets jobid.
submit() {
	jobid=$(sbatch --parsable "$dir/job.sh") || fail "sbatch refused $dir/job.sh:$(printf '\n%s' "$(cat "$dir/job.sh")")"
	jobid=${jobid%%;*}
}

# show_logs prints the tail of every job log, for a failure report.
show_logs() {
	local f
	for f in "$sharded"/logs/*; do
		[[ -f $f ]] || continue
		echo "--- $f" >&2
		tail -n 20 "$f" >&2
	done
}

# wait_gone waits (bounded) until every task of job array $jobid has left
# the queue.
wait_gone() {
	local deadline=$((SECONDS + timeout))
	while [[ -n $(squeue -h -j "$jobid" -o %i 2>/dev/null) ]]; do
		if ((SECONDS >= deadline)); then
			squeue >&2 || true
			show_logs
			fail "job array $jobid still queued or running after $timeout s"
		fi
		sleep 0.5
	done
}

# states prints "JobState=S ExitCode=E" for every task of job array $jobid
# (finished jobs stay known to the controller for MinJobAge, 10 minutes in
# the test cluster).
states() {
	scontrol -o show job "$jobid" | grep -o 'JobState=[A-Z_]* .*ExitCode=[0-9:]*' | sed 's/ .*ExitCode=/ ExitCode=/'
}

records() { find "$sharded" -path '*/records/*' -name '*.json' | wc -l; }

# 1. Submit, and cancel the array as soon as a shard has written a record:
# scancel sends SIGTERM, which tempora must survive cleanly.
submit
say "submitted job array $jobid (2 shards): ${suite[*]}"
t0=$SECONDS
deadline=$((SECONDS + timeout))
until (($(records) > 0)); do
	[[ -n $(squeue -h -j "$jobid" -o %i 2>/dev/null) ]] || { show_logs; fail "job array $jobid ended before writing a record"; }
	((SECONDS < deadline)) || { show_logs; fail "no record after $timeout s"; }
	sleep 0.2
done
scancel "$jobid"
wait_gone
kept=$(records)
say "cancelled job array $jobid after $((SECONDS - t0)) s with $kept records written: $(states | tr '\n' ' ')"
interrupted=0
for i in 0 1; do
	f=$sharded/logs/shard-$i.err
	if [[ -f $f ]] && [[ $(tail -n 1 "$f") == "tempora: run: interrupted by SIGTERM; finished records are kept, rerun the same command to resume" ]]; then
		interrupted=$((interrupted + 1))
	fi
done
((interrupted > 0)) || { show_logs; fail "no shard log ends with tempora's SIGTERM message"; }
left=$(find "$sharded" -name '*.tmp*')
[[ -z $left ]] || fail "in-flight files left after scancel: $left"

# 2. Resubmit the same file: the shards resume and complete.
submit
say "resubmitted as job array $jobid"
t0=$SECONDS
wait_gone
say "job array finished in $((SECONDS - t0)) s"
st=$(states)
if [[ $(grep -c . <<<"$st") != 2 || $(grep -c '^JobState=COMPLETED ExitCode=0:0$' <<<"$st") != 2 ]]; then
	echo "$st" >&2
	show_logs
	fail "want 2 array tasks COMPLETED with exit code 0:0"
fi
resumed=0
for i in 0 1; do
	[[ -f $sharded/logs/shard-$i.out && -f $sharded/logs/shard-$i.err ]] ||
		fail "no log files $sharded/logs/shard-$i.{out,err}: the #SBATCH --output/--error paths were not honoured"
	grep -q 'items already done' "$sharded/logs/shard-$i.err" && resumed=$((resumed + 1))
	n=$(find "$sharded/shard-$i/records" -name '*.json' | wc -l)
	((n > 0)) || fail "shard $i wrote no records"
	say "shard $i: $n records, log $sharded/logs/shard-$i.err"
done
((resumed > 0)) || { show_logs; fail "no shard resumed (no 'items already done' in the logs)"; }

"$bin" merge -out "$sharded/merged" "$sharded/shard-0" "$sharded/shard-1"
"$bin" report -in "$sharded/merged"

t0=$SECONDS
"$bin" run "${suite[@]}" -out "$local_run" 2>"$dir/local.log" || { tail -n 20 "$dir/local.log" >&2; fail "the local run failed"; }
"$bin" report -in "$local_run"
say "unsharded local run in $((SECONDS - t0)) s"

(cd "$root" && "$go" run ./internal/tools/reportdiff "$local_run" "$sharded/merged") ||
	fail "the Slurm run differs from the local run"
say "PASS ($((SECONDS - start)) s)"
