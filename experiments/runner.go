package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/internal/safefile"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/metrics"
	"github.com/tempora-dev/tempora/record"
)

// DefaultSeed is the run seed used when Options.Seed is zero. It echoes the
// reference's first model seed (100000), but model seeds are derived from it
// with tempora.DeriveSeed, not counted up from it.
const DefaultSeed = 100000

// Shard selects a deterministic share of a suite's items: item k (in the
// order of Items) belongs to shard k mod N. The zero value (N = 0) means
// the whole suite.
type Shard struct {
	I, N int
}

// ParseShard parses "i/n" with 0 ≤ i < n.
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("experiments: shard %q, want i/n with 0 <= i < n", s)
	}
	return Shard{I: i, N: n}, nil
}

// String returns "i/n", or "" for the whole suite.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

func (s Shard) validate() error {
	if s.N == 0 && s.I == 0 {
		return nil
	}
	if s.N < 1 || s.I < 0 || s.I >= s.N {
		return fmt.Errorf("experiments: shard %d/%d, want 0 <= i < n", s.I, s.N)
	}
	return nil
}

func (s Shard) has(k int) bool { return s.N == 0 || k%s.N == s.I }

// Options configure Run. The zero value of every field except Suite and Out
// is a documented default.
type Options struct {
	// Suite names the suite (see Suites).
	Suite string
	// Grid is the sweep specification of the grid suite, e.g.
	// "noise=0,0.5,1;gamma=0.95,0.99" (see GridParams).
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
	// Progress, if non-nil, receives progress: an updating bar if it is a
	// terminal, plain lines otherwise.
	Progress io.Writer

	// source generates problems; nil means synthesise them with synth.
	// Tests replace it.
	source func(ctx context.Context, spec ProblemSpec, seed uint64) (*Problem, error)
}

// Problem is one problem of a suite: a dataset, the black-box model and the
// ground truth.
type Problem struct {
	Data  *tempora.Dataset
	Model tempora.Model
	Truth *record.Truth
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
	d.Y = p.Data.Y[:n:n]
	return &Problem{Data: &d, Model: p.Model, Truth: p.Truth}, nil
}

// Item is one unit of work: one explainer run on one problem, yielding one
// record per method it serves (TIME and TIME-n share a run, as do PERM
// and PERM-f).
type Item struct {
	// Index is the item's position in the suite's enumeration.
	Index int
	// Setting and Model identify the problem.
	Setting *Setting
	Model   int
	// Method is the canonical name of the method whose explainer runs
	// (method.Method.Source) and Outputs the methods recorded from its
	// explanation, in the order requested.
	Method  string
	Outputs []string
	// ProblemSeed seeds the problem; ExplainerSeed seeds the explainer.
	ProblemSeed, ExplainerSeed uint64

	run *run
}

// run is one explainer run serving the requested methods made from it.
type run struct {
	source  *method.Method
	outputs []*method.Method
}

// Keys returns the record keys of the item's outputs.
func (it *Item) Keys(suite string) []string {
	keys := make([]string, len(it.Outputs))
	for i, o := range it.Outputs {
		r := record.Record{Suite: suite, Params: it.Setting.Params, Model: it.Model, Method: o}
		keys[i] = r.Key()
	}
	return keys
}

// plan is a resolved run configuration.
type plan struct {
	suite    *Suite
	settings []Setting
	models   int
	methods  []string // canonical names
	runs     []run
	seed     uint64
}

