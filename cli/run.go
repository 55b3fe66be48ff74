package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/tempora-dev/tempora/experiments"
)

const runHelp = `
Run runs a benchmark suite and writes one record per (problem, method) to
OUT/records/<suite>/<setting>/model=N/method=M.json, plus OUT/manifest.json
(the run's options) and OUT/bench.txt (every record as a Go benchmark line,
for benchstat).

Suites (paper scale; -quick runs a small version of each):
  table1                   Tables 1 and S1: TIME, TIME-n, LIME, SAGE, SAGE-m,
                           SAGE-z, PERM, PERM-f on 100 classification models
                           (1000 instances × 10 features × 20 timesteps)
  table-s2                 Table S2: the same with 30 features, 10 relevant
  testsize-regression      Fig. 4: TIME on the first 100, 200, …, 6400
                           instances of 100 regression problems (30 × 50)
  testsize-classification  Fig. S1: the same for classification
  grid                     any sweep around the Table 1 setting, e.g.
                           -grid 'noise=0,0.5,1;gamma=0.95,0.99' (parameters:
                           features, timesteps, instances, relevant, task,
                           noise, window-independent, permutations, gamma,
                           alpha)

Every problem seed is derived from (-seed, suite, setting, model) and every
explainer seed from (-seed, suite, setting, model, method), so every method
sees the same problems and results depend neither on -workers nor on -shard
nor on which other methods and models run.

Rerunning the same command resumes: finished records are kept and skipped.
An interrupted run (Ctrl-C, SIGTERM from a scheduler, or a killed process)
loses at most the records in flight; after SIGINT or SIGTERM tempora exits
with status 130 or 143 (128 + the signal number). -shard i/n runs the items k with k mod n = i of the suite's fixed item
list; combine shard directories with "tempora merge", or generate cluster job
files with "tempora export".`

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", "-suite NAME [flags] -out DIR", runHelp, stdout)
	o, shard := runFlags(fs)
	out := fs.String("out", "", "output `directory` (required)")
	list := fs.Bool("list", false, "list the suites and exit")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() != 0 {
		return usageErrorf("run: unexpected arguments %q (see tempora run -h)", fs.Args())
	}
	if *list {
		for _, s := range experiments.Suites {
			fmt.Fprintf(stdout, "%-24s %s\n", s.Name, s.Doc)
		}
		return nil
	}
	opts, err := o.options(*shard)
	if err != nil {
		return err
	}
	if *out == "" {
		return usageErrorf("run: -out is required (see tempora run -h)")
	}
	opts.Out, opts.Progress = *out, stderr
	err = experiments.Run(ctx, opts)
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("run: %s; finished records are kept, rerun the same command to resume", interruption(ctx))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s/bench.txt\n", *out)
	return nil
}

// suiteFlags are the flags that select a suite's items, shared by run and
// export.
type suiteFlags struct {
	suite, grid, methods string
	models, workers      int
	seed                 uint64
	quick                bool
}

// runFlags defines the suite flags and -shard on fs.
func runFlags(fs *flag.FlagSet) (*suiteFlags, *string) {
	f := addSuiteFlags(fs)
	var shard string
	fs.StringVar(&shard, "shard", "", "run only shard `i/n` of the suite's items")
	return f, &shard
}

// addSuiteFlags defines the flags that select a suite's items on fs.
func addSuiteFlags(fs *flag.FlagSet) *suiteFlags {
	var f suiteFlags
	fs.StringVar(&f.suite, "suite", "", "suite `name` (required; see -list)")
	fs.StringVar(&f.grid, "grid", "", "sweep `spec` of the grid suite, e.g. 'noise=0,0.5;gamma=0.95,0.99'")
	fs.IntVar(&f.models, "models", 0, "models per setting (0: the suite's default, 100 at paper scale)")
	fs.StringVar(&f.methods, "methods", "", "comma-separated `methods` (default: the suite's)")
	fs.IntVar(&f.workers, "workers", 0, "goroutines inside each explainer (0: one per CPU)")
	fs.Uint64Var(&f.seed, "seed", experiments.DefaultSeed, "run seed")
	fs.BoolVar(&f.quick, "quick", false, "run the suite's quick scale (fewer and smaller problems)")
	return &f
}

func (f *suiteFlags) options(shard string) (experiments.Options, error) {
	if f.suite == "" {
		return experiments.Options{}, usageErrorf("-suite is required (see -list)")
	}
	o := experiments.Options{Suite: f.suite, Grid: f.grid, Models: f.models, Workers: f.workers, Seed: f.seed, Quick: f.quick}
	if f.methods != "" {
		for m := range strings.SplitSeq(f.methods, ",") {
			o.Methods = append(o.Methods, strings.TrimSpace(m))
		}
	}
	if shard != "" {
		s, err := experiments.ParseShard(shard)
		if err != nil {
			return o, usageErrorf("%v", err)
		}
		o.Shard = s
	}
	if _, err := experiments.Items(o); err != nil {
		return o, err
	}
	return o, nil
}
