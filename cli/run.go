package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/tempora-dev/tempora/experiments"
	"github.com/tempora-dev/tempora/method"
)

const runHelp = `
Run runs a benchmark suite and writes one record per (problem, method) to
OUT/records/<suite>/<setting>/model=N/method=M.json, plus OUT/manifest.json
(the run's options) and OUT/bench.txt (every record as a Go benchmark line,
for benchstat). -methods names methods without regard to case; records use
their canonical names.

Every problem seed is derived from (-seed, suite, setting, model) and every
explainer seed from (-seed, suite, setting, model, method), so every method
sees the same problems and results depend neither on -workers nor on -shard
nor on which other methods and models run.

Rerunning the same command resumes: finished records are kept and skipped.
An interrupted run (Ctrl-C, SIGTERM from a scheduler, or a killed process)
loses at most the records in flight; after SIGINT or SIGTERM tempora exits
with status 130 or 143 (128 + the signal number). A resumed run first checks
every record file in OUT/records: one that cannot be read (truncated by a
full disk, say), lies at another record's path or belongs to another problem
is moved to the same path below OUT/damaged (the progress output names it)
and its item runs again. -shard i/n runs the items k with k mod n = i of the suite's fixed item
list; combine shard directories with "tempora merge", or generate cluster job
files with "tempora export".`

// suitesHelp lists the suites, their default methods and expected times,
// and the grid parameters (problem parameters and the table's method
// parameters).
func (p *program) suitesHelp() string {
	var b strings.Builder
	b.WriteString("Suites (expected wall time on 2 cores at paper scale / with -quick):\n")
	for _, s := range experiments.Suites {
		fmt.Fprintf(&b, "  %-24s %s\n", s.Name, s.Doc)
		fmt.Fprintf(&b, "  %-24s %d models (quick: %d); methods %s; %s / %s\n", "", s.Models, s.QuickModels,
			strings.Join(s.Methods, ", "), orUnknown(s.Time), orUnknown(s.QuickTime))
	}
	b.WriteString("\nGrid parameters (-grid 'name=v1,v2;name=v3'; the first varies slowest):\n")
	for _, g := range experiments.ProblemParams {
		fmt.Fprintf(&b, "  %-20s %s\n", g.Name, g.Doc)
	}
	for _, tp := range p.table.Params() {
		name := tp.Name
		for _, d := range p.paramDocs(tp) {
			fmt.Fprintf(&b, "  %-20s %s (%s)\n", name, d.doc, strings.Join(d.methods, ", "))
			name = ""
		}
	}
	b.WriteString("A problem parameter changes the problems; a method parameter analyses the same\nproblems with every method run that has it.")
	return b.String()
}

// paramDoc is one description of a parameter and the methods whose
// parameter it describes.
type paramDoc struct {
	doc     string
	methods []string
}

// paramDocs returns the distinct descriptions of a parameter that several
// methods take, in order of first appearance: one name is one concept (a
// wall-time budget), whose effect each method states in its own words.
func (p *program) paramDocs(tp method.TableParam) []paramDoc {
	var out []paramDoc
	for _, name := range tp.Methods {
		doc := tp.Doc
		if m, err := p.table.Lookup(name); err == nil {
			if q := m.Param(tp.Name); q != nil {
				doc = q.Doc
			}
		}
		i := slices.IndexFunc(out, func(d paramDoc) bool { return d.doc == doc })
		if i < 0 {
			out = append(out, paramDoc{doc: doc})
			i = len(out) - 1
		}
		out[i].methods = append(out[i].methods, name)
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "depends on the run"
	}
	return s
}

func (p *program) run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", runHelp+"\n\n"+p.suitesHelp(), stdout)
	o, shard := runFlags(fs)
	out := fs.String("out", "", "output `directory` (required)")
	list := fs.Bool("list", false, "list the suites and methods and exit")
	quiet := fs.Bool("quiet", false, "no progress reports on standard error")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() != 0 {
		return usageErrorf("run: unexpected arguments %q (see tempora run -h)", fs.Args())
	}
	if *list {
		if p.parseOnly {
			return nil
		}
		fmt.Fprintln(stdout, p.suitesHelp())
		fmt.Fprintln(stdout)
		fmt.Fprintln(stdout, p.methodsHelp())
		return nil
	}
	opts, err := p.options(o, *shard)
	if err != nil {
		return err
	}
	if *out == "" {
		return usageErrorf("run: -out is required (see tempora run -h)")
	}
	if opts.Shard.N > 0 {
		items, err := experiments.Items(opts)
		if err != nil {
			return err
		}
		if opts.Shard.I >= len(items) {
			return usageErrorf("run: -shard %s of a suite of %d items holds no item: want n at most %d (as tempora export -shards makes them)", *shard, len(items), len(items))
		}
	}
	if p.parseOnly {
		return nil
	}
	opts.Out = *out
	release, err := lockRun(*out)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	defer release()
	var prog *runProgress
	if !*quiet {
		prog = newRunProgress(stderr, opts.Suite)
		opts.Progress = prog
	}
	err = experiments.Run(ctx, opts)
	if prog != nil {
		prog.finish()
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("run: %s; %s", interruption(ctx), resumeHint)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s/bench.txt\n", *out)
	return nil
}

// suiteFlags are the flags that select a suite's items, shared by run,
// export and problems.
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

// addSuiteFlags defines the flags that select a suite's items and how they
// run (everything but -shard) on fs.
func addSuiteFlags(fs *flag.FlagSet) *suiteFlags {
	f := problemFlags(fs)
	fs.StringVar(&f.methods, "methods", "", "comma-separated `methods` (default: the suite's, then this program's own)")
	fs.IntVar(&f.workers, "workers", 0, "goroutines inside each explainer (0: one per CPU)")
	return f
}

// problemFlags defines the flags that select a suite's problems.
func problemFlags(fs *flag.FlagSet) *suiteFlags {
	var f suiteFlags
	fs.StringVar(&f.suite, "suite", "", "suite `name` (required; see tempora run -list)")
	fs.StringVar(&f.grid, "grid", "", "sweep `spec` of the grid suite, e.g. 'noise=0,0.5;gamma=0.95,0.99'")
	fs.IntVar(&f.models, "models", 0, "models per setting (0: the suite's default, 100 at paper scale)")
	fs.Uint64Var(&f.seed, "seed", experiments.DefaultSeed, "run seed")
	fs.BoolVar(&f.quick, "quick", false, "the suite's quick scale (fewer and smaller problems)")
	return &f
}

// options returns the run options of the flags, checked: a bad suite,
// grid, method list, model count or shard is a usage error.
func (p *program) options(f *suiteFlags, shard string) (experiments.Options, error) {
	if f.suite == "" {
		return experiments.Options{}, usageErrorf("-suite is required (see tempora run -list)")
	}
	o := experiments.Options{Suite: f.suite, Grid: f.grid, Models: f.models, Workers: f.workers, Seed: f.seed, Quick: f.quick, Extra: p.extra}
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
	if f.models < 0 {
		return o, usageErrorf("-models %d: want at least 1 (or 0 for the suite's default)", f.models)
	}
	if f.workers < 0 {
		return o, usageErrorf("-workers %d: want 0 (one per CPU) or more", f.workers)
	}
	if _, err := experiments.Items(o); err != nil {
		return o, usageErrorf("%v", err)
	}
	return o, nil
}
