package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/tempora-dev/tempora"
)

// Worlds with several outputs (issue 30; docs/decisions.md, decision 24):
// classes, horizons and output steps, each with the exact truth of which
// features, and which windows of them, each output's loss depends on.
//
// Data. Every cell is standard normal, independently across instances,
// features and timesteps; a sparse feature (steps, OutputsConfig.Period
// P) is observed only every P timesteps, from a phase drawn uniformly per
// instance, and missing (NaN) elsewhere.
//
// Model and targets. A world draws the true units (the linear scores of
// OutputsModel) from which the targets come, and the black box is the
// same units plus, optionally, reads the targets lack: noise weights
// N(0, NoiseScale²) on every feature at every timestep of every unit, and
// the reads of the null outputs, whose targets read nothing
// (NullOutputs). Horizons and steps are regression: output k's target is
// its true score plus N(0, Noise²) noise. Classes are labels drawn from
// the true nested dichotomy's class probabilities.
//
// Truth. Output k's loss depends on feature j exactly where both the
// black box and the targets read it: over the true unit's window of j
// (horizons and steps), or over the window of the node reading j on
// class k's path (classes). A feature the model carries forward over its
// missing values is read over the P timesteps ending at the read
// timestep, which always hold exactly one observation. Reads the targets
// lack leave the expected loss unchanged, whatever the model does with
// them, since every cell is independent of the targets' other inputs:
// these are the truth's nulls (features no output reads, outputs that
// read no feature, future timesteps a causal target never reads), and
// permutation tests of them are exact. The whole model reads a feature
// where some output does: its window is the hull of the outputs' windows
// (OutputsProblem.WindowLists gives their union).
//
// Random streams (keys of tempora.NewRand): ("synth", "outputs", kind,
// "layout") for the true units; ("synth", "outputs", "noise weights") for
// the noise weights, unit by unit; ("synth", "outputs", "data") for the
// data, instance by instance (the cells, then the sparse feature's
// phase); ("synth", "outputs", "targets") for the targets' noise or the
// labels, instance by instance. So the first n instances of a problem do
// not depend on Instances.

// Defaults of OutputsConfig's zero fields.
const (
	// DefaultClasses and DefaultHorizons are K for classes and horizons.
	DefaultClasses  = 4
	DefaultHorizons = 4
	// DefaultOutputsNoise is the SD of the targets' noise.
	DefaultOutputsNoise = 1.0
)

// classScoreSD is the SD of a split node's true score: its class
// probabilities are then mostly decided (|z| > 1 two times in three) but
// not certain.
const classScoreSD = 3.0

// OutputsConfig configures GenerateOutputs. Zero fields take the
// defaults noted.
type OutputsConfig struct {
	// Kind is the kind of outputs: tempora.Classes, Horizons or Steps.
	Kind tempora.OutputKind `json:"kind"`
	// Instances, Features and Timesteps are M, D and L (zero: 1000, 10
	// and 20).
	Instances int `json:"instances"`
	Features  int `json:"features"`
	Timesteps int `json:"timesteps"`
	// Outputs is K for classes (zero: DefaultClasses; at least 3) and
	// horizons (zero: DefaultHorizons); steps have one output per
	// timestep, and Outputs must be zero.
	Outputs int `json:"outputs"`
	// Relevant is the number of relevant features, the first ones: K − 1
	// for classes (one per split node; zero or K − 1), else zero for
	// max(1, D/2).
	Relevant int `json:"relevant"`
	// Partial (horizons) is how many of the relevant features, the last
	// ones, are read by some horizons only (a uniform subset of 1 to K − 1
	// of them); the others are read by every horizon.
	Partial int `json:"partial,omitempty"`
	// Noise is the SD of the targets' Gaussian noise (horizons, steps;
	// zero: DefaultOutputsNoise). Classes take none: labels are drawn.
	Noise float64 `json:"noise,omitempty"`
	// NoiseScale is the SD of the black box's noise weights, which the
	// targets lack (0: none).
	NoiseScale float64 `json:"noise_scale,omitempty"`
	// NullOutputs (horizons, steps) is how many outputs, the last ones,
	// have targets that read nothing, while the black box reads as
	// drawn.
	NullOutputs int `json:"null_outputs,omitempty"`
	// Period (steps), if not 0, makes the last relevant feature sparse:
	// observed every Period timesteps (at least 2), carried forward by
	// the model, which reads its last observation.
	Period int `json:"period,omitempty"`
	// Peek (steps) makes the first relevant feature's read reach one step
	// ahead of each output (lag −1), in the targets and the black box.
	Peek bool `json:"peek,omitempty"`
}

