package experiments

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/metrics"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/resident"
)

// DefaultSeed is the run seed used when Options.Seed is zero. It echoes the
// reference's first model seed (100000), but model seeds are derived from it
// with tempora.DeriveSeed, not counted up from it.
const DefaultSeed = 100000

// Options configure Run. The zero value of every field except Suite and Out
// is a documented default.
type Options struct {
	// Suite names the suite (see Suites).
	Suite string
	// Grid is the sweep specification of the grid suite, e.g.
	// "noise=0,0.5,1;gamma=0.95,0.99": problem parameters (ProblemParams)
	// and parameters of the methods run (see parseGrid).
	Grid string
	// Models is the number of models (problems) per setting; zero means the
	// suite's default at the chosen scale.
	Models int
	// Methods names the methods to run, e.g. "TIME", "TIME-n", "LIME"
	// (matched without regard to case; records use the canonical names);
	// nil means the suite's default methods followed by every Extra method.
	Methods []string
	// Extra are methods beyond the built-in ones (see Table).
	Extra []method.Method
	// Workers is passed to every explainer (goroutines inside one
	// explanation); zero means GOMAXPROCS. Results do not depend on it.
	Workers int
	// Seed is the run seed from which every problem and explainer seed is
	// derived; zero means DefaultSeed.
	Seed uint64
	// Out is the output directory: records go below Out/records, plus
	// Out/manifest.json and Out/bench.txt.
	Out string
	// Shard restricts the run to one shard; the zero value runs everything.
	Shard Shard
	// Quick selects the suite's quick scale (fewer models, smaller
	// problems).
	Quick bool
	// Progress, if non-nil, is told how the run goes (tempora run shows
	// it as a progress bar).
	Progress Progress

	// source generates problems; nil means synthesise them with synth.
	// Tests replace it.
	source func(ctx context.Context, spec ProblemSpec, seed uint64) (*Problem, error)
}

// Progress is told how a run goes, from the goroutine that called Run:
// Moved for each damaged record moved aside before anything runs (a line
// saying which, why and where to; see DamagedDir), Begin once the items
// to run (todo) and those already done (skipped) are known, then Start
// and Done around each item run.
type Progress interface {
	Moved(note string)
	Begin(todo, skipped int)
	Start(it *Item)
	Done(it *Item)
}

// Problem is one problem of a suite: a dataset, the black-box model and the
// ground truth.
type Problem struct {
	Data  *tempora.Dataset
	Model tempora.Model
	Truth *record.Truth
	// dataTruth is the data-centric truth of the correlated world, which
	// settings with truth=data score against (suite_correlated.go).
	dataTruth *record.Truth
	// held returns a new held-data capability of Model (synth.Model.Held),
	// for a Setting with Held; nil when the world gives none.
	held func() resident.Model
}

// head returns the problem restricted to its first n instances (n = 0
// means all), sharing storage.
func (p *Problem) head(n int) (*Problem, error) {
	if n == 0 || n == p.Data.X.M {
		return p, nil
	}
	if n < 0 || n > p.Data.X.M {
		return nil, fmt.Errorf("experiments: cannot analyse %d of %d instances", n, p.Data.X.M)
	}
	d := *p.Data
	d.X = p.Data.X.Rows(0, n)
	w := p.Data.Outputs.TargetWidth()
	d.Y = p.Data.Y[: n*w : n*w]
	return &Problem{Data: &d, Model: p.Model, Truth: p.Truth, dataTruth: p.dataTruth, held: p.held}, nil
}

// Run runs a suite (or one shard of it) and writes one record per (problem,
// method output) below o.Out/records, then rewrites o.Out/bench.txt from
// every record there.
//
// Run resumes: items whose records all exist are skipped, so rerunning an
// interrupted command finishes it, and adding models or methods leaves
// existing records untouched. Records are written atomically, so an
// interruption (cancelling ctx, or killing the process) loses at most the
// items in flight. A directory holding records of a different suite, grid,
// scale or seed is refused.
//
// Before skipping anything, Run checks every record file already below
// o.Out/records (see DamagedDir): a file that record.Read rejects (for
// example one truncated by a full disk), that lies at another key's path,
// or whose problem seed is not the one the run derives for its key, is
// moved to the same relative path below o.Out/damaged and its item runs
// again. Each move is reported to o.Progress.
//
// Every problem seed is derived from (seed, suite, problem setting, model)
// and every explainer seed from (seed, suite, setting, model, method), so
// every method sees the same problems and results do not depend on the
// shard, the worker count or which other methods and models run.
func Run(ctx context.Context, o Options) (err error) {
	p, items, err := prepare(&o)
	if err != nil {
		return err
	}
	recDir := filepath.Join(o.Out, "records")
	var todo []Item
	var skipped int
	for _, it := range items {
		if !o.Shard.has(it.Index) {
			continue
		}
		if it.done(recDir, p.suite.Name) {
			skipped++
			continue
		}
		todo = append(todo, it)
	}
	if o.Progress != nil {
		o.Progress.Begin(len(todo), skipped)
	}
	defer func() {
		if berr := WriteBench(o.Out); err == nil {
			err = berr
		}
	}()

	problems := problemCache{source: o.source}
	for _, it := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		prob, err := problems.get(ctx, &it)
		if err != nil {
			return err
		}
		if o.Progress != nil {
			o.Progress.Start(&it)
		}
		if err := runItem(ctx, p.suite.Name, &it, prob, o.Workers, recDir); err != nil {
			return err
		}
		if o.Progress != nil {
			o.Progress.Done(&it)
		}
	}
	return nil
}

