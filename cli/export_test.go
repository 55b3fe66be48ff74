package cli

import (
	"errors"
	"strings"
	"testing"
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
