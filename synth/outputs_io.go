package synth

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/internal/errmsg"
	"github.com/tempora-dev/tempora/internal/npy"
	"github.com/tempora-dev/tempora/internal/safefile"
)

// The saved form of a problem with several outputs: the files of Save,
// with their own formats for the model and the problem, and truth.json in
// TruthFormat with an "outputs" member (absent for one output, so that
// those files are unchanged).
const (
	OutputsModelFormat   = "tempora-synth-outputs-model/1"
	OutputsProblemFormat = "tempora-synth-outputs-problem/1"
)

// outputsModelDefinition is written into the model's JSON so that the file
// explains itself.
const outputsModelDefinition = "unit score z_u = bias + sum over reads of sum_k weights[k]*v_j(window[0]+k), windows 0-based inclusive, " +
	"v_j(t) = x[j, t], or for a carried feature its last observed (non-NaN) value at or before t (0 before the first); " +
	"horizons and steps: output k = z_k (regression); classes: a nested dichotomy, tree[n] = [first child, second child] " +
	"(a later node, or class c written -1-c), node 0 the root, P(second child at n) = 1/(1+exp(-z_n)), " +
	"a class's probability the product of its path's branch probabilities"

type jsonOutputsModel struct {
	Format     string             `json:"format"`
	Definition string             `json:"definition"`
	Kind       tempora.OutputKind `json:"kind"`
	K          int                `json:"num_outputs"`
	D          int                `json:"num_features"`
	L          int                `json:"num_timesteps"`
	Carried    []int              `json:"carried"`
	Tree       [][2]int           `json:"tree,omitempty"`
	Units      []jsonUnit         `json:"units"`
}

type jsonUnit struct {
	Bias  float64    `json:"bias"`
	Reads []jsonRead `json:"reads"`
}

type jsonRead struct {
	Feature int       `json:"feature"`
	Window  [2]int    `json:"window"`
	Weights []float64 `json:"weights"`
}

