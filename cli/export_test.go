package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/experiments"
)

// TestExportNoShardFlag checks that export neither lists nor accepts -shard
// (it used to do both and ignore the value): the job file always runs every
// shard.
func TestExportNoShardFlag(t *testing.T) {
	help := mustRun(t, "export", "-h")
	for line := range strings.SplitSeq(help, "\n") {
		if strings.HasPrefix(line, "  -shard ") {
			t.Errorf("export -h lists %q", line)
		}
	}
	_, _, err := runCmd(t, "export", "-suite", "table1", "-shards", "2", "-shard", "0/2", "-out", "x", "slurm")
	var u usageError
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "-shard") {
		t.Errorf("export -shard 0/2: error %v, want a usage error naming -shard", err)
	}
}

// TestExportPathsWithSpaces checks the job files for an output directory and
// a binary whose paths hold blanks, a percent sign and a dollar sign: the
// #SBATCH --output/--error values are double-quoted with % doubled, the shell
// words single-quoted, and the HTCondor paths left verbatim with $ escaped.
// make test-slurm submits such a file to a real Slurm.
func TestExportPathsWithSpaces(t *testing.T) {
	args := []string{"export", "-suite", "testsize-regression", "-quick", "-shards", "3",
		"-out", "/scratch/my runs/$USER/50% done", "-binary", "/opt/my tools/tempora"}
	slurm := mustRun(t, append(args, "slurm")...)
	golden(t, "export-spaces.slurm", slurm)
	for _, want := range []string{
		`#SBATCH --output="/scratch/my runs/$USER/50%% done/logs/shard-%a.out"`,
		`#SBATCH --error="/scratch/my runs/$USER/50%% done/logs/shard-%a.err"`,
		`exec '/opt/my tools/tempora' run `,
		`-out '/scratch/my runs/$USER/50% done'/shard-"$SLURM_ARRAY_TASK_ID"`,
	} {
		if !strings.Contains(slurm, want) {
			t.Errorf("slurm file lacks %s", want)
		}
	}
	condor := mustRun(t, append(args, "condor")...)
	golden(t, "export-spaces.condor", condor)
	for _, want := range []string{
		"executable              = /opt/my tools/tempora\n",
		"output                  = /scratch/my runs/$(DOLLAR)USER/50% done/logs/shard-$(Process).out\n",
		`-out '/scratch/my runs/$(DOLLAR)USER/50% done/shard-$(Process)'"`,
	} {
		if !strings.Contains(condor, want) {
			t.Errorf("condor file lacks %s", want)
		}
	}
}

// TestExportUncarriablePaths checks that paths a job file cannot represent
// are refused with a clear error instead of producing a broken file.
func TestExportUncarriablePaths(t *testing.T) {
	for _, tc := range []struct {
		kind, out, binary, want string
	}{
		{"slurm", "/scratch/a\nb", "", "line break"},
		{"condor", "/scratch/a\rb", "", "line break"},
		{"slurm", "/scratch/ts", "/opt/a\nb", "line break"},
		{"slurm", `/scratch/a\b`, "", "backslash"},
	} {
		args := []string{"export", "-suite", "table1", "-shards", "2", "-out", tc.out}
		if tc.binary != "" {
			args = append(args, "-binary", tc.binary)
		}
		_, _, err := runCmd(t, append(args, tc.kind)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s -out %q -binary %q: error %v, want one about a %s", tc.kind, tc.out, tc.binary, err, tc.want)
		}
	}
}

// TestExportJobs checks the job files of a table1 run at quick scale with
// methods, workers and models (golden files) and refuses job files that
// cannot be written.
func TestExportJobs(t *testing.T) {
	run := experiments.Options{Suite: "table1", Models: 10, Methods: []string{"TIME", "time-n", "LIME"}, Workers: 2, Quick: true, Out: "/scratch/table1"}
	j := jobFile{run: run, methods: []string{"TIME", "TIME-n", "LIME"}, shards: 8, binary: "/opt/tempora/tempora"}
	for _, kind := range []string{"condor", "slurm"} {
		var b bytes.Buffer
		if err := writeJobs(&b, kind, j); err != nil {
			t.Fatal(err)
		}
		golden(t, "export-table1."+kind, b.String())
	}
	// The command names the methods canonically, as the file above.
	got := mustRun(t, "export", "-suite", "table1", "-models", "10", "-methods", "TIME,time-n,LIME", "-workers", "2", "-quick",
		"-seed", "0", "-shards", "8", "-out", "/scratch/table1", "-binary", "/opt/tempora/tempora", "slurm")
	golden(t, "export-table1.slurm", got)
	for name, bad := range map[string]jobFile{
		"no shards": {run: run},
		"no out":    {run: experiments.Options{Suite: "table1"}, shards: 2},
	} {
		if err := writeJobs(&bytes.Buffer{}, "condor", bad); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := writeJobs(&bytes.Buffer{}, "pbs", j); err == nil {
		t.Error("unknown scheduler: no error")
	}
}
