package synth

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tempora-dev/tempora"
)

// The correlated world: two features that move together, for conditional
// permutation tests (docs/decisions.md, decision 15).
//
// Feature A is a stationary Gaussian AR(1) process with lag-one
// autocorrelation CorrelatedPhi and unit variance. Feature B follows A:
//
//	B[t] = ρ·h(A[t]) + √(1−ρ²)·η[t],
//
// η an independent AR(1) process like A's, h(a) = a (linear) or, with
// Nonlinear, h(a) = (a + a² − 1)/√3 (unit variance, a linear part and a
// quadratic one, so that a linear model of B given A is misspecified). So
// B has unit variance and correlation ρ with A at every timestep (ρ/√3 when
// nonlinear). The Others remaining features are independent AR(1)
// processes. Feature names are "A", "B", "C1", "C2", ….
//
// The target is regression: y = S(A) + Noise·ε, S(x) the mean of x over the
// window W = [⌊L/4⌋, ⌈3L/4⌉ − 1] and ε standard normal. So, given A, no
// feature carries information about y: B is informative only through A.
//
// The black box is S(A) (reads A only) or, with Spread, ½·S(A) + ½·S(B),
// a model that spreads its weight over the two features as models trained
// on strongly correlated inputs do (ridge regression, ensembles of trees).
//
// The truth is recorded in two senses. ModelTruth (model-centric): the
// features the black box reads, over W: A, and B when Spread. DataTruth
// (data-centric): the features that carry information about the target
// given all the others: A only, never B.

// CorrelatedPhi is the lag-one autocorrelation of every feature's AR(1)
// process in the correlated world.
const CorrelatedPhi = 0.5

// CorrelatedConfig configures the correlated world. Zero fields take the
// defaults named.
type CorrelatedConfig struct {
	// Instances M (default 500) and Timesteps L (default 10, at least 4).
	Instances, Timesteps int
	// Others is the number of independent features besides A and B
	// (default 3; -1 for none).
	Others int
	// Rho is the correlation ρ of B with A, in [0, 1).
	Rho float64
	// Nonlinear makes B follow a nonlinear function of A.
	Nonlinear bool
	// Spread selects the black box ½·S(A) + ½·S(B) instead of S(A).
	Spread bool
	// Noise is the standard deviation of the target's noise (default 0.1;
	// -1 for none).
	Noise float64
}

// CorrelatedProblem is one draw of the correlated world.
type CorrelatedProblem struct {
	// Config is the configuration with its defaults applied.
	Config CorrelatedConfig
	Seed   uint64
	// Data holds the instances, the targets y and the feature names.
	Data *tempora.Dataset
	// Model is the black box.
	Model tempora.Model
	// ModelTruth and DataTruth are the truths in the two senses, one
	// entry per feature in index order.
	ModelTruth, DataTruth []FeatureTruth
}

// Window returns the window W of the target for L timesteps.
func correlatedWindow(l int) tempora.Window {
	return tempora.Window{Start: l / 4, End: (3*l+3)/4 - 1}
}

func (c CorrelatedConfig) withDefaults() (CorrelatedConfig, error) {
	if c.Instances == 0 {
		c.Instances = 500
	}
	if c.Timesteps == 0 {
		c.Timesteps = 10
	}
	switch {
	case c.Others == 0:
		c.Others = 3
	case c.Others == -1:
		c.Others = 0
	}
	switch {
	case c.Noise == 0:
		c.Noise = 0.1
	case c.Noise == -1:
		c.Noise = 0
	}
	switch {
	case c.Instances < 2:
		return c, fmt.Errorf("synth: correlated world needs at least 2 instances, got %d", c.Instances)
	case c.Timesteps < 4:
		return c, fmt.Errorf("synth: correlated world needs at least 4 timesteps, got %d", c.Timesteps)
	case c.Others < 0:
		return c, fmt.Errorf("synth: correlated world has %d other features (-1 for none)", c.Others)
	case !(c.Rho >= 0 && c.Rho < 1):
		return c, fmt.Errorf("synth: correlation rho %v outside [0, 1)", c.Rho)
	case !(c.Noise >= 0) || math.IsInf(c.Noise, 0):
		return c, fmt.Errorf("synth: target noise %v is not a non-negative number (-1 for none)", c.Noise)
	}
	if int64(c.Instances)*int64(2+c.Others)*int64(c.Timesteps) > 1<<28 {
		return c, fmt.Errorf("synth: correlated world of %d×%d×%d values is too large", c.Instances, 2+c.Others, c.Timesteps)
	}
	return c, nil
}

