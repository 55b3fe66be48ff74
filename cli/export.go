package cli

import (
	"context"
	"io"

	"github.com/tempora-dev/tempora/experiments"
)

const exportHelp = `
Export writes to standard output a cluster job description that runs every
shard of a suite with one static tempora binary:

  condor  an HTCondor submit file, one job per shard ($(Process) = shard)
  slurm   a Slurm batch script with a job array (SLURM_ARRAY_TASK_ID = shard)

Shard i writes OUT/shard-i. Both assume a file system shared with the
submitting host. When every job has finished, combine the shards with the
"tempora merge" command printed in the file's header.

The file runs every shard, so export has no -shard flag. To rerun some
shards, submit the Slurm file with e.g. "sbatch --array=3,7 FILE" (the
command line overrides its #SBATCH lines), or run them with "tempora run
-shard i/N" and the same suite flags; a rerun resumes.

Build a static binary with: CGO_ENABLED=0 go build -o tempora ./cmd/tempora`

func runExport(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("export", "-suite NAME -shards N -out DIR [flags] condor|slurm", exportHelp, stdout)
	o := addSuiteFlags(fs)
	shards := fs.Int("shards", 0, "number of shards (jobs) (required)")
	out := fs.String("out", "", "output `directory` of the jobs on the cluster (required)")
	binary := fs.String("binary", "./tempora", "`path` of the tempora binary on the execution hosts")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() != 1 || (fs.Arg(0) != "condor" && fs.Arg(0) != "slurm") {
		return usageErrorf("export: want one scheduler argument, condor or slurm (see tempora export -h)")
	}
	if *shards < 1 {
		return usageErrorf("export: -shards must be at least 1")
	}
	if *out == "" {
		return usageErrorf("export: -out is required (see tempora export -h)")
	}
	opts, err := o.options("")
	if err != nil {
		return err
	}
	opts.Out = *out
	return experiments.Export(stdout, fs.Arg(0), experiments.ExportOptions{Run: opts, Shards: *shards, Binary: *binary})
}