// OutputsProblem is a problem of a world with several outputs.
type OutputsProblem struct {
	// Config is the configuration, defaults applied, and Seed the seed.
	Config OutputsConfig
	Seed   uint64
	// Data holds the data, the targets (M labels for classes, M × K
	// values otherwise), the task and Outputs.
	Data *tempora.Dataset
	// Model is the black box.
	Model *OutputsModel
	// Truth is the whole model's truth, one entry per feature: a feature
	// is relevant when some output reads it, its window is the hull of
	// those outputs' windows.
	Truth []FeatureTruth
	// Outputs is each output's truth.
	Outputs []OutputTruth
}

// OutputTruth is the truth of one output of a problem with several
// outputs.
type OutputTruth struct {
	// Name is the output's name.
	Name string
	// Features has one entry per feature: Relevant when the output's
	// loss depends on the feature, Window where (in absolute timesteps),
	// EffectSize the variance of its contribution to the output's true
	// score (regression) or 1 (classes), and the ordering flags for the
	// output's loss.
	Features []FeatureTruth
	// Lags holds each relevant feature's window in lag coordinates from
	// the output's anchor (tempora.Outputs.Lag; zero for an irrelevant
	// feature), nil for outputs without an anchor (classes).
	Lags []tempora.Window
}

// ReadsFuture reports whether the output's loss depends on feature j
// after the output's own step (a negative lag).
func (o *OutputTruth) ReadsFuture(j int) bool {
	return o.Lags != nil && o.Features[j].Relevant && o.Lags[j].Start < 0
}

// WindowLists returns, for every feature, the union of the outputs'
// windows of it as disjoint windows in time order (nil for a feature no
// output reads), adjacent windows merged.
func (p *OutputsProblem) WindowLists() [][]tempora.Window {
	return unionWindows(p.Outputs, len(p.Truth))
}

// unionWindows returns the per-feature union of the outputs' windows.
func unionWindows(outs []OutputTruth, d int) [][]tempora.Window {
	lists := make([][]tempora.Window, d)
	for j := range d {
		var ws []tempora.Window
		for _, o := range outs {
			if o.Features[j].Relevant {
				ws = append(ws, o.Features[j].Window)
			}
		}
		slices.SortFunc(ws, func(a, b tempora.Window) int { return a.Start - b.Start })
		for _, w := range ws {
			if n := len(lists[j]); n > 0 && w.Start <= lists[j][n-1].End+1 {
				lists[j][n-1].End = max(lists[j][n-1].End, w.End)
				continue
			}
			lists[j] = append(lists[j], w)
		}
	}
	return lists
}

// outputWorld is one kind of world: it checks a configuration (defaults
// applied) and draws the true units.
type outputWorld interface {
	validate(c OutputsConfig) error
	layout(c OutputsConfig, rng *rand.Rand) layout
}

// layout is what a world draws: the true units and, for classes, the
// tree.
type layout struct {
	units []Unit
	tree  [][2]int
}

// outputWorlds registers the worlds by kind (outputs_classes.go,
// outputs_horizons.go, outputs_steps.go).
var outputWorlds = map[tempora.OutputKind]outputWorld{
	tempora.Classes:  classesWorld{},
	tempora.Horizons: horizonsWorld{},
	tempora.Steps:    stepsWorld{},
}

// withDefaults returns c with its zero fields defaulted.
func (c OutputsConfig) withDefaults() OutputsConfig {
	if c.Instances == 0 {
		c.Instances = DefaultInstances
	}
	if c.Features == 0 {
		c.Features = DefaultFeatures
	}
	if c.Timesteps == 0 {
		c.Timesteps = DefaultTimesteps
	}
	switch c.Kind {
	case tempora.Classes:
		if c.Outputs == 0 {
			c.Outputs = DefaultClasses
		}
		if c.Relevant == 0 {
			c.Relevant = c.Outputs - 1
		}
	case tempora.Horizons, tempora.Steps:
		if c.Kind == tempora.Horizons && c.Outputs == 0 {
			c.Outputs = DefaultHorizons
		}
		if c.Relevant == 0 {
			c.Relevant = max(1, c.Features/2)
		}
		if c.Noise == 0 {
			c.Noise = DefaultOutputsNoise
		}
	}
	return c
}

// K returns the number of outputs of c (defaults applied).
func (c OutputsConfig) K() int {
	if c.Kind == tempora.Steps {
		return c.Timesteps
	}
	return c.Outputs
}