func newPlan(o *Options) (*plan, error) {
	s, err := LookupSuite(o.Suite)
	if err != nil {
		return nil, err
	}
	if o.Models < 0 {
		return nil, fmt.Errorf("experiments: Models is %d, want at least 1 (or 0 for the suite's default)", o.Models)
	}
	p := &plan{suite: s, models: o.Models, seed: o.Seed}
	if p.models == 0 {
		p.models = s.Models
		if o.Quick {
			p.models = s.QuickModels
		}
	}
	if p.seed == 0 {
		p.seed = DefaultSeed
	}
	if p.settings, err = s.Settings(o.Quick, o.Grid); err != nil {
		return nil, err
	}
	table, err := Table(o.Extra...)
	if err != nil {
		return nil, err
	}
	names := o.Methods
	if names == nil {
		names = slices.Clone(s.Methods)
		for _, m := range o.Extra {
			names = append(names, m.Name)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("experiments: no methods to run")
	}
	if p.runs, p.methods, err = resolveRuns(table, names); err != nil {
		return nil, err
	}
	if err := checkMethodParams(p.settings, p.runs); err != nil {
		return nil, err
	}
	return p, nil
}

// resolveRuns maps method names to the canonical names and to runs: one per
// source method, ordered by the first method requested from it, each
// serving its requested methods in request order.
func resolveRuns(t *method.Table, names []string) ([]run, []string, error) {
	var runs []run
	var canon []string
	for _, n := range names {
		m, err := t.Lookup(strings.TrimSpace(n))
		if err != nil {
			return nil, nil, fmt.Errorf("experiments: %w", err)
		}
		if slices.Contains(canon, m.Name) {
			return nil, nil, fmt.Errorf("experiments: method %s requested twice", m.Name)
		}
		canon = append(canon, m.Name)
		src := m.Source()
		i := slices.IndexFunc(runs, func(r run) bool { return r.source == src })
		if i < 0 {
			runs = append(runs, run{source: src})
			i = len(runs) - 1
		}
		runs[i].outputs = append(runs[i].outputs, m)
	}
	return runs, canon, nil
}

// checkMethodParams checks the method-parameter values of every setting:
// each must name a parameter of at least one method run, with a value that
// every such method accepts.
func checkMethodParams(settings []Setting, runs []run) error {
	for _, s := range settings {
		for _, p := range s.Method {
			found := false
			for _, r := range runs {
				mp := r.source.Param(p.Key)
				if mp == nil {
					continue
				}
				found = true
				if _, err := mp.Parse(p.Value); err != nil {
					return fmt.Errorf("experiments: grid: %s: %w", r.source.Name, err)
				}
			}
			if !found {
				var names []string
				for _, r := range runs {
					names = append(names, r.source.Name)
				}
				return fmt.Errorf("experiments: grid parameter %q is neither a problem parameter nor a parameter of the methods run (%s)", p.Key, strings.Join(names, ", "))
			}
		}
	}
	return nil
}

// values returns the parameter values of source in setting s.
func (s *Setting) values(source *method.Method) (method.Values, error) {
	given := map[string]string{}
	for _, p := range slices.Concat(s.MethodDefaults, s.Method) {
		if source.Param(p.Key) != nil {
			given[p.Key] = p.Value
		}
	}
	return source.Values(given, s.Quick)
}

// items enumerates the plan's work in a fixed order: settings grouped by
// the problem they analyse (in order of first appearance), then models,
// then the settings of the group, then runs. Consecutive items thus share
// problems, and the order never depends on the shard or the worker count.
func (p *plan) items() []Item {
	var groups []string
	for _, s := range p.settings {
		if !slices.Contains(groups, s.problemKey) {
			groups = append(groups, s.problemKey)
		}
	}
	var items []Item
	for _, g := range groups {
		for k := range p.models {
			ks := strconv.Itoa(k)
			pseed := problemSeed(p.seed, p.suite.Name, g, k)
			for si := range p.settings {
				s := &p.settings[si]
				if s.problemKey != g {
					continue
				}
				for ri := range p.runs {
					r := &p.runs[ri]
					it := Item{
						Index: len(items), Setting: s, Model: k, Method: r.source.Name,
						ProblemSeed:   pseed,
						ExplainerSeed: tempora.DeriveSeed(p.seed, p.suite.Name, "explain", s.Key(), "model", ks, "method", r.source.Name),
						run:           r,
					}
					for _, o := range r.outputs {
						it.Outputs = append(it.Outputs, o.Name)
					}
					items = append(items, it)
				}
			}
		}
	}
	return items
}

// Items returns every item of the suite that o describes (all shards), in
// the order that defines shards.
func Items(o Options) ([]Item, error) {
	p, err := newPlan(&o)
	if err != nil {
		return nil, err
	}
	return p.items(), nil
}

// Manifest is the description of a run stored in Out/manifest.json, so that
// runs can be resumed and shards merged and checked.
type Manifest struct {
	Format  string   `json:"format"`
	Suite   string   `json:"suite"`
	Grid    string   `json:"grid,omitempty"`
	Quick   bool     `json:"quick"`
	Seed    uint64   `json:"seed"`
	Models  int      `json:"models"`
	Methods []string `json:"methods"`
	Shard   Shard    `json:"shard"`
}

// ManifestFormat is the value of a manifest's "format" field.
const ManifestFormat = "tempora-manifest/1"

func (p *plan) manifest(o *Options) *Manifest {
	return &Manifest{Format: ManifestFormat, Suite: p.suite.Name, Grid: o.Grid, Quick: o.Quick,
		Seed: p.seed, Models: p.models, Methods: p.methods, Shard: o.Shard}
}

// sameProblems reports whether two manifests describe runs whose records
// can share a directory: the same suite, grid, scale and seed.
func (m *Manifest) sameProblems(n *Manifest) bool {
	return m.Suite == n.Suite && m.Grid == n.Grid && m.Quick == n.Quick && m.Seed == n.Seed
}

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := safefile.ReadFile(filepath.Join(dir, "manifest.json"), safefile.ManifestLimit, "a manifest")
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("experiments: %s: %w", filepath.Join(dir, "manifest.json"), err)
	}
	if m.Format != ManifestFormat {
		return nil, fmt.Errorf("experiments: %s: format %q, want %q", filepath.Join(dir, "manifest.json"), m.Format, ManifestFormat)
	}
	if err := m.check(filepath.Join(dir, "manifest.json")); err != nil {
		return nil, err
	}
	return &m, nil
}

