package synth

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/pool"
)

// Constants of the reference generator.
const (
	// varianceSamples sequences are drawn from a candidate feature to check
	// that its function varies.
	varianceSamples = 100
	// minVariance is the variance of the candidate's function at or below
	// which the candidate is discarded (the reference's NEAR_ZERO).
	minVariance = 1e-10
	// minSD is the standardisation SD below which 1 is used instead.
	minSD = 1e-10
	// maxAttempts bounds the candidates drawn for one feature; reaching it
	// means the generator is broken, not unlucky.
	maxAttempts = 1000
	// autoTarget is the R² (regression) or accuracy (classification) that
	// AutoNoise aims for.
	autoTarget = 0.9
)

// Problem is a synthetic temporal problem: data, a black-box model, and the
// ground truth of which features and timesteps the model uses.
type Problem struct {
	// Config is the configuration the problem was generated with, defaults
	// applied. After Head, Data holds fewer than Config.Instances instances.
	Config Config
	// Seed is the generation seed.
	Seed uint64
	// Data holds the instances, the ground-truth targets (F_0 for
	// regression, labels 1{F_0 > τ} for classification), the task and the
	// feature names "0" … "D−1".
	Data *tempora.Dataset
	// Model is the model to explain, with the problem's noise multiplier.
	Model *Model
	// Truth has one entry per feature, in index order.
	Truth []FeatureTruth
	// Generators has the random process of each feature, in index order.
	Generators []*Generator
}

// FeatureTruth is the ground truth about one feature of a problem.
type FeatureTruth struct {
	// Index and Name identify the feature.
	Index int
	Name  string
	// Relevant reports that the feature is a term of the noise-free model
	// F_0.
	Relevant bool
	// Window is the feature's window. Every feature has one (an irrelevant
	// feature's window shapes its data and its noise term); only a relevant
	// feature's window marks important timesteps (see Important).
	Window tempora.Window
	// EffectSize is 2·α²·Var(g) over the generated instances for a relevant
	// feature of a regression problem (≈ 2α², the expected importance of
	// the feature under the quadratic loss), 1 for a relevant feature of a
	// classification problem, and 0 for an irrelevant feature.
	EffectSize float64
	// OrderingImportant reports that permuting the whole sequence changes
	// the model: the feature is relevant and either its window is shorter
	// than the sequence or its aggregator is ordering sensitive.
	OrderingImportant bool
	// WindowOrderingImportant reports that permuting the window changes the
	// model: the feature is relevant and aggregated by a weighted sum.
	WindowOrderingImportant bool
}

// Important reports whether timestep t of the feature is important: the
// feature is relevant and t lies in its window.
func (f FeatureTruth) Important(t int) bool { return f.Relevant && f.Window.Contains(t) }