// validate checks a configuration whose defaults have been applied.
func (c OutputsConfig) validate() error {
	w, ok := outputWorlds[c.Kind]
	if !ok {
		return fmt.Errorf("synth: outputs: invalid output kind %d (want classes, horizons or steps)", int(c.Kind))
	}
	switch {
	case c.Instances < 2 || c.Features < 1:
		return fmt.Errorf("synth: outputs: %d instances and %d features, need at least 2 and 1", c.Instances, c.Features)
	case float64(c.Instances)*float64(c.Features)*float64(c.Timesteps) > maxValues || float64(c.Instances)*float64(c.K()) > maxValues:
		return fmt.Errorf("synth: outputs: %d×%d×%d data tensor with %d outputs is too large", c.Instances, c.Features, c.Timesteps, c.K())
	case c.Relevant < 1 || c.Relevant > c.Features:
		return fmt.Errorf("synth: outputs: %d relevant features of %d", c.Relevant, c.Features)
	case !finite(c.Noise) || c.Noise < 0 || !finite(c.NoiseScale) || c.NoiseScale < 0:
		return fmt.Errorf("synth: outputs: noise %v and noise scale %v, want finite values ≥ 0", c.Noise, c.NoiseScale)
	case c.Partial < 0 || c.Partial > c.Relevant:
		return fmt.Errorf("synth: outputs: %d partially read features of %d relevant", c.Partial, c.Relevant)
	case c.NullOutputs < 0 || c.NullOutputs >= max(c.K(), 1):
		return fmt.Errorf("synth: outputs: %d null outputs of %d (at least one output must read something)", c.NullOutputs, c.K())
	case c.Period < 0 || c.Period == 1 || c.Period > c.Timesteps:
		return fmt.Errorf("synth: outputs: period %d, want 0 (no sparse feature) or 2 to %d", c.Period, c.Timesteps)
	}
	return w.validate(c)
}

// only returns an error naming the fields of c set for another kind of
// world: those not in allowed.
func (c OutputsConfig) only(allowed ...string) error {
	set := map[string]bool{
		"partial": c.Partial != 0, "noise": c.Noise != 0, "null outputs": c.NullOutputs != 0,
		"period": c.Period != 0, "peek": c.Peek,
	}
	for _, name := range []string{"partial", "noise", "null outputs", "period", "peek"} {
		if set[name] && !slices.Contains(allowed, name) {
			return fmt.Errorf("synth: outputs: %s is not a parameter of %v worlds", name, c.Kind)
		}
	}
	return nil
}

// GenerateOutputs generates the world of cfg with the given seed (see
// the top of this file). The same (cfg, seed) always gives the same
// problem.
func GenerateOutputs(cfg OutputsConfig, seed uint64) (*OutputsProblem, error) {
	c := cfg.withDefaults()
	if err := c.validate(); err != nil {
		return nil, err
	}
	m, d, l, k := c.Instances, c.Features, c.Timesteps, c.K()
	lay := outputWorlds[c.Kind].layout(c, tempora.NewRand(seed, "synth", "outputs", c.Kind.String(), "layout"))
	var carried []int
	if c.Period > 0 {
		carried = []int{c.Relevant - 1}
	}
	// The null outputs' targets read nothing; the black box keeps their
	// reads, and gets the noise weights.
	spec := OutputsSpec{Kind: c.Kind, K: k, Features: d, Timesteps: l, Units: slices.Clone(lay.units), Tree: lay.tree, Carried: carried}
	for o := k - c.NullOutputs; o < k; o++ {
		spec.Units[o] = Unit{}
	}
	target, err := NewOutputsModel(spec)
	if err != nil {
		return nil, err
	}
	spec.Units = withNoiseWeights(lay.units, c.NoiseScale, d, l, tempora.NewRand(seed, "synth", "outputs", "noise weights"))
	model, err := NewOutputsModel(spec)
	if err != nil {
		return nil, err
	}
	x := tempora.NewTensor(m, d, l)
	rng := tempora.NewRand(seed, "synth", "outputs", "data")
	for i := range m {
		row := x.Instance(i)
		for t := range row {
			row[t] = rng.NormFloat64()
		}
		for _, j := range carried {
			phase := rng.IntN(c.Period)
			for t := range l {
				if (t-phase)%c.Period != 0 || t < phase {
					row[j*l+t] = math.NaN()
				}
			}
		}
	}
	y, err := outputTargets(c, target, x, tempora.NewRand(seed, "synth", "outputs", "targets"))
	if err != nil {
		return nil, err
	}
	names := make([]string, d)
	for j := range names {
		names[j] = strconv.Itoa(j)
	}
	data := &tempora.Dataset{X: x, Y: y, Task: taskOf(c.Kind), FeatureNames: names, Outputs: model.Outputs()}
	p := &OutputsProblem{Config: c, Seed: seed, Data: data, Model: model}
	p.Outputs = outputTruths(target, data.Outputs, c.Period)
	p.Truth = wholeTruth(p.Outputs, names, l)
	if _, err := data.Observe(2); err != nil {
		return nil, fmt.Errorf("synth: outputs: generated data refused: %w", err)
	}
	return p, nil
}

