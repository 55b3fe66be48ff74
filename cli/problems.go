package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/tempora-dev/tempora/experiments"
)

const problemsHelp = `
Problems writes every problem of a suite, exactly as "tempora run" analyses it
with the same -suite, -grid, -models, -quick and -seed, into OUT: one
directory per problem, as "tempora synth" writes it (data.npy, targets.npy,
model.json, truth.json, problem.json), holding only the instances the setting
analyses, and OUT/index.json listing every (setting, model) with its
directory, parameters, model index, problem seed and shape (docs/records.md).

An outside tool can then explain each problem (querying its model with
"tempora serve -problem DIR" if it needs the model), write its D × L scores
into each directory, and turn them into records with "tempora evaluate
-problems OUT"; examples/python/score_problems.py does the whole loop.
Rerunning keeps the problems already written.`

func (p *program) problems(ctx context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("problems", problemsHelp, stdout)
	f := problemFlags(fs)
	out := fs.String("out", "", "output `directory` (required)")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() != 0 {
		return usageErrorf("problems: unexpected arguments %q (see tempora problems -h)", fs.Args())
	}
	if _, err := p.options(f, ""); err != nil {
		return err
	}
	if *out == "" {
		return usageErrorf("problems: -out is required (see tempora problems -h)")
	}
	if p.parseOnly {
		return nil
	}
	idx, err := experiments.WriteProblems(ctx, experiments.Options{Suite: f.suite, Grid: f.grid, Models: f.models, Seed: f.seed, Quick: f.quick, Out: *out})
	if err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, e := range idx.Problems {
		dirs[e.Dir] = true
	}
	fmt.Fprintf(stdout, "wrote %d problems of suite %s (%d settings × %d models) to %s\n", len(dirs), idx.Suite, len(idx.Problems)/idx.Models, idx.Models, *out)
	fmt.Fprintln(stdout, filepath.Join(*out, experiments.IndexFile))
	return nil
}