func writeManifest(dir string, m *Manifest) error {
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(dir, "manifest.json"), append(b, '\n'))
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
// again. Each move is reported on o.Progress.
//
// Every problem seed is derived from (seed, suite, problem setting, model)
// and every explainer seed from (seed, suite, setting, model, method), so
// every method sees the same problems and results do not depend on the
// shard, the worker count or which other methods and models run.
func Run(ctx context.Context, o Options) (err error) {
	if o.Out == "" {
		return fmt.Errorf("experiments: no output directory")
	}
	if err := o.Shard.validate(); err != nil {
		return err
	}
	if o.Workers < 0 {
		return fmt.Errorf("experiments: Workers is %d, want 0 (GOMAXPROCS) or more", o.Workers)
	}
	p, err := newPlan(&o)
	if err != nil {
		return err
	}
	if o.source == nil {
		if err := checkProblems(p.settings); err != nil {
			return err
		}
	}
	man := p.manifest(&o)
	if err := man.checkCount(len(p.settings)); err != nil {
		return err
	}
	if old, err := ReadManifest(o.Out); err == nil {
		if !old.sameProblems(man) {
			return fmt.Errorf("experiments: %s holds a run of suite %s (grid %q, quick %v, seed %d), not suite %s (grid %q, quick %v, seed %d)",
				o.Out, old.Suite, old.Grid, old.Quick, old.Seed, man.Suite, man.Grid, man.Quick, man.Seed)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	if err := writeManifest(o.Out, man); err != nil {
		return err
	}
	recDir := filepath.Join(o.Out, "records")
	items := p.items()
	moved, err := checkRecords(o.Out, p.suite.Name, items)
	for _, m := range moved {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "%s: %s\n", p.suite.Name, m)
		}
	}
	if err != nil {
		return err
	}

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
	prog := newProgress(o.Progress, p.suite.Name, len(todo), skipped)
	defer func() {
		prog.finish()
		if berr := WriteBench(o.Out); err == nil {
			err = berr
		}
	}()

	source := o.source
	if source == nil {
		source = synthesise
	}
	var cache struct {
		key  string
		prob *Problem
	}
	for _, it := range todo {
		if err := ctx.Err(); err != nil {
			return err
		}
		key := it.Setting.problemKey + "|" + strconv.Itoa(it.Model)
		if cache.prob == nil || cache.key != key {
			cache.prob = nil
			prob, err := source(ctx, it.Setting.Problem, it.ProblemSeed)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("experiments: problem %s/model=%d: %w", it.Setting.Key(), it.Model, err)
			}
			cache.key, cache.prob = key, prob
		}
		prob, err := cache.prob.head(it.Setting.Head)
		if err != nil {
			return err
		}
		prog.start(&it)
		if err := runItem(ctx, p.suite.Name, &it, prob, o.Workers, recDir); err != nil {
			return err
		}
		prog.done()
	}
	return nil
}