// withNoiseWeights returns units with N(0, scale²) added to the weight of
// every feature at every timestep (the units unchanged for scale 0).
func withNoiseWeights(units []Unit, scale float64, d, l int, rng *rand.Rand) []Unit {
	if scale == 0 {
		return units
	}
	out := make([]Unit, len(units))
	for u, unit := range units {
		out[u].Bias = unit.Bias
		for j := range d {
			w := make([]float64, l)
			for t := range w {
				w[t] = scale * rng.NormFloat64()
			}
			for _, r := range unit.Reads {
				if r.Feature == j {
					for k, v := range r.Weights {
						w[r.Window.Start+k] += v
					}
				}
			}
			out[u].Reads = append(out[u].Reads, Read{Feature: j, Window: tempora.Window{Start: 0, End: l - 1}, Weights: w})
		}
	}
	return out
}

// outputTargets returns the targets of x: the true scores plus noise, or
// labels drawn from the true class probabilities.
func outputTargets(c OutputsConfig, target *OutputsModel, x *tempora.Tensor, rng *rand.Rand) ([]float64, error) {
	k := c.K()
	p := make([]float64, x.M*k)
	if err := target.Predict(p, x); err != nil {
		return nil, err
	}
	if c.Kind != tempora.Classes {
		for i := range p {
			p[i] += c.Noise * rng.NormFloat64()
		}
		return p, nil
	}
	y := make([]float64, x.M)
	for i := range y {
		u := rng.Float64()
		y[i] = float64(k - 1)
		for class, q := range p[i*k : (i+1)*k] {
			if u -= q; u < 0 {
				y[i] = float64(class)
				break
			}
		}
	}
	return y, nil
}

// outputTruths returns every output's truth from the true units of
// target: the reads of the units its score depends on (its own unit, or
// the nodes on a class's path), a carried feature's window widened to
// the period ending at the read timestep.
func outputTruths(target *OutputsModel, o *tempora.Outputs, period int) []OutputTruth {
	s := &target.spec
	d, l := s.Features, s.Timesteps
	out := make([]OutputTruth, s.K)
	for k := range out {
		units := []int{k}
		if s.Kind == tempora.Classes {
			units = target.ClassPath(k)
		}
		ot := OutputTruth{Name: o.Name(k), Features: make([]FeatureTruth, d)}
		if s.Kind != tempora.Classes {
			ot.Lags = make([]tempora.Window, d)
		}
		for j := range d {
			ot.Features[j] = FeatureTruth{Index: j, Name: strconv.Itoa(j)}
		}
		for _, u := range units {
			for _, r := range s.Units[u].Reads {
				f := &ot.Features[r.Feature]
				f.Relevant, f.Window = true, r.Window
				carried := slices.Contains(s.Carried, r.Feature)
				if carried {
					f.Window.Start = max(0, r.Window.Start-period+1)
				}
				f.EffectSize = 1
				if s.Kind != tempora.Classes {
					f.EffectSize = 0
					for _, w := range r.Weights {
						f.EffectSize += w * w
					}
				}
				f.WindowOrderingImportant = !carried && f.Window.Len() > 1
				f.OrderingImportant = f.Window.Len() < l || f.WindowOrderingImportant
				if ot.Lags != nil {
					ot.Lags[r.Feature], _ = o.Lag(f.Window, k, l)
				}
			}
		}
		out[k] = ot
	}
	return out
}

// wholeTruth returns the whole model's truth: a feature is relevant when
// some output reads it, over the hull of their windows, with the mean of
// their effect sizes; its orderings matter (its reads have distinct
// weights over windows of several timesteps, or move with the carried
// observations).
func wholeTruth(outs []OutputTruth, names []string, l int) []FeatureTruth {
	truth := make([]FeatureTruth, len(names))
	for j, name := range names {
		f := FeatureTruth{Index: j, Name: name}
		n := 0
		for _, o := range outs {
			of := o.Features[j]
			if !of.Relevant {
				continue
			}
			if n == 0 {
				f.Window = of.Window
			}
			f.Window.Start, f.Window.End = min(f.Window.Start, of.Window.Start), max(f.Window.End, of.Window.End)
			f.EffectSize += of.EffectSize
			n++
		}
		if n > 0 {
			f.Relevant, f.OrderingImportant, f.WindowOrderingImportant = true, true, true
			f.EffectSize /= float64(n)
		} else {
			f.Window = tempora.Window{Start: 0, End: l - 1}
		}
		truth[j] = f
	}
	return truth
}

// signedWeights returns n weights ±U(1, 2) scaled by scale.
func signedWeights(rng *rand.Rand, n int, scale float64) []float64 {
	w := make([]float64, n)
	for k := range w {
		w[k] = scale * uniform(rng, 1, 2)
		if rng.IntN(2) == 0 {
			w[k] = -w[k]
		}
	}
	return w
}
