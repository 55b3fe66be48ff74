package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/synth"
)

const synthHelp = `
Synth generates a synthetic temporal problem, as in the TIME paper: Markov-chain
feature sequences, an additive windowed model of which only some features are
relevant, the targets, and the ground truth (relevant features, their windows,
whether their ordering matters). It saves them into the directory -out:

	data.npy      instances × features × timesteps data tensor
	targets.npy   targets (labels 0/1 for classification)
	model.json    the model
	truth.json    the ground truth
	problem.json  the configuration, seed and feature generators

The same flags and seed always give byte-identical files. The defaults are the
sizes of the paper's Table 1 (1000 × 10 × 20, half of the features relevant).
-relevant 0 gives one relevant feature, the least a problem has.

Any of -missing-rate, -length-spread, -alignment and -missing-mechanism makes
an irregular world: sequences of lengths uniform between timesteps/spread and
timesteps, padded with NaN at the end (alignment start) or the start
(alignment end), cells missing (NaN) at the given rate, and a model that
aggregates over observed values only. Windows lie where every sequence exists.

-outputs makes a world whose model has several outputs per instance: classes
(a nested dichotomy of logistic splits, each reading one feature over a
window), horizons (each reading features at its own lags) or steps (one
output per timestep, causal unless -peek; -period makes a sparse feature the
model carries forward), with each output's ground truth in truth.json.`

func (prog *program) synth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("synth", synthHelp, stdout)
	out := fs.String("out", "", "write the problem into `DIR` (required)")
	instances := fs.Int("instances", synth.DefaultInstances, "number of instances M (at least 2)")
	features := fs.Int("features", synth.DefaultFeatures, "number of features D (at least 1)")
	timesteps := fs.Int("timesteps", synth.DefaultTimesteps, "number of timesteps L (at least 2)")
	relevant := fs.Float64("relevant", synth.DefaultFractionRelevant, "fraction of relevant features, in [0, 1]")
	task := fs.String("task", "regression", "model `task`: regression or classification")
	noise := fs.String("noise", "0", "noise multiplier β of the irrelevant features: a number ≥ 0, or auto (R² 0.9 for regression, accuracy 0.9 for classification, as in the paper)")
	seed := fs.Uint64("seed", 0, "generation seed")
	windowIndependent := fs.Bool("window-independent", false, "draw each feature's sequence from one process that ignores its window")
	aggregator := fs.String("aggregator", "", "every feature's `aggregator` (max, average, monotonic_weighted_sum or random_weighted_sum) in place of one drawn per feature; max gives per-instance truths (argmax timesteps) that differ from the windows")
	missingRate := fs.Float64("missing-rate", 0, "irregular world: expected fraction of missing (NaN) cells inside the sequences, in [0, 0.95]")
	lengthSpread := fs.Float64("length-spread", 1, "irregular world: sequence lengths uniform between ⌈timesteps/`spread`⌉ and timesteps (1: all equal)")
	alignment := fs.String("alignment", "start", "irregular world: the time axis sequences share, start (padding at the end) or end (padding at the start)")
	mechanism := fs.String("missing-mechanism", "mcar", "irregular world: how cells go missing, mcar (completely at random) or mnar (more often for high values)")
	var of synthOutputsFlags
	defineSynthOutputsFlags(fs, &of)
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() > 0 {
		return usageErrorf("synth: unexpected argument %q (see tempora synth -h)", fs.Arg(0))
	}
	cfg, err := synthConfig(*out, *instances, *features, *timesteps, *relevant, *task, *noise, *windowIndependent)
	var ocfg *synth.OutputsConfig
	if err == nil {
		ocfg, err = of.config(fs, *instances, *features, *timesteps)
	}
	if err == nil && ocfg != nil {
		if prog.parseOnly {
			return nil
		}
		if err := synth.CheckMemory(cfg); err != nil {
			return err
		}
		return synthOutputs(ctx, ocfg, *seed, *out, stdout, stderr)
	}
	if err == nil {
		cfg.Irregular, err = irregularFlags(fs, *missingRate, *lengthSpread, *alignment, *mechanism)
	}
	if err == nil && *aggregator != "" {
		a := new(synth.Aggregator)
		if err = a.UnmarshalText([]byte(*aggregator)); err != nil {
			err = usageErrorf("synth: -aggregator %q: want max, average, monotonic_weighted_sum or random_weighted_sum", *aggregator)
		}
		cfg.Aggregator = a
	}
	if err != nil {
		return err
	}
	if prog.parseOnly {
		return nil
	}
	if err := synth.CheckMemory(cfg); err != nil {
		return err
	}
	start := time.Now()
	fmt.Fprintf(stderr, "tempora: generating %d × %d × %d %v problem (seed %d)\n", cfg.Instances, cfg.Features, cfg.Timesteps, cfg.Task, *seed)
	p, err := synth.Generate(cfg, *seed)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := stageDir(*out, func(dir string) error { return p.SaveContext(ctx, dir) }); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tempora: generated in %v\n", time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "wrote %s: %d instances × %d features × %d timesteps, %v, %d relevant features (%v), noise β = %.4g\n",
		*out, p.Data.X.M, p.Data.X.D, p.Data.X.L, p.Config.Task, len(p.Model.Relevant()), p.Model.Relevant(), p.Model.Beta())
	if ir := p.Config.Irregular; ir != nil {
		fmt.Fprintf(stdout, "irregular: alignment %v, lengths %d to %d, missing rate %v (%v)\n", ir.Alignment, ir.MinLength(cfg.Timesteps), cfg.Timesteps, ir.MissingRate, ir.Mechanism)
	}
	return nil
}