// DamagedDir is the subdirectory of a run directory to which Run moves
// record files that fail its checks, at their path below records/ (with
// ".1", ".2", … before ".json" if that path is taken), so that nothing is
// deleted and the run can redo their items.
const DamagedDir = "damaged"

// checkRecords checks every record file below out/records: it must pass
// record.Read, lie at its own key's path, and, if its key is one of the
// items', carry that item's problem seed. It moves every file that fails to
// out/DamagedDir and returns one line per file moved, saying why and where.
func checkRecords(out, suite string, items []Item) ([]string, error) {
	recDir := filepath.Join(out, "records")
	seeds := map[string]uint64{}
	for i := range items {
		for _, k := range items[i].Keys(suite) {
			seeds[k] = items[i].ProblemSeed
		}
	}
	var moved []string
	err := filepath.WalkDir(recDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == recDir {
				return fs.SkipDir
			}
			return err
		}
		if !record.IsRecordFile(d) {
			return nil
		}
		rel, err := filepath.Rel(recDir, p)
		if err != nil {
			return err
		}
		slash := filepath.ToSlash(rel)
		var why string
		r, err := record.Read(p)
		switch {
		case err != nil:
			why = strings.TrimPrefix(strings.TrimPrefix(err.Error(), "record: "), p+": ")
		case r.Key()+".json" != slash:
			why = "it holds the record " + r.Key()
		default:
			if seed, ok := seeds[r.Key()]; ok && seed != r.Seed {
				why = fmt.Sprintf("its problem seed is %d, the run's is %d", r.Seed, seed)
			}
		}
		if why == "" {
			return nil
		}
		dst, err := moveAside(filepath.Join(out, DamagedDir), rel, p)
		if err != nil {
			return fmt.Errorf("experiments: moving the damaged record %s aside: %w", p, err)
		}
		shown, _ := filepath.Rel(out, dst)
		moved = append(moved, fmt.Sprintf("damaged record records/%s (%s) moved to %s; its item runs again", slash, why, filepath.ToSlash(shown)))
		if d.IsDir() {
			return fs.SkipDir // moved away
		}
		return nil
	})
	if err != nil && !strings.HasPrefix(err.Error(), "experiments: ") {
		err = fmt.Errorf("experiments: checking the records of %s: %w", out, err)
	}
	return moved, err
}

// moveAside renames file to rel below dir, or, if that exists, to rel with
// ".1", ".2", … before its extension, and returns the new path.
func moveAside(dir, rel, file string) (string, error) {
	dst := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	base := strings.TrimSuffix(dst, ".json")
	for n := 1; ; n++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dst = fmt.Sprintf("%s.%d.json", base, n)
	}
	return dst, os.Rename(file, dst)
}

func (it *Item) done(recDir, suite string) bool {
	for _, k := range it.Keys(suite) {
		if _, err := os.Stat(filepath.Join(recDir, filepath.FromSlash(k)+".json")); err != nil {
			return false
		}
	}
	return true
}

