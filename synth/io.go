package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/internal/errmsg"
	"github.com/tempora-dev/tempora/internal/npy"
	"github.com/tempora-dev/tempora/internal/safefile"
)

// Files of a saved problem and the format versions of the JSON files.
const (
	DataFile    = "data.npy"     // M × D × L float64 data tensor
	TargetsFile = "targets.npy"  // M float64 targets (labels for classification)
	ModelFile   = "model.json"   // the model, format ModelFormat
	TruthFile   = "truth.json"   // the ground truth, format TruthFormat
	ProblemFile = "problem.json" // config, seed and generators, format ProblemFormat

	ModelFormat   = "tempora-synth-model/1"
	TruthFormat   = "tempora-synth-truth/1"
	ProblemFormat = "tempora-synth-problem/1"
)

// modelDefinition is written into model.json so that the file explains
// itself to someone re-evaluating the model in another language.
const modelDefinition = "g_j(x) = (nonlinearity(aggregator(x[j, window[0]..window[1]])) - mean) / sd, windows 0-based inclusive; " +
	"max, average = unweighted mean, weighted sums = sum_k weights[k]*x[window[0]+k]; nonlinearity identity, abs or square; " +
	"F(x) = sum over relevant j of coefficient_j*g_j(x) + beta * sum over irrelevant j of coefficient_j*g_j(x); " +
	"regression predicts F(x); classification predicts 1/(1+exp(-(F(x)-threshold))); targets use beta = 0 (classification labels: 1 if F exceeds threshold, else 0)"

type jsonModel struct {
	Format     string         `json:"format"`
	Definition string         `json:"definition"`
	Task       tempora.Task   `json:"task"`
	D          int            `json:"num_features"`
	L          int            `json:"num_timesteps"`
	Beta       *float64       `json:"beta"`
	Threshold  *float64       `json:"threshold"`
	Features   []jsonFunction `json:"features"`
	// Missing is "observed" for a model over observed values
	// (irregular.go); absent otherwise.
	Missing string `json:"missing,omitempty"`
}

// observedDefinition is added to the definition of a model over observed
// values.
const observedDefinition = "; missing values (NaN) are skipped: max and average over the observed values of the window, " +
	"weighted sums over the observed values scaled by window length / observed count, and g_j = 0 when the window has no observed value"

type jsonFunction struct {
	Index        int          `json:"index"`
	Window       *[2]int      `json:"window"`
	Aggregator   Aggregator   `json:"aggregator"`
	Weights      []float64    `json:"weights,omitempty"`
	Nonlinearity Nonlinearity `json:"nonlinearity"`
	Mean         *float64     `json:"mean"`
	SD           *float64     `json:"sd"`
	Coefficient  *float64     `json:"coefficient"`
	Relevant     bool         `json:"relevant"`
}

func ptr[T any](v T) *T { return &v }