// synthConfig validates the synth flags and returns the configuration.
// The CLI rejects values that the library would replace by a default
// (zero sizes), so that what is asked for is what is generated.
func synthConfig(out string, m, d, l int, frac float64, task, noise string, windowIndependent bool) (synth.Config, error) {
	var cfg synth.Config
	switch {
	case out == "":
		return cfg, usageErrorf("synth: missing -out DIR (see tempora synth -h)")
	case m < 2:
		return cfg, usageErrorf("synth: -instances %d: need at least 2 instances", m)
	case d < 1:
		return cfg, usageErrorf("synth: -features %d: need at least 1 feature", d)
	case l < 2:
		return cfg, usageErrorf("synth: -timesteps %d: need at least 2 timesteps", l)
	case math.IsNaN(frac) || frac < 0 || frac > 1:
		return cfg, usageErrorf("synth: -relevant %v: the fraction of relevant features must be in [0, 1]", frac)
	}
	tk, err := tempora.ParseTask(task)
	if err != nil {
		return cfg, usageErrorf("synth: -task %q: want regression or classification", task)
	}
	nz, err := synth.ParseNoise(noise)
	if err != nil {
		return cfg, usageErrorf("synth: -noise %q: want auto or a number ≥ 0", noise)
	}
	if frac == 0 {
		// Zero means the default fraction in synth.Config; the smallest
		// positive fraction gives the one relevant feature asked for.
		frac = math.SmallestNonzeroFloat64
	}
	return synth.Config{
		Instances: m, Features: d, Timesteps: l, FractionRelevant: frac,
		Task: tk, Noise: nz, WindowIndependent: windowIndependent,
	}, nil
}

// irregularFlags returns the irregular configuration of the synth flags,
// nil when none of them is given.
func irregularFlags(fs *flag.FlagSet, rate, spread float64, alignment, mechanism string) (*synth.Irregular, error) {
	set := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "missing-rate", "length-spread", "alignment", "missing-mechanism":
			set = true
		}
	})
	if !set {
		return nil, nil
	}
	a, err := tempora.ParseAlignment(alignment)
	if err != nil {
		return nil, usageErrorf("synth: -alignment %q: want start or end", alignment)
	}
	m, err := synth.ParseMechanism(mechanism)
	if err != nil {
		return nil, usageErrorf("synth: -missing-mechanism %q: want mcar or mnar", mechanism)
	}
	switch {
	case !(rate >= 0 && rate <= synth.MaxMissingRate):
		return nil, usageErrorf("synth: -missing-rate %v: want a fraction in [0, %v]", rate, synth.MaxMissingRate)
	case !(spread >= 1) || math.IsInf(spread, 0):
		return nil, usageErrorf("synth: -length-spread %v: want a finite number ≥ 1", spread)
	}
	return &synth.Irregular{LengthSpread: spread, Alignment: a, MissingRate: rate, Mechanism: m}, nil
}