// Correlated draws the correlated world of cfg with the given seed. The
// same configuration and seed give the same problem.
func Correlated(cfg CorrelatedConfig, seed uint64) (*CorrelatedProblem, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m, l, d := cfg.Instances, cfg.Timesteps, 2+cfg.Others
	x := tempora.NewTensor(m, d, l)
	rng := tempora.NewRand(seed, "synth/correlated")
	ar := func(dst []float64) {
		dst[0] = rng.NormFloat64()
		s := math.Sqrt(1 - CorrelatedPhi*CorrelatedPhi)
		for t := 1; t < len(dst); t++ {
			dst[t] = CorrelatedPhi*dst[t-1] + s*rng.NormFloat64()
		}
	}
	eta := make([]float64, l)
	for i := range m {
		a := x.Data[x.Index(i, 0, 0) : x.Index(i, 0, l-1)+1]
		b := x.Data[x.Index(i, 1, 0) : x.Index(i, 1, l-1)+1]
		ar(a)
		ar(eta)
		for t := range b {
			h := a[t]
			if cfg.Nonlinear {
				h = (a[t] + a[t]*a[t] - 1) / math.Sqrt(3)
			}
			b[t] = cfg.Rho*h + math.Sqrt(1-cfg.Rho*cfg.Rho)*eta[t]
		}
		for j := 2; j < d; j++ {
			ar(x.Data[x.Index(i, j, 0) : x.Index(i, j, l-1)+1])
		}
	}
	w := correlatedWindow(l)
	names := []string{"A", "B"}
	for k := 1; k <= cfg.Others; k++ {
		names = append(names, "C"+strconv.Itoa(k))
	}
	y := make([]float64, m)
	for i := range y {
		y[i] = windowMean(x, i, 0, w) + cfg.Noise*rng.NormFloat64()
	}
	model, err := newCorrelatedModel(d, l, w, cfg.Spread)
	if err != nil {
		return nil, err
	}
	p := &CorrelatedProblem{
		Config: cfg, Seed: seed,
		Data:  &tempora.Dataset{X: x, Y: y, Task: tempora.Regression, FeatureNames: names},
		Model: model,
	}
	// Effect sizes: 2·c²·Var(S(x_j)) for a term c·S(x_j) of the black box
	// (model-centric) or of the target (data-centric, A's only), the
	// expected importance of the term under the quadratic loss.
	effect := func(j int, c float64) float64 {
		v := make([]float64, m)
		for i := range v {
			v[i] = windowMean(x, i, j, w)
		}
		_, sd := meanSD(v)
		return 2 * c * c * sd * sd
	}
	for j := range d {
		mt := FeatureTruth{Index: j, Name: names[j], Window: w}
		dt := mt
		switch {
		case j == 0 && cfg.Spread, j == 1 && cfg.Spread:
			mt.Relevant, mt.EffectSize = true, effect(j, 0.5)
		case j == 0:
			mt.Relevant, mt.EffectSize = true, effect(j, 1)
		}
		if j == 0 {
			dt.Relevant, dt.EffectSize = true, effect(j, 1)
		}
		// The window is shorter than the sequence, so moving it changes
		// the output; within the window the mean ignores the order.
		mt.OrderingImportant = mt.Relevant && w.Len() < l
		dt.OrderingImportant = dt.Relevant && w.Len() < l
		p.ModelTruth = append(p.ModelTruth, mt)
		p.DataTruth = append(p.DataTruth, dt)
	}
	return p, nil
}

// windowMean returns the mean of feature j of instance i over w.
func windowMean(x *tempora.Tensor, i, j int, w tempora.Window) float64 {
	var s float64
	for _, v := range x.Window(i, j, w.Start, w.End) {
		s += v
	}
	return s / float64(w.Len())
}

// correlatedModel is the black box of the correlated world, an additive
// Model (newCorrelatedModel) of which only Predict is exposed: the Model's
// per-instance truth (Model.InstanceTruth) is model-centric, and the
// world records its truth in two senses.
type correlatedModel struct{ m *Model }

// Predict writes S(A), or ½·S(A) + ½·S(B) when spread.
func (c correlatedModel) Predict(dst []float64, x *tempora.Tensor) error { return c.m.Predict(dst, x) }

// newCorrelatedModel returns the black box of the correlated world with d
// features over l timesteps: the regression Model with the terms 1·S(A),
// or ½·S(A) + ½·S(B) when spread, S the Average over w (standardised with
// mean 0 and SD 1, so unchanged), and every other feature's term zero.
func newCorrelatedModel(d, l int, w tempora.Window, spread bool) (correlatedModel, error) {
	feats := make([]FeatureFunction, d)
	for j := range feats {
		feats[j] = FeatureFunction{Window: w, Aggregator: Average, SD: 1}
	}
	feats[0].Coefficient, feats[0].Relevant = 1, true
	if spread {
		feats[0].Coefficient = 0.5
		feats[1].Coefficient, feats[1].Relevant = 0.5, true
	}
	m, err := NewModel(tempora.Regression, d, l, 0, 0, feats)
	return correlatedModel{m}, err
}