// prepare checks o, resolves its plan, refuses an output directory that
// holds another run, writes the manifest and moves damaged records aside
// (reporting each move to o.Progress). It returns the plan and every item
// of the suite, all shards.
func prepare(o *Options) (*plan, []Item, error) {
	if o.Out == "" {
		return nil, nil, fmt.Errorf("experiments: no output directory")
	}
	if err := o.Shard.validate(); err != nil {
		return nil, nil, err
	}
	if o.Workers < 0 {
		return nil, nil, fmt.Errorf("experiments: Workers is %d, want 0 (GOMAXPROCS) or more", o.Workers)
	}
	p, err := newPlan(o)
	if err != nil {
		return nil, nil, err
	}
	if o.source == nil {
		if err := checkProblems(p.settings); err != nil {
			return nil, nil, err
		}
	}
	man := p.manifest(o)
	if err := man.checkCount(len(p.settings)); err != nil {
		return nil, nil, err
	}
	if old, err := ReadManifest(o.Out); err == nil {
		if !old.sameProblems(man) {
			return nil, nil, fmt.Errorf("experiments: %s holds a run of suite %s (grid %q, quick %v, seed %d), not suite %s (grid %q, quick %v, seed %d)",
				o.Out, old.Suite, old.Grid, old.Quick, old.Seed, man.Suite, man.Grid, man.Quick, man.Seed)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, nil, err
	}
	if err := writeManifest(o.Out, man); err != nil {
		return nil, nil, err
	}
	items := p.items()
	moved, err := checkRecords(o.Out, p.suite.Name, items)
	for _, m := range moved {
		if o.Progress != nil {
			o.Progress.Moved(m)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	return p, items, nil
}

// problemCache keeps the last problem made, since consecutive items share
// problems (see plan.items).
type problemCache struct {
	// source makes problems; nil means synthesise.
	source func(ctx context.Context, spec ProblemSpec, seed uint64) (*Problem, error)
	key    string
	prob   *Problem
}

// get returns the problem that it analyses: the item's problem, made or
// kept, restricted to the setting's first instances.
func (c *problemCache) get(ctx context.Context, it *Item) (*Problem, error) {
	key := it.Setting.problemKey + "|" + strconv.Itoa(it.Model)
	if c.prob == nil || c.key != key {
		c.prob = nil
		source := c.source
		if source == nil {
			source = synthesise
		}
		prob, err := source(ctx, it.Setting.Problem, it.ProblemSeed)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("experiments: problem %s/model=%d: %w", it.Setting.Key(), it.Model, err)
		}
		c.key, c.prob = key, prob
	}
	p, err := c.prob.head(it.Setting.Head)
	if err != nil {
		return nil, err
	}
	if it.Setting.view == nil {
		return p, nil
	}
	return it.Setting.view.apply(p)
}

// runItem explains one problem with one run and writes its records.
func runItem(ctx context.Context, suite string, it *Item, prob *Problem, workers int, recDir string) error {
	name := fmt.Sprintf("%s/%s/model=%d/method=%s", suite, it.Setting.Key(), it.Model, it.Method)
	ex, e, local, refusals, err := explainOrRefuse(ctx, it, prob, workers)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("experiments: %s: %w", name, err)
	}
	// A method that refused the problem (suite_irregular.go).
	for _, rec := range refusals {
		rec.Suite, rec.Params, rec.Model, rec.Seed = suite, it.Setting.Params, it.Model, it.ProblemSeed
		if err := record.Write(recDir, rec); err != nil {
			return err
		}
	}
	if refusals != nil {
		return nil
	}
	for _, m := range it.run.outputs {
		oe, err := m.Derived(ex, e)
		if err != nil {
			return fmt.Errorf("experiments: %s: %w", name, err)
		}
		if err := method.CheckExplanation(oe, prob.Data); err != nil {
			return fmt.Errorf("experiments: %s: %s: %w", name, m.Name, err)
		}
		rec, err := metrics.Score(prob.Truth, oe, m.Mode, m.Tests)
		if err != nil {
			return fmt.Errorf("experiments: %s: %w", name, err)
		}
		// The exact-window rate, on truths with window lists (suite
		// windows) for methods that report windows.
		if prob.Truth.WindowLists != nil && hasWindows(oe) {
			mt, err := metrics.ExactWindows(prob.Truth, oe.Features, oe.L)
			if err != nil {
				return fmt.Errorf("experiments: %s: %w", name, err)
			}
			rec.Metrics = append(rec.Metrics, mt)
		}
		// The per-output metrics, on truths with outputs (suite
		// outputs) for methods with per-output results.
		if prob.Truth.Outputs != nil && oe.Outputs != nil {
			ms, err := metrics.OutputMetrics(prob.Truth, oe)
			if err != nil {
				return fmt.Errorf("experiments: %s: %w", name, err)
			}
			rec.Metrics = append(rec.Metrics, ms...)
		}
		// Per-instance metrics for every method with per-instance
		// attributions, and in a Local setting for every method, on
		// problems with a per-instance truth (synthetic models; per
		// output for a model with several).
		if hasInstanceTruth(prob.Model, prob.Data) && (local != nil || it.Setting.Local) {
			ms, err := instanceScores(prob.Model, prob.Data, oe, local)
			if err != nil {
				return fmt.Errorf("experiments: %s: %w", name, err)
			}
			rec.Metrics = append(rec.Metrics, ms...)
		}
		rec.Suite, rec.Params, rec.Model, rec.Seed, rec.Method = suite, it.Setting.Params, it.Model, it.ProblemSeed, m.Name
		if rec.Params == nil {
			rec.Params = []record.Param{}
		}
		if err := record.Write(recDir, rec); err != nil {
			return err
		}
	}
	return nil
}

// hasWindows reports whether some feature result of e lists windows.
func hasWindows(e *tempora.Explanation) bool {
	for _, f := range e.Features {
		if f.Windows != nil {
			return true
		}
	}
	return false
}