// runItem explains one problem with one run and writes its records.
func runItem(ctx context.Context, suite string, it *Item, prob *Problem, workers int, recDir string) error {
	name := fmt.Sprintf("%s/%s/model=%d/method=%s", suite, it.Setting.Key(), it.Model, it.Method)
	src := it.run.source
	vals, err := it.Setting.values(src)
	if err != nil {
		return fmt.Errorf("experiments: %s: %w", name, err)
	}
	ex, err := src.Explainer(method.Config{Seed: it.ExplainerSeed, Workers: workers, Data: prob.Data, Values: vals})
	if err != nil {
		return fmt.Errorf("experiments: %s: %w", name, err)
	}
	e, err := method.Measure(ctx, ex, prob.Model, prob.Data)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("experiments: %s: %w", name, err)
	}
	for _, m := range it.run.outputs {
		oe, err := m.Derived(ex, e)
		if err != nil {
			return fmt.Errorf("experiments: %s: %w", name, err)
		}
		if err := method.CheckExplanation(oe, prob.Data); err != nil {
			return fmt.Errorf("experiments: %s: %s: %w", name, m.Name, err)
		}
		rec, err := Score(prob.Truth, oe, m.Mode, m.Tests)
		if err != nil {
			return fmt.Errorf("experiments: %s: %w", name, err)
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

// Score evaluates an explanation against the truth and returns its record
// without the identity fields (suite, params, model, seed, method): the
// detection metrics in the given mode (metrics.DetectionMetrics), followed
// with tests by the per-feature metrics (metrics.TIMEMetrics), the
// explanation's accounting and warnings, the explanation and the truth.
func Score(tr *record.Truth, e *tempora.Explanation, mode method.Mode, tests bool) (*record.Record, error) {
	ms, err := metrics.DetectionMetrics(tr, e.Cells, e.D, e.L, mode)
	if err != nil {
		return nil, err
	}
	if tests {
		tm, err := metrics.TIMEMetrics(tr, e.Features, e.L)
		if err != nil {
			return nil, err
		}
		ms = append(ms, tm...)
	}
	warn := e.Warnings
	if warn == nil {
		warn = []string{}
	}
	return &record.Record{
		Format: record.Format, Method: e.Method, Metrics: ms,
		RuntimeSeconds: e.Accounting.Runtime.Seconds(),
		ModelCalls:     e.Accounting.ModelCalls, InstanceEvals: e.Accounting.InstanceEvals,
		Incomplete: e.Accounting.Incomplete, Warnings: warn,
		Explanation: e, Truth: tr,
	}, nil
}

// WriteBench rewrites dir/bench.txt atomically from every record below
// dir/records, in key order, in the Go benchmark format, with header lines
// naming the platform, the seed and the suite (from dir/manifest.json).
func WriteBench(dir string) error {
	recs, err := record.ReadAll(filepath.Join(dir, "records"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	header := []record.Param{
		{Key: "goos", Value: runtime.GOOS}, {Key: "goarch", Value: runtime.GOARCH},
		{Key: "cpu", Value: cpuName()}, {Key: "go", Value: runtime.Version()},
	}
	if m, err := ReadManifest(dir); err == nil {
		header = append(header, record.Param{Key: "seed", Value: strconv.FormatUint(m.Seed, 10)}, record.Param{Key: "suite", Value: m.Suite})
		if m.Quick {
			header = append(header, record.Param{Key: "scale", Value: "quick"})
		}
		if m.Grid != "" {
			header = append(header, record.Param{Key: "grid", Value: m.Grid})
		}
	}
	return atomicfile.Write(filepath.Join(dir, "bench.txt"), func(w io.Writer) error {
		return record.WriteBench(w, header, recs)
	})
}

// cpuName returns the processor's model name, as the testing package
// prints it, or GOARCH when unknown.
func cpuName() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for line := range strings.SplitSeq(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

// ReadRecords returns every record below out/records (a directory written
// by Run, Merge or EvaluateProblems), sorted by key.
func ReadRecords(out string) ([]*record.Record, error) {
	return record.ReadAll(filepath.Join(out, "records"))
}
