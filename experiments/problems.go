package experiments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/internal/errmsg"
	"github.com/tempora-dev/tempora/internal/safefile"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/synth"
)

// synthConfig returns the synth configuration of spec.
func synthConfig(spec ProblemSpec) (synth.Config, error) {
	noise := synth.Noise{}
	if spec.Noise != "" {
		var err error
		if noise, err = synth.ParseNoise(spec.Noise); err != nil {
			return synth.Config{}, err
		}
	}
	var agg *synth.Aggregator
	if spec.Aggregator != "" {
		agg = new(synth.Aggregator)
		if err := agg.UnmarshalText([]byte(spec.Aggregator)); err != nil {
			return synth.Config{}, err
		}
	}
	ir, err := irregularOf(spec)
	if err != nil {
		return synth.Config{}, err
	}
	return synth.Config{
		Aggregator: agg,
		Instances:  spec.Instances, Features: spec.Features, Timesteps: spec.Timesteps,
		FractionRelevant: spec.FractionRelevant, Task: spec.Task, Noise: noise,
		WindowIndependent: spec.WindowIndependent, Irregular: ir,
	}, nil
}

// checkProblems checks, before anything is generated, that every problem
// the settings synthesise fits in memory (synth.CheckMemory), so that a
// grid such as "instances=2000000000" fails at once with one line.
func checkProblems(settings []Setting) error {
	for i := range settings {
		s := &settings[i]
		if i > 0 && s.Problem == settings[i-1].Problem || s.Problem.World != nil {
			continue
		}
		cfg, err := synthConfig(s.Problem)
		if err != nil {
			return err
		}
		if err := synth.CheckMemory(cfg); err != nil {
			if k := s.Key(); k != "" {
				return errmsg.Wrap(err, "experiments: setting %s", k)
			}
			return errmsg.Wrap(err, "experiments")
		}
	}
	return nil
}

// truthOf converts synth's ground truth into a record's.
func truthOf(ft []synth.FeatureTruth) *record.Truth {
	d := len(ft)
	t := &record.Truth{
		Relevant: make([]bool, d), Windows: make([]tempora.Window, d), EffectSize: make([]float64, d),
		OrderingImportant: make([]bool, d), WindowOrderingImportant: make([]bool, d),
	}
	for j, f := range ft {
		t.Relevant[j], t.Windows[j], t.EffectSize[j] = f.Relevant, f.Window, f.EffectSize
		t.OrderingImportant[j], t.WindowOrderingImportant[j] = f.OrderingImportant, f.WindowOrderingImportant
	}
	return t
}

// problemSeed is the seed of model k of the problems with the given
// problem key: every method and setting analysing that problem sees the
// same one.
func problemSeed(seed uint64, suite, problemKey string, k int) uint64 {
	return tempora.DeriveSeed(seed, suite, "problem", problemKey, "model", strconv.Itoa(k))
}

// IndexFormat is the value of a problem index's "format" field.
const IndexFormat = "tempora-problems/1"

// IndexFile is the name of the index WriteProblems writes.
const IndexFile = "index.json"

// Index lists the problems of a suite written by WriteProblems, so that an
// outside tool can explain each one and EvaluateProblems can turn its
// scores into records. It is saved as DIR/index.json (docs/records.md).
type Index struct {
	Format string `json:"format"`
	// Suite, Grid, Quick, Seed and Models are those of the run whose
	// problems these are (a run with the same values analyses the same
	// problems).
	Suite  string `json:"suite"`
	Grid   string `json:"grid,omitempty"`
	Quick  bool   `json:"quick"`
	Seed   uint64 `json:"seed"`
	Models int    `json:"models"`
	// Problems has one entry per setting and model, in the order of the
	// suite's settings, then models.
	Problems []IndexEntry `json:"problems"`
}