// Generate generates the problem cfg with the given seed. The same (cfg,
// seed) always gives the same problem, whatever the number of CPUs. A
// problem too large for the memory limit is refused before anything is
// allocated (CheckMemory).
//
// Each feature is drawn as in the reference generator: an aggregator
// uniformly from the four kinds; a type (binary, categorical, numeric with
// probabilities 0.25, 0.25, 0.5; under Max, categorical or numeric with 0.25,
// 0.75, and a categorical feature then has 4 or 5 states); then, from the
// feature's private stream, its window, nonlinearity, weights and process.
// A candidate whose function has variance ≤ 1e−10 over 100 sampled sequences
// is discarded and redrawn. The data of each feature comes from its private
// stream in instance order, so the first n instances do not depend on M.
//
// The model draws its relevant features and coefficients from a stream that
// depends only on the seed, so its structure does not depend on M; the
// standardisation statistics, the classification threshold τ and an
// automatic β are computed on the generated instances.
//
// Random streams (keys of tempora.NewRand): ("synth", "master") for the
// feature-level choices, ("synth", "feature", j, attempt) for candidate
// attempt of feature j, ("synth", "model") for the model.
func Generate(cfg Config, seed uint64) (*Problem, error) {
	cfg = cfg.withDefaults()
	if err := CheckMemory(cfg); err != nil {
		return nil, err
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	M, D, L := cfg.Instances, cfg.Features, cfg.Timesteps

	// Windows are drawn where every sequence exists (irregular.go).
	span := tempora.Window{Start: 0, End: L - 1}
	if cfg.Irregular != nil {
		span = cfg.Irregular.span(L)
	}
	master := tempora.NewRand(seed, "synth", "master")
	gens := make([]*Generator, D)
	funcs := make([]FeatureFunction, D)
	rngs := make([]*rand.Rand, D)
	for j := range D {
		ok := false
		for attempt := 0; attempt < maxAttempts && !ok; attempt++ {
			rng := tempora.NewRand(seed, "synth", "feature", strconv.Itoa(j), strconv.Itoa(attempt))
			g, f := drawFeature(master, rng, span, cfg.WindowIndependent, cfg.Aggregator)
			if ok = varies(g, &f, rng, L); ok {
				g.Attempt = attempt
				gens[j], funcs[j], rngs[j] = g, f, rng
			}
		}
		if !ok {
			return nil, fmt.Errorf("synth: feature %d: no candidate with non-zero variance in %d attempts", j, maxAttempts)
		}
	}

	x := tempora.NewTensor(M, D, L)
	parallel(D, func(j int) {
		for i := range M {
			gens[j].Sample(x.Series(i, j), rngs[j])
		}
	})
	if cfg.Irregular != nil {
		makeIrregular(cfg.Irregular, x, seed)
	}

	mr := tempora.NewRand(seed, "synth", "model")
	relevant := make([]bool, D)
	for k := range cfg.NumRelevant() {
		relevant[k] = true
	}
	mr.Shuffle(D, func(a, b int) { relevant[a], relevant[b] = relevant[b], relevant[a] })
	for j := range D {
		funcs[j].Coefficient = uniform(mr, -1, 1)
		funcs[j].Relevant = relevant[j]
	}

	// Standardisation statistics over the generated instances (population
	// SD, 1 when the SD vanishes).
	raw := make([]float64, M)
	for j := range D {
		f := &funcs[j]
		if cfg.Irregular != nil {
			standardiseObserved(f, x, j)
			continue
		}
		for i := range M {
			raw[i] = f.raw(x.Window(i, j, f.Window.Start, f.Window.End))
		}
		f.Mean, f.SD = meanSD(raw)
		if f.SD < minSD {
			f.SD = 1
		}
	}

	model, err := NewModel(cfg.Task, D, L, 0, 0, funcs)
	if err != nil {
		return nil, err // unreachable: the functions were built to fit
	}
	model.observed = cfg.Irregular != nil
	rel, irr := make([]float64, M), make([]float64, M)
	model.parts(rel, irr, x.Data)
	y := rel
	if cfg.Task == tempora.Classification {
		model.tau = median(rel)
		y = make([]float64, M)
		for i, f := range rel {
			y[i] = label(f, model.tau)
		}
	}
	model.beta = cfg.Noise.Beta
	if cfg.Noise.Auto {
		if cfg.Task == tempora.Regression {
			model.beta = autoBetaRegression(rel, irr)
		} else {
			model.beta = autoBetaClassification(rel, irr, y, model.tau)
		}
	}

	names := make([]string, D)
	truth := make([]FeatureTruth, D)
	g := make([]float64, M)
	for j := range D {
		names[j] = strconv.Itoa(j)
		f := &model.feats[j]
		t := FeatureTruth{Index: j, Name: names[j], Relevant: f.Relevant, Window: f.Window}
		if f.Relevant {
			if cfg.Task == tempora.Regression {
				model.FeatureValues(g, x, j)
				_, sd := meanSD(g)
				t.EffectSize = 2 * f.Coefficient * f.Coefficient * sd * sd
			} else {
				t.EffectSize = 1
			}
			t.WindowOrderingImportant = f.Aggregator.OrderingSensitive()
			t.OrderingImportant = t.WindowOrderingImportant || f.Window.Len() < L
			if cfg.Irregular != nil {
				// Exact with missing values: permuting the observed values
				// moves some into or out of the window (irregular.go).
				t.OrderingImportant = t.WindowOrderingImportant || observedOutside(x, j, f.Window)
			}
		}
		truth[j] = t
	}
	return &Problem{
		Config:     cfg,
		Seed:       seed,
		Data:       &tempora.Dataset{X: x, Y: y, Task: cfg.Task, FeatureNames: names, Alignment: alignment(cfg)},
		Model:      model,
		Truth:      truth,
		Generators: gens,
	}, nil
}

// drawFeature draws a candidate feature: the feature-level choices from the
// master stream, then the window, the function and the process from the
// candidate's private stream rng.
// The window lies inside span (the whole sequence for a complete world).
func drawFeature(master, rng *rand.Rand, span tempora.Window, independent bool, fixed *Aggregator) (*Generator, FeatureFunction) {
	agg := Aggregator(master.IntN(4))
	if fixed != nil {
		agg = *fixed
	}
	typ := drawType(master, agg)
	states := 0
	if agg == Max && typ == Categorical {
		states = 4 + master.IntN(2)
	}
	w := windowIn(rng, span)
	f := FeatureFunction{Window: w, Aggregator: agg, Nonlinearity: Nonlinearity(rng.IntN(3))}
	if agg.OrderingSensitive() {
		f.Weights = linspace12(w.Len())
		if agg == RandomWeightedSum {
			rng.Shuffle(len(f.Weights), func(a, b int) { f.Weights[a], f.Weights[b] = f.Weights[b], f.Weights[a] })
		}
	}
	return newGenerator(rng, typ, states, w, independent), f
}

// drawType draws a feature type: binary, categorical or numeric with
// probabilities 0.25, 0.25, 0.5, or, under Max (which would saturate on
// binary data), categorical or numeric with probabilities 0.25, 0.75.
func drawType(master *rand.Rand, agg Aggregator) FeatureType {
	u := master.Float64()
	var typ FeatureType
	switch {
	case u < 0.25:
		typ = Binary
	case u < 0.5:
		typ = Categorical
	default:
		typ = Numeric
	}
	if agg == Max {
		typ = Numeric
		if master.Float64() < 0.25 {
			typ = Categorical
		}
	}
	return typ
}

// varies reports whether f applied to varianceSamples sequences drawn from g
// has a variance above minVariance.
func varies(g *Generator, f *FeatureFunction, rng *rand.Rand, l int) bool {
	seq := make([]float64, l)
	v := make([]float64, varianceSamples)
	for k := range v {
		g.Sample(seq, rng)
		v[k] = f.raw(seq[f.Window.Start : f.Window.End+1])
	}
	_, sd := meanSD(v)
	return sd*sd > minVariance
}

// meanSD returns the mean and the population standard deviation of v.
func meanSD(v []float64) (mean, sd float64) {
	for _, u := range v {
		mean += u
	}
	mean /= float64(len(v))
	ss := 0.0
	for _, u := range v {
		ss += (u - mean) * (u - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)))
}