// MarshalJSON implements json.Marshaler. The JSON form (format
// "tempora-synth-model/1") lists every parameter needed to re-evaluate the
// model, and a "definition" string saying how.
func (m *Model) MarshalJSON() ([]byte, error) {
	j := jsonModel{
		Format: ModelFormat, Definition: modelDefinition, Task: m.task, D: m.d, L: m.l,
		Beta: ptr(m.beta), Threshold: ptr(m.tau), Features: make([]jsonFunction, m.d),
	}
	if m.observed {
		j.Definition += observedDefinition
		j.Missing = "observed"
	}
	for k := range m.feats {
		f := &m.feats[k]
		j.Features[k] = jsonFunction{
			Index: k, Window: &[2]int{f.Window.Start, f.Window.End}, Aggregator: f.Aggregator,
			Weights: f.Weights, Nonlinearity: f.Nonlinearity,
			Mean: ptr(f.Mean), SD: ptr(f.SD), Coefficient: ptr(f.Coefficient), Relevant: f.Relevant,
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler. It rejects unknown formats,
// unknown or missing fields, and parameters NewModel rejects.
func (m *Model) UnmarshalJSON(b []byte) error {
	var j jsonModel
	if err := strictUnmarshal(b, &j); err != nil {
		return fmt.Errorf("synth: model: %w", err)
	}
	if j.Format != ModelFormat {
		return fmt.Errorf("synth: model format %q, want %q", j.Format, ModelFormat)
	}
	if j.Beta == nil || j.Threshold == nil {
		return fmt.Errorf("synth: model lacks beta or threshold")
	}
	if len(j.Features) != j.D {
		return fmt.Errorf("synth: model has %d features, announces %d", len(j.Features), j.D)
	}
	funcs := make([]FeatureFunction, len(j.Features))
	for k, f := range j.Features {
		if f.Index != k {
			return fmt.Errorf("synth: model feature %d has index %d", k, f.Index)
		}
		if f.Window == nil || f.Mean == nil || f.SD == nil || f.Coefficient == nil {
			return fmt.Errorf("synth: model feature %d lacks its window, mean, sd or coefficient", k)
		}
		funcs[k] = FeatureFunction{
			Window: tempora.Window{Start: f.Window[0], End: f.Window[1]}, Aggregator: f.Aggregator,
			Weights: f.Weights, Nonlinearity: f.Nonlinearity,
			Mean: *f.Mean, SD: *f.SD, Coefficient: *f.Coefficient, Relevant: f.Relevant,
		}
	}
	nm, err := NewModel(j.Task, j.D, j.L, *j.Beta, *j.Threshold, funcs)
	if err != nil {
		return err
	}
	switch j.Missing {
	case "":
	case "observed":
		nm.observed = true
	default:
		return fmt.Errorf("synth: model: missing %q, want \"observed\" or none", j.Missing)
	}
	*m = *nm
	return nil
}

type jsonTruthFile struct {
	Format   string         `json:"format"`
	Task     tempora.Task   `json:"task"`
	L        int            `json:"num_timesteps"`
	Features []jsonTruthRow `json:"features"`
	// Outputs is the truth of each output of a model with several
	// outputs (outputs_io.go); absent for one output.
	Outputs *jsonTruthOutputs `json:"outputs,omitempty"`
}

type jsonTruthRow struct {
	Index                   int     `json:"index"`
	Name                    string  `json:"name"`
	Relevant                bool    `json:"relevant"`
	Window                  *[2]int `json:"window"`
	EffectSize              float64 `json:"effect_size"`
	OrderingImportant       bool    `json:"ordering_important"`
	WindowOrderingImportant bool    `json:"window_ordering_important"`
	// Lag is the window in lag coordinates of an output with an anchor
	// (outputs_io.go); absent otherwise.
	Lag *[2]int `json:"lag,omitempty"`
}

type jsonProblem struct {
	Format     string          `json:"format"`
	Seed       uint64          `json:"seed"`
	Config     Config          `json:"config"`
	Generators []jsonGenerator `json:"generators"`
}

type jsonGenerator struct {
	Index  int     `json:"index"`
	Window *[2]int `json:"window"`
	*Generator
}

// Save writes the problem into dir (created if needed), replacing each file
// atomically:
//
//	data.npy      the M × D × L float64 data tensor
//	targets.npy   the M targets (F_0 for regression, labels 0/1 for classification)
//	model.json    the model (see Model.MarshalJSON)
//	truth.json    {"format": "tempora-synth-truth/1", "task": …, "num_timesteps": L,
//	               "features": [{"index", "name", "relevant", "window": [start, end]
//	               (0-based, inclusive), "effect_size", "ordering_important",
//	               "window_ordering_important"}, …]}
//	problem.json  the configuration, the seed and each feature's generator
//
// The same problem always gives byte-identical files.
func (p *Problem) Save(dir string) error {
	return p.SaveContext(context.Background(), dir)
}

// SaveContext is Save that stops once ctx is done, within one buffer of
// the file being written (a large data file need not be finished first),
// and returns an error that wraps ctx's. The file being written is left as
// it was; the files written before it are kept.
func (p *Problem) SaveContext(ctx context.Context, dir string) error {
	if err := p.save(ctx, dir); err != nil {
		return errmsg.Wrap(err, "synth: saving the problem")
	}
	return nil
}

func (p *Problem) save(ctx context.Context, dir string) error {
	if err := writeArrays(ctx, dir, p.Data, []int{len(p.Data.Y)}); err != nil {
		return err
	}
	if err := writeJSON(ctx, filepath.Join(dir, ModelFile), p.Model); err != nil {
		return err
	}
	t := jsonTruthFile{Format: TruthFormat, Task: p.Model.task, L: p.Model.l, Features: truthRows(p.Truth, nil)}
	if err := writeJSON(ctx, filepath.Join(dir, TruthFile), t); err != nil {
		return err
	}
	jp := jsonProblem{Format: ProblemFormat, Seed: p.Seed, Config: p.Config, Generators: make([]jsonGenerator, len(p.Generators))}
	for k, g := range p.Generators {
		jp.Generators[k] = jsonGenerator{Index: k, Window: &[2]int{g.Window.Start, g.Window.End}, Generator: g}
	}
	return writeJSON(ctx, filepath.Join(dir, ProblemFile), jp)
}

// writeArrays creates dir and writes data.npy (M × D × L) and targets.npy
// (Y in the given shape) into it.
func writeArrays(ctx context.Context, dir string, data *tempora.Dataset, yShape []int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	x := data.X
	if err := atomicfile.WriteContext(ctx, filepath.Join(dir, DataFile), func(w io.Writer) error {
		return npy.Write(w, []int{x.M, x.D, x.L}, x.Data)
	}); err != nil {
		return err
	}
	return atomicfile.WriteContext(ctx, filepath.Join(dir, TargetsFile), func(w io.Writer) error {
		return npy.Write(w, yShape, data.Y)
	})
}

func writeJSON(ctx context.Context, path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", filepath.Base(path), err)
	}
	b = append(b, '\n')
	return atomicfile.WriteContext(ctx, path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

func readJSON(path string, v any) error {
	b, err := safefile.ReadFile(path, safefile.JSONLimit, "a problem's JSON file")
	if err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	if err := strictUnmarshal(b, v); err != nil {
		// Model.UnmarshalJSON's errors carry this package's prefix.
		return errmsg.Wrap(err, "synth: %s", path)
	}
	return nil
}

// Load reads a problem saved by Save. It returns an error naming the file
// if a file is missing or malformed, or if the files disagree: shapes of the
// data, targets, model, truth and generators; windows and relevance in the
// model, truth and generators; targets that the model does not reproduce;
// truth flags inconsistent with the model.
func Load(dir string) (*Problem, error) {
	if HasOutputs(dir) {
		return nil, fmt.Errorf("synth: %s holds a problem whose model has several outputs: load it with LoadOutputs", dir)
	}
	var jp jsonProblem
	if err := readJSON(filepath.Join(dir, ProblemFile), &jp); err != nil {
		return nil, err
	}
	pf := filepath.Join(dir, ProblemFile)
	if jp.Format != ProblemFormat {
		return nil, fmt.Errorf("synth: %s: format %q, want %q", pf, jp.Format, ProblemFormat)
	}
	cfg := jp.Config
	if err := cfg.validate(); err != nil {
		return nil, errmsg.Wrap(err, "synth: %s", pf)
	}
	D, L := cfg.Features, cfg.Timesteps

	m := new(Model)
	if err := readJSON(filepath.Join(dir, ModelFile), m); err != nil {
		return nil, err
	}
	mf := filepath.Join(dir, ModelFile)
	if m.d != D || m.l != L || m.task != cfg.Task {
		return nil, fmt.Errorf("synth: %s: %v model of %d features × %d timesteps, %s says %v with %d × %d",
			mf, m.task, m.d, m.l, ProblemFile, cfg.Task, D, L)
	}
	if !cfg.Noise.Auto && m.beta != cfg.Noise.Beta {
		return nil, fmt.Errorf("synth: %s: noise multiplier %v, %s says %v", mf, m.beta, ProblemFile, cfg.Noise.Beta)
	}
	if m.observed != (cfg.Irregular != nil) {
		return nil, fmt.Errorf("synth: %s: model over observed values %v, %s says irregular %v", mf, m.observed, ProblemFile, cfg.Irregular != nil)
	}
	if n := len(m.Relevant()); n != cfg.NumRelevant() {
		return nil, fmt.Errorf("synth: %s: %d relevant features, %s implies %d", mf, n, ProblemFile, cfg.NumRelevant())
	}

	if len(jp.Generators) != D {
		return nil, fmt.Errorf("synth: %s: %d generators for %d features", pf, len(jp.Generators), D)
	}
	gens := make([]*Generator, D)
	for k, jg := range jp.Generators {
		if jg.Index != k || jg.Generator == nil || jg.Window == nil {
			return nil, fmt.Errorf("synth: %s: generator %d is missing or misnumbered", pf, k)
		}
		g := jg.Generator
		g.Window = tempora.Window{Start: jg.Window[0], End: jg.Window[1]}
		if err := g.validate(L); err != nil {
			return nil, fmt.Errorf("synth: %s: generator %d: %w", pf, k, err)
		}
		if g.Window != m.feats[k].Window {
			return nil, fmt.Errorf("synth: %s: generator %d has window %v, the model %v", pf, k, g.Window, m.feats[k].Window)
		}
		if g.WindowIndependent != cfg.WindowIndependent {
			return nil, fmt.Errorf("synth: %s: generator %d window independence %v, config %v", pf, k, g.WindowIndependent, cfg.WindowIndependent)
		}
		gens[k] = g
	}

	truth, err := readTruth(filepath.Join(dir, TruthFile), m)
	if err != nil {
		return nil, err
	}

	df := filepath.Join(dir, DataFile)
	tf := filepath.Join(dir, TargetsFile)
	if err := regularFiles(df, tf); err != nil {
		return nil, err
	}
	read := dataio.ReadTensorNPY
	if cfg.Irregular != nil {
		read = dataio.ReadDataNPY // missing values are NaN
	}
	x, err := read(df)
	if err != nil {
		return nil, errmsg.Wrap(err, "synth") // the message names the file
	}
	if x.D != D || x.L != L {
		return nil, fmt.Errorf("synth: %s: data has %d features × %d timesteps, the model %d × %d", df, x.D, x.L, D, L)
	}
	if x.M > cfg.Instances {
		return nil, fmt.Errorf("synth: %s: %d instances, more than the %d generated", df, x.M, cfg.Instances)
	}
	y, err := dataio.ReadVectorNPY(tf)
	if err != nil {
		return nil, errmsg.Wrap(err, "synth")
	}
	if len(y) != x.M {
		return nil, fmt.Errorf("synth: %s: %d targets for %d instances", tf, len(y), x.M)
	}
	want := make([]float64, x.M)
	if err := m.Targets(want, x); err != nil {
		return nil, errmsg.Wrap(err, "synth: %s", tf)
	}
	for i := range y {
		// The model reproduces its own targets exactly; the tolerance only
		// admits re-serialisation by other tools.
		if math.Abs(y[i]-want[i]) > 1e-9*(1+math.Abs(want[i])) {
			return nil, fmt.Errorf("synth: %s: target %v of instance %d disagrees with the model's %v", tf, y[i], i, want[i])
		}
	}
	names := make([]string, D)
	for j, t := range truth {
		names[j] = t.Name
	}
	data := &tempora.Dataset{X: x, Y: y, Task: cfg.Task, FeatureNames: names, Alignment: alignment(cfg)}
	if cfg.Irregular != nil {
		_, err = data.Observe(1)
	} else {
		err = data.Validate(1)
	}
	if err != nil {
		return nil, errmsg.Wrap(err, "synth: %s", dir)
	}
	return &Problem{Config: cfg, Seed: jp.Seed, Data: data, Model: m, Truth: truth, Generators: gens}, nil
}

// readTruth reads truth.json and checks it against the model.
func readTruth(path string, m *Model) ([]FeatureTruth, error) {
	var jt jsonTruthFile
	if err := readJSON(path, &jt); err != nil {
		return nil, err
	}
	if jt.Format != TruthFormat {
		return nil, fmt.Errorf("synth: %s: format %q, want %q", path, jt.Format, TruthFormat)
	}
	if jt.Task != m.task || jt.L != m.l || len(jt.Features) != m.d {
		return nil, fmt.Errorf("synth: %s: %v truth of %d features × %d timesteps, the model is %v with %d × %d",
			path, jt.Task, len(jt.Features), jt.L, m.task, m.d, m.l)
	}
	truth := make([]FeatureTruth, m.d)
	for k, r := range jt.Features {
		f := &m.feats[k]
		if r.Index != k || r.Window == nil || r.Name == "" {
			return nil, fmt.Errorf("synth: %s: feature %d is misnumbered or lacks its name or window", path, k)
		}
		t := FeatureTruth{
			Index: k, Name: r.Name, Relevant: r.Relevant, Window: tempora.Window{Start: r.Window[0], End: r.Window[1]},
			EffectSize: r.EffectSize, OrderingImportant: r.OrderingImportant, WindowOrderingImportant: r.WindowOrderingImportant,
		}
		if t.Relevant != f.Relevant || t.Window != f.Window {
			return nil, fmt.Errorf("synth: %s: feature %d (relevant %v, window %v) disagrees with the model (relevant %v, window %v)",
				path, k, t.Relevant, t.Window, f.Relevant, f.Window)
		}
		wo := f.Relevant && f.Aggregator.OrderingSensitive()
		o := f.Relevant && (f.Window.Len() < m.l || wo)
		// Over observed values the whole sequence's ordering may not
		// matter even for a window shorter than L (irregular.go), so the
		// model only bounds the flag.
		if t.WindowOrderingImportant != wo || t.OrderingImportant != o && !(m.observed && !t.OrderingImportant) {
			return nil, fmt.Errorf("synth: %s: feature %d ordering flags (%v, window %v) disagree with the model (%v, %v)",
				path, k, t.OrderingImportant, t.WindowOrderingImportant, o, wo)
		}
		if !finite(t.EffectSize) || t.EffectSize < 0 || (!t.Relevant && t.EffectSize != 0) {
			return nil, fmt.Errorf("synth: %s: feature %d has effect size %v", path, k, t.EffectSize)
		}
		truth[k] = t
	}
	return truth, nil
}

// ReadTruth reads the ground truth that Save wrote into dir (truth.json)
// without loading the rest of the problem, for scoring an explanation of
// it, and returns it with the problem's number of timesteps. It checks the
// format and the features' numbering; whether the truth fits a model is
// Load's check, and whether its windows fit the timesteps the caller's.
func ReadTruth(dir string) ([]FeatureTruth, int, error) {
	path := filepath.Join(dir, TruthFile)
	b, err := safefile.ReadFile(path, safefile.JSONLimit, "a truth file")
	if err != nil {
		return nil, 0, fmt.Errorf("synth: %w", err)
	}
	var jt struct {
		Format   string `json:"format"`
		L        int    `json:"num_timesteps"`
		Features []struct {
			Index                   int            `json:"index"`
			Name                    string         `json:"name"`
			Relevant                bool           `json:"relevant"`
			Window                  tempora.Window `json:"window"`
			EffectSize              float64        `json:"effect_size"`
			OrderingImportant       bool           `json:"ordering_important"`
			WindowOrderingImportant bool           `json:"window_ordering_important"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &jt); err != nil {
		return nil, 0, fmt.Errorf("synth: %s: %w", path, err)
	}
	if jt.Format != TruthFormat {
		return nil, 0, fmt.Errorf("synth: %s: format %q, want %q", path, jt.Format, TruthFormat)
	}
	truth := make([]FeatureTruth, len(jt.Features))
	for j, f := range jt.Features {
		if f.Index != j {
			return nil, 0, fmt.Errorf("synth: %s: feature %d has index %d", path, j, f.Index)
		}
		truth[j] = FeatureTruth{Index: j, Name: f.Name, Relevant: f.Relevant, Window: f.Window, EffectSize: f.EffectSize,
			OrderingImportant: f.OrderingImportant, WindowOrderingImportant: f.WindowOrderingImportant}
	}
	return truth, jt.L, nil
}