// IndexEntry is one (setting, model) of an index. Settings that analyse the
// same data (a grid axis over a method parameter) share a directory.
type IndexEntry struct {
	// Dir is the problem's directory (written by synth.Problem.Save),
	// slash-separated and relative to the index's directory.
	Dir string `json:"dir"`
	// Params are the setting's parameters and Model the model index: the
	// identity of the records made from the problem.
	Params []record.Param `json:"params"`
	Model  int            `json:"model"`
	// Seed is the problem's seed, as records store it.
	Seed uint64 `json:"seed"`
	// Instances, Features, Timesteps and Task describe the data.
	Instances int          `json:"instances"`
	Features  int          `json:"features"`
	Timesteps int          `json:"timesteps"`
	Task      tempora.Task `json:"task"`
}

// WriteProblems writes every problem that Run would analyse for o (its
// Suite, Grid, Models, Seed and Quick; the other fields are ignored) into
// o.Out, one directory per distinct problem as "tempora synth" writes it
// (readable with synth.Load, servable with "tempora serve"), with only the
// instances the setting analyses, and o.Out/index.json listing them.
// Directories already complete are kept, so an interrupted call can be
// rerun; a directory holding the problems of another suite, grid, scale or
// seed is refused.
func WriteProblems(ctx context.Context, o Options) (*Index, error) {
	if o.Out == "" {
		return nil, fmt.Errorf("experiments: no output directory")
	}
	idx, settings, err := newIndex(&o)
	if err != nil {
		return nil, err
	}
	for _, st := range settings {
		if st.Problem.World != nil {
			return nil, fmt.Errorf("experiments: the problems of suite %s cannot be written (its %s world has no saved form)", idx.Suite, st.Problem.World.Name())
		}
		if st.view != nil {
			return nil, fmt.Errorf("experiments: the problems of suite %s cannot be written (setting %s %s)", idx.Suite, st.Key(), st.view.unsaved())
		}
	}
	// Problems are generated once per (problem key, model), as Run does.
	var groups []string
	for _, st := range settings {
		if !slices.Contains(groups, st.problemKey) {
			groups = append(groups, st.problemKey)
		}
	}
	written := map[string]bool{}
	for _, g := range groups {
		for k := range idx.Models {
			seed := problemSeed(idx.Seed, idx.Suite, g, k)
			var prob *synth.Problem
			for si := range settings {
				st := &settings[si]
				if st.problemKey != g {
					continue
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				e := indexEntry(idx.Suite, st, k, seed)
				if !written[e.Dir] && !complete(filepath.Join(o.Out, filepath.FromSlash(e.Dir))) {
					if prob, err = saveProblem(o.Out, e.Dir, st, seed, prob); err != nil {
						return nil, err
					}
				}
				written[e.Dir] = true
				idx.Problems = append(idx.Problems, e)
			}
		}
	}
	b, err := json.MarshalIndent(idx, "", " ")
	if err != nil {
		return nil, err
	}
	if err := atomicfile.WriteBytes(filepath.Join(o.Out, IndexFile), append(b, '\n')); err != nil {
		return nil, err
	}
	return idx, nil
}

// newIndex returns the (still empty) index of the problems o describes and
// their settings, refusing an output directory that holds other problems.
func newIndex(o *Options) (*Index, []Setting, error) {
	s, err := LookupSuite(o.Suite)
	if err != nil {
		return nil, nil, err
	}
	if o.Models < 0 {
		return nil, nil, fmt.Errorf("experiments: Models is %d, want at least 1 (or 0 for the suite's default)", o.Models)
	}
	idx := &Index{Format: IndexFormat, Suite: s.Name, Grid: o.Grid, Quick: o.Quick, Seed: o.Seed, Models: o.Models, Problems: []IndexEntry{}}
	if idx.Seed == 0 {
		idx.Seed = DefaultSeed
	}
	if idx.Models == 0 {
		idx.Models = s.Models
		if o.Quick {
			idx.Models = s.QuickModels
		}
	}
	settings, err := s.Settings(o.Quick, o.Grid)
	if err != nil {
		return nil, nil, err
	}
	if err := checkProblems(settings); err != nil {
		return nil, nil, err
	}
	if old, err := ReadIndex(o.Out); err == nil {
		if old.Suite != idx.Suite || old.Grid != idx.Grid || old.Quick != idx.Quick || old.Seed != idx.Seed {
			return nil, nil, fmt.Errorf("experiments: %s holds the problems of suite %s (grid %q, quick %v, seed %d), not suite %s (grid %q, quick %v, seed %d)",
				o.Out, old.Suite, old.Grid, old.Quick, old.Seed, idx.Suite, idx.Grid, idx.Quick, idx.Seed)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	return idx, settings, nil
}

// indexEntry returns the index entry of model k of setting st.
func indexEntry(suite string, st *Setting, k int, seed uint64) IndexEntry {
	e := IndexEntry{Dir: problemDir(suite, st, k), Params: st.Params, Model: k, Seed: seed,
		Instances: st.Problem.Instances, Features: st.Problem.Features, Timesteps: st.Problem.Timesteps, Task: st.Problem.Task}
	if st.Head > 0 {
		e.Instances = st.Head
	}
	if e.Params == nil {
		e.Params = []record.Param{}
	}
	return e
}

// saveProblem saves the problem of setting st below out/dir, restricted to
// the setting's first instances. prob is the problem of st's key, or nil to
// synthesise it with seed; saveProblem returns it for the key's next
// setting.
func saveProblem(out, dir string, st *Setting, seed uint64, prob *synth.Problem) (*synth.Problem, error) {
	if prob == nil {
		cfg, err := synthConfig(st.Problem)
		if err != nil {
			return nil, err
		}
		if prob, err = synth.Generate(cfg, seed); err != nil {
			return nil, fmt.Errorf("experiments: problem %s: %w", dir, err)
		}
	}
	p := prob
	if st.Head > 0 && st.Head < prob.Data.X.M {
		var err error
		if p, err = prob.Head(st.Head); err != nil {
			return nil, err
		}
	}
	if err := p.Save(filepath.Join(out, filepath.FromSlash(dir))); err != nil {
		return nil, err
	}
	return prob, nil
}

// problemDir names the directory of model k of a setting: the suite, the
// setting's problem parameters and the model, as in a record key.
func problemDir(suite string, s *Setting, k int) string {
	parts := []string{suite}
	for _, p := range s.Params {
		if isProblemParam(p.Key) {
			parts = append(parts, p.Key+"="+p.Value)
		}
	}
	return path.Join(append(parts, "model="+strconv.Itoa(k))...)
}

// complete reports whether dir holds every file of a saved problem.
func complete(dir string) bool {
	for _, f := range []string{synth.DataFile, synth.TargetsFile, synth.ModelFile, synth.TruthFile, synth.ProblemFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}

// ReadIndex reads dir/index.json, written by WriteProblems.
func ReadIndex(dir string) (*Index, error) {
	p := filepath.Join(dir, IndexFile)
	b, err := safefile.ReadFile(p, safefile.IndexLimit, "a problem index")
	if err != nil {
		return nil, err
	}
	var idx Index
	if err := json.Unmarshal(b, &idx); err != nil {
		return nil, fmt.Errorf("experiments: %s: %w", p, err)
	}
	if idx.Format != IndexFormat {
		return nil, fmt.Errorf("experiments: %s: format %q, want %q", p, idx.Format, IndexFormat)
	}
	for _, e := range idx.Problems {
		if e.Dir == "" || path.IsAbs(e.Dir) || strings.HasPrefix(path.Clean(e.Dir), "..") {
			return nil, fmt.Errorf("experiments: %s: problem directory %q is not inside the index's directory", p, e.Dir)
		}
	}
	return &idx, nil
}
