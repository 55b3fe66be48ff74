package cli

import (
	"context"
	"io"

	"github.com/tempora-dev/tempora/experiments"
)

const exportHelp = `
Export writes to standard output a cluster job description that runs every
shard of a suite with this program (the binary running export, so that
every method it knows, built-in or added with cli.Main, runs on the
cluster):

  condor  an HTCondor submit file, one job per shard ($(Process) = shard)
  slurm   a Slurm batch script with a job array (SLURM_ARRAY_TASK_ID = shard)

Shard i writes OUT/shard-i. Both assume a file system shared with the
submitting host; -binary names the program's path there if it differs.
When every job has finished, combine the shards with the "tempora merge"
command printed in the file's header.

The file runs every shard, so export has no -shard flag. To rerun some
shards, submit the Slurm file with e.g. "sbatch --array=3,7 FILE" (the
command line overrides its #SBATCH lines), or run them with "tempora run
-shard i/N" and the same suite flags; a rerun resumes.

Build a static binary with: CGO_ENABLED=0 go build -o tempora ./cmd/tempora`

func (p *program) export(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("export", exportHelp, stdout)
	o := addSuiteFlags(fs)
	shards := fs.Int("shards", 0, "number of shards (jobs) (required)")
	out := fs.String("out", "", "output `directory` of the jobs on the cluster (required)")
	bin := p.exe
	if bin == "" {
		bin = "./tempora"
	}
	binary := fs.String("binary", bin, "`path` of this program on the execution hosts")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	switch {
	case fs.NArg() == 0:
		return usageErrorf("export: want one scheduler argument, condor or slurm (see tempora export -h)")
	case fs.NArg() > 1:
		return usageErrorf("export: want one scheduler argument, got %d: %q (see tempora export -h)", fs.NArg(), fs.Args())
	case fs.Arg(0) != "condor" && fs.Arg(0) != "slurm":
		return usageErrorf("export: unknown scheduler %q (want condor or slurm)", fs.Arg(0))
	}
	if *shards < 1 {
		return usageErrorf("export: -shards must be at least 1")
	}
	if *out == "" {
		return usageErrorf("export: -out is required (see tempora export -h)")
	}
	opts, err := p.options(o, "")
	if err != nil {
		return err
	}
	items, err := experiments.Items(opts)
	if err != nil {
		return err
	}
	if *shards > len(items) {
		return usageErrorf("export: -shards %d for a suite of %d items: want at most %d (a shard beyond the items would run nothing)", *shards, len(items), len(items))
	}
	if p.parseOnly {
		return nil
	}
	opts.Out = *out
	// The job file names the methods canonically (options checked them).
	var methods []string
	for _, name := range opts.Methods {
		m, err := p.table.Lookup(name)
		if err != nil {
			return usageErrorf("export: %v", err)
		}
		methods = append(methods, m.Name)
	}
	return writeJobs(stdout, fs.Arg(0), jobFile{run: opts, methods: methods, shards: *shards, binary: *binary})
}