// MarshalJSON implements json.Marshaler (format
// "tempora-synth-outputs-model/1", with a definition string).
func (m *OutputsModel) MarshalJSON() ([]byte, error) {
	s := &m.spec
	j := jsonOutputsModel{Format: OutputsModelFormat, Definition: outputsModelDefinition, Kind: s.Kind, K: s.K,
		D: s.Features, L: s.Timesteps, Carried: s.Carried, Tree: s.Tree, Units: make([]jsonUnit, len(s.Units))}
	if j.Carried == nil {
		j.Carried = []int{}
	}
	for u, unit := range s.Units {
		ju := jsonUnit{Bias: unit.Bias, Reads: []jsonRead{}}
		for _, r := range unit.Reads {
			ju.Reads = append(ju.Reads, jsonRead{Feature: r.Feature, Window: [2]int{r.Window.Start, r.Window.End}, Weights: r.Weights})
		}
		j.Units[u] = ju
	}
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler: it rejects other formats,
// unknown fields and the models NewOutputsModel rejects.
func (m *OutputsModel) UnmarshalJSON(b []byte) error {
	var j jsonOutputsModel
	if err := strictUnmarshal(b, &j); err != nil {
		return fmt.Errorf("synth: outputs model: %w", err)
	}
	if j.Format != OutputsModelFormat {
		return fmt.Errorf("synth: outputs model format %q, want %q", j.Format, OutputsModelFormat)
	}
	spec := OutputsSpec{Kind: j.Kind, K: j.K, Features: j.D, Timesteps: j.L, Tree: j.Tree, Carried: j.Carried}
	if len(spec.Carried) == 0 {
		spec.Carried = nil
	}
	for _, ju := range j.Units {
		u := Unit{Bias: ju.Bias}
		for _, r := range ju.Reads {
			u.Reads = append(u.Reads, Read{Feature: r.Feature, Window: tempora.Window{Start: r.Window[0], End: r.Window[1]}, Weights: r.Weights})
		}
		spec.Units = append(spec.Units, u)
	}
	nm, err := NewOutputsModel(spec)
	if err != nil {
		return err
	}
	*m = *nm
	return nil
}

// jsonTruthOutputs is the "outputs" member of truth.json.
type jsonTruthOutputs struct {
	Kind    tempora.OutputKind `json:"kind"`
	Outputs []jsonTruthOutput  `json:"per_output"`
}

type jsonTruthOutput struct {
	Name     string         `json:"name"`
	Features []jsonTruthRow `json:"features"`
}

type jsonOutputsProblem struct {
	Format string        `json:"format"`
	Seed   uint64        `json:"seed"`
	Config OutputsConfig `json:"config"`
}

// truthRows returns the JSON rows of a truth, with each feature's lag
// when lags is not nil.
func truthRows(truth []FeatureTruth, lags []tempora.Window) []jsonTruthRow {
	rows := make([]jsonTruthRow, len(truth))
	for k, f := range truth {
		rows[k] = jsonTruthRow{
			Index: f.Index, Name: f.Name, Relevant: f.Relevant, Window: &[2]int{f.Window.Start, f.Window.End},
			EffectSize: f.EffectSize, OrderingImportant: f.OrderingImportant, WindowOrderingImportant: f.WindowOrderingImportant,
		}
		if lags != nil {
			rows[k].Lag = &[2]int{lags[k].Start, lags[k].End}
		}
	}
	return rows
}

// Save writes the problem into dir as Problem.Save writes a problem with
// one output: data.npy (M × D × L, NaN where the sparse feature is not
// observed), targets.npy (M labels for classes, an M × K array
// otherwise), model.json (format OutputsModelFormat), truth.json (the
// whole model's features as for one output, and an "outputs" member:
// {"kind", "per_output": [{"name", "features": [rows as the whole
// model's, each with "lag": [start, end] for outputs with an anchor]}]})
// and problem.json (format OutputsProblemFormat: the configuration and
// the seed). The same problem always gives byte-identical files.
func (p *OutputsProblem) Save(dir string) error {
	return p.SaveContext(context.Background(), dir)
}

// SaveContext is Save that stops once ctx is done (see
// Problem.SaveContext).
func (p *OutputsProblem) SaveContext(ctx context.Context, dir string) error {
	if err := p.save(ctx, dir); err != nil {
		return errmsg.Wrap(err, "synth: saving the problem")
	}
	return nil
}

func (p *OutputsProblem) save(ctx context.Context, dir string) error {
	x := p.Data.X
	shape := []int{x.M}
	if w := p.Data.Outputs.TargetWidth(); w > 1 {
		shape = append(shape, w)
	}
	if err := writeArrays(ctx, dir, p.Data, shape); err != nil {
		return err
	}
	if err := writeJSON(ctx, filepath.Join(dir, ModelFile), p.Model); err != nil {
		return err
	}
	t := jsonTruthFile{Format: TruthFormat, Task: p.Data.Task, L: x.L, Features: truthRows(p.Truth, nil),
		Outputs: &jsonTruthOutputs{Kind: p.Config.Kind}}
	for _, o := range p.Outputs {
		t.Outputs.Outputs = append(t.Outputs.Outputs, jsonTruthOutput{Name: o.Name, Features: truthRows(o.Features, o.Lags)})
	}
	if err := writeJSON(ctx, filepath.Join(dir, TruthFile), t); err != nil {
		return err
	}
	return writeJSON(ctx, filepath.Join(dir, ProblemFile), jsonOutputsProblem{Format: OutputsProblemFormat, Seed: p.Seed, Config: p.Config})
}

// HasOutputs reports whether dir holds a problem saved by
// OutputsProblem.Save (its problem.json has format OutputsProblemFormat),
// to be read with LoadOutputs rather than Load. It is false when the file
// cannot be read.
func HasOutputs(dir string) bool {
	b, err := safefile.ReadFile(filepath.Join(dir, ProblemFile), safefile.JSONLimit, "a problem's JSON file")
	if err != nil {
		return false
	}
	var j struct {
		Format string `json:"format"`
	}
	return json.Unmarshal(b, &j) == nil && j.Format == OutputsProblemFormat
}

// LoadOutputs reads a problem with several outputs saved by
// OutputsProblem.Save. It returns an error naming the file if a file is
// missing or malformed, or if the files disagree: the shapes of the data,
// targets, model and truth; a true read (an output's relevant feature)
// that the model does not read there; targets the dataset refuses
// (tempora.Dataset.Observe).
func LoadOutputs(dir string) (*OutputsProblem, error) {
	pf := filepath.Join(dir, ProblemFile)
	var jp jsonOutputsProblem
	if err := readJSON(pf, &jp); err != nil {
		return nil, err
	}
	if jp.Format != OutputsProblemFormat {
		return nil, fmt.Errorf("synth: %s: format %q, want %q", pf, jp.Format, OutputsProblemFormat)
	}
	cfg := jp.Config
	if err := cfg.validate(); err != nil {
		return nil, errmsg.Wrap(err, "synth: %s", pf)
	}
	m := new(OutputsModel)
	mf := filepath.Join(dir, ModelFile)
	if err := readJSON(mf, m); err != nil {
		return nil, err
	}
	s := &m.spec
	if s.Kind != cfg.Kind || s.K != cfg.K() || s.Features != cfg.Features || s.Timesteps != cfg.Timesteps {
		return nil, fmt.Errorf("synth: %s: %v model of %d outputs, %d features × %d timesteps; %s says %v with %d, %d × %d",
			mf, s.Kind, s.K, s.Features, s.Timesteps, ProblemFile, cfg.Kind, cfg.K(), cfg.Features, cfg.Timesteps)
	}
	truth, outs, err := readOutputsTruth(filepath.Join(dir, TruthFile), m)
	if err != nil {
		return nil, err
	}
	df, tf := filepath.Join(dir, DataFile), filepath.Join(dir, TargetsFile)
	if err := regularFiles(df, tf); err != nil {
		return nil, err
	}
	x, err := dataio.ReadDataNPY(df)
	if err != nil {
		return nil, errmsg.Wrap(err, "synth")
	}
	if x.D != s.Features || x.L != s.Timesteps || x.M > cfg.Instances {
		return nil, fmt.Errorf("synth: %s: data of %d × %d × %d, the problem has %d instances of %d × %d", df, x.M, x.D, x.L, cfg.Instances, s.Features, s.Timesteps)
	}
	y, err := readTargets(tf, x.M, m.Outputs().TargetWidth())
	if err != nil {
		return nil, err
	}
	names := make([]string, s.Features)
	for j, t := range truth {
		names[j] = t.Name
	}
	data := &tempora.Dataset{X: x, Y: y, Task: m.Task(), FeatureNames: names, Outputs: m.Outputs()}
	if _, err := data.Observe(1); err != nil {
		return nil, errmsg.Wrap(err, "synth: %s", dir)
	}
	return &OutputsProblem{Config: cfg, Seed: jp.Seed, Data: data, Model: m, Truth: truth, Outputs: outs}, nil
}

// readTargets reads M targets of width w (an M-vector for w = 1, an M × w
// array otherwise); NaN is no target.
func readTargets(path string, m, w int) ([]float64, error) {
	f, err := safefile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	defer f.Close()
	a, err := npy.Read(f)
	if err != nil {
		return nil, fmt.Errorf("synth: %s: %w", path, err)
	}
	want := []int{m}
	if w > 1 {
		want = append(want, w)
	}
	if fmt.Sprint(a.Shape) != fmt.Sprint(want) {
		return nil, fmt.Errorf("synth: %s: targets of shape %v, want %v", path, a.Shape, want)
	}
	for i, v := range a.Data {
		if math.IsInf(v, 0) {
			return nil, fmt.Errorf("synth: %s: target %d is %v", path, i, v)
		}
	}
	return a.Data, nil
}

// readOutputsTruth reads a truth.json with outputs and checks it against
// the model: every output's rows, their lags from its anchor, and every
// true read where the model reads.
func readOutputsTruth(path string, m *OutputsModel) ([]FeatureTruth, []OutputTruth, error) {
	var jt jsonTruthFile
	if err := readJSON(path, &jt); err != nil {
		return nil, nil, err
	}
	s := &m.spec
	switch {
	case jt.Format != TruthFormat:
		return nil, nil, fmt.Errorf("synth: %s: format %q, want %q", path, jt.Format, TruthFormat)
	case jt.Outputs == nil || jt.Outputs.Kind != s.Kind || len(jt.Outputs.Outputs) != s.K:
		return nil, nil, fmt.Errorf("synth: %s: want the truth of %d %v outputs", path, s.K, s.Kind)
	case jt.Task != m.Task() || jt.L != s.Timesteps:
		return nil, nil, fmt.Errorf("synth: %s: %v truth of %d timesteps, the model is %v with %d", path, jt.Task, jt.L, m.Task(), s.Timesteps)
	}
	truth, err := truthFromRows(path, "the whole model", jt.Features, s.Features, s.Timesteps, false)
	if err != nil {
		return nil, nil, err
	}
	o := m.Outputs()
	outs := make([]OutputTruth, s.K)
	for k, jo := range jt.Outputs.Outputs {
		what := "output " + strconv.Itoa(k)
		fs, err := truthFromRows(path, what, jo.Features, s.Features, s.Timesteps, true)
		if err != nil {
			return nil, nil, err
		}
		ot := OutputTruth{Name: jo.Name, Features: fs}
		if jo.Name != o.Name(k) {
			return nil, nil, fmt.Errorf("synth: %s: %s is named %q, want %q", path, what, jo.Name, o.Name(k))
		}
		if s.Kind != tempora.Classes {
			ot.Lags = make([]tempora.Window, s.Features)
		}
		for j, r := range jo.Features {
			if (r.Lag != nil) != (ot.Lags != nil) {
				return nil, nil, fmt.Errorf("synth: %s: %s, feature %d: a lag is given for outputs with an anchor, and only for them", path, what, j)
			}
			if fs[j].Relevant && !m.reads(k, j, fs[j].Window.End) {
				return nil, nil, fmt.Errorf("synth: %s: %s reads feature %d over %v, the model does not read it there", path, what, j, fs[j].Window)
			}
			if r.Lag != nil {
				ot.Lags[j] = tempora.Window{Start: r.Lag[0], End: r.Lag[1]}
				if want, _ := o.Lag(fs[j].Window, k, s.Timesteps); fs[j].Relevant && ot.Lags[j] != want {
					return nil, nil, fmt.Errorf("synth: %s: %s, feature %d: lag %v, its window %v is %v", path, what, j, ot.Lags[j], fs[j].Window, want)
				}
			}
		}
		outs[k] = ot
	}
	names := make([]string, len(truth))
	for j, f := range truth {
		names[j] = f.Name
	}
	if want := wholeTruth(outs, names, s.Timesteps); !slices.Equal(truth, want) {
		return nil, nil, fmt.Errorf("synth: %s: the whole model's truth is not that of its outputs (a feature is relevant where an output reads it, over the hull of their windows)", path)
	}
	return truth, outs, nil
}

// truthFromRows converts truth rows, checking their numbering, names and
// windows.
func truthFromRows(path, what string, rows []jsonTruthRow, d, l int, lags bool) ([]FeatureTruth, error) {
	if len(rows) != d {
		return nil, fmt.Errorf("synth: %s: %s has %d features, the model %d", path, what, len(rows), d)
	}
	truth := make([]FeatureTruth, d)
	for j, r := range rows {
		if r.Index != j || r.Window == nil || r.Name == "" {
			return nil, fmt.Errorf("synth: %s: %s, feature %d is misnumbered or lacks its name or window", path, what, j)
		}
		w := tempora.Window{Start: r.Window[0], End: r.Window[1]}
		if err := checkWindow(w, l); err != nil {
			return nil, fmt.Errorf("synth: %s: %s, feature %d: %w", path, what, j, err)
		}
		if !lags && r.Lag != nil {
			return nil, fmt.Errorf("synth: %s: %s, feature %d has a lag", path, what, j)
		}
		if !finite(r.EffectSize) || r.EffectSize < 0 || (!r.Relevant && r.EffectSize != 0) {
			return nil, fmt.Errorf("synth: %s: %s, feature %d has effect size %v", path, what, j, r.EffectSize)
		}
		truth[j] = FeatureTruth{Index: j, Name: r.Name, Relevant: r.Relevant, Window: w, EffectSize: r.EffectSize,
			OrderingImportant: r.OrderingImportant, WindowOrderingImportant: r.WindowOrderingImportant}
	}
	return truth, nil
}

// reads reports whether output k of the model reads feature j at
// timestep t with a non-zero weight (for classes: a node on class k's
// path does).
func (m *OutputsModel) reads(k, j, t int) bool {
	units := []int{k}
	if m.spec.Kind == tempora.Classes {
		units = m.ClassPath(k)
	}
	for _, u := range units {
		for _, r := range m.spec.Units[u].Reads {
			if r.Feature == j && r.Window.Contains(t) && r.Weights[t-r.Window.Start] != 0 {
				return true
			}
		}
	}
	return false
}