// median returns the median of v (the mean of the two middle values for an
// even length).
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// autoBetaRegression returns β = sqrt(0.1·SST/S1), where SST is the total
// sum of squares of the targets rel = F_0 and S1 = Σ irr² the residual sum
// of squares at β = 1. The residual sum of squares at β is β²·S1, so R² is
// exactly 0.9. It returns 0 when there is no irrelevant signal (S1 = 0).
func autoBetaRegression(rel, irr []float64) float64 {
	mean, _ := meanSD(rel)
	sst, s1 := 0.0, 0.0
	for _, v := range rel {
		sst += (v - mean) * (v - mean)
	}
	for _, v := range irr {
		s1 += v * v
	}
	if s1 == 0 {
		return 0
	}
	return math.Sqrt(sst * (1 - autoTarget) / s1)
}

// autoBetaClassification returns the β on the grid 0.01, 0.02, …, 0.99 for
// which the accuracy of the decision F_β > τ against the labels y is closest
// to 0.9, the smallest such β on ties. Distances are compared exactly as
// |10·correct − 9·M|.
func autoBetaClassification(rel, irr, y []float64, tau float64) float64 {
	best, bestDist := 0, -1
	for k := 1; k <= 99; k++ {
		beta := float64(k) / 100
		correct := 0
		for i := range rel {
			if label(rel[i]+beta*irr[i], tau) == y[i] {
				correct++
			}
		}
		d := 10*correct - 9*len(rel)
		if d < 0 {
			d = -d
		}
		if bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	return float64(best) / 100
}

// parallel calls f(0), …, f(n−1) on up to GOMAXPROCS goroutines (the
// project's one worker pool).
func parallel(n int, f func(int)) {
	_ = pool.Run(context.Background(), 0, n, func(_, j int) error {
		f(j)
		return nil
	})
}

// Head returns the problem restricted to its first n instances, with the
// same model, truth and generators (the model keeps the standardisation
// statistics, threshold and β calibrated on all generated instances). The
// data is copied.
func (p *Problem) Head(n int) (*Problem, error) {
	if n < 1 || n > p.Data.X.M {
		return nil, fmt.Errorf("synth: head of %d instances of a problem with %d", n, p.Data.X.M)
	}
	q := *p
	q.Data = &tempora.Dataset{
		X:            p.Data.X.Rows(0, n).Clone(),
		Y:            slices.Clone(p.Data.Y[:n]),
		Task:         p.Data.Task,
		FeatureNames: slices.Clone(p.Data.FeatureNames),
		Alignment:    p.Data.Alignment,
	}
	q.Truth = slices.Clone(p.Truth)
	q.Generators = slices.Clone(p.Generators)
	return &q, nil
}

// alignment returns the alignment of cfg's data.
func alignment(cfg Config) tempora.Alignment {
	if cfg.Irregular != nil {
		return cfg.Irregular.Alignment
	}
	return tempora.AlignStart
}
