package experiments

import (
	"context"
	"fmt"
	"strconv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/metrics"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/record/report"
	"github.com/tempora-dev/tempora/synth"
)

// The outputs suite (issue 30; docs/decisions.md, decision 24): models
// with several outputs, from synth.GenerateOutputs's worlds, where each
// output's truth is exact: which features its loss depends on, over which
// window, in absolute time and in lags from the output's anchor. It asks
// whether TIME's output hierarchy finds, for every output, the features
// it reads (and no other), their windows in both coordinates, and, for a
// sequence-to-sequence model, whether an output reads the future. A
// setting's parameter is
//
//	world=classes|horizons|steps|peek
//
// classes: a nested dichotomy of 4 classes whose 3 split nodes each read
// one feature (class c reads the features of its path), 1000×10×20;
// horizons: 4 forecast horizons, each reading 4 relevant features over
// windows of its own (2 of the features read by some horizons only),
// 1000×8×20; steps: a causal sequence-to-sequence model, one output per
// timestep, each reading 3 relevant features over fixed lag windows, one
// of them observed every 3 steps and carried forward by the model,
// 1000×6×16; peek: the same model also reading one feature one step
// ahead (in the targets too, so its loss depends on the future). Records
// carry the per-output truth (record.Truth's Outputs) and the per-output
// metrics (metrics.OutputMetrics); the whole model's metrics are scored
// against the union of the outputs' windows (WindowLists). The null
// calibration of every level of the hierarchy and the cost of K outputs
// are Go tests (TestOutputsNull, TestOutputsCost).

// outputsWorlds are the suite's worlds by their value of world=.
var outputsWorlds = []struct {
	name string
	cfg  synth.OutputsConfig
}{
	{"classes", synth.OutputsConfig{Kind: tempora.Classes, Features: 10, Timesteps: 20, Outputs: 4}},
	{"horizons", synth.OutputsConfig{Kind: tempora.Horizons, Features: 8, Timesteps: 20, Outputs: 4, Relevant: 4, Partial: 2}},
	{"steps", synth.OutputsConfig{Kind: tempora.Steps, Features: 6, Timesteps: 16, Relevant: 3, Period: 3}},
	{"peek", synth.OutputsConfig{Kind: tempora.Steps, Features: 6, Timesteps: 16, Relevant: 3, Period: 3, Peek: true}},
}

// outputsInstances is the suite's number of instances at both scales.
const outputsInstances = 1000

func outputsWorldNames() []string {
	var names []string
	for _, w := range outputsWorlds {
		names = append(names, w.name)
	}
	return names
}

// outputsAxes are the suite's axes: the world, and the SD of the black
// box's noise weights (synth.OutputsConfig.NoiseScale), which the targets
// lack.
var outputsAxes = []axis{
	worldAxis("world", outputsWorldNames(), func(w *outputsWorld, v string) error {
		for _, ow := range outputsWorlds {
			if ow.name == v {
				w.Config = ow.cfg
				return nil
			}
		}
		return fmt.Errorf("unknown world %q", v)
	}),
	worldAxis("noise-weights", []string{"0", "0.05"}, func(w *outputsWorld, v string) (err error) {
		w.Config.NoiseScale, err = strconv.ParseFloat(v, 64)
		return err
	}),
}

var outputsSuite = &Suite{
	Name: "outputs", Doc: "models with several outputs: TIME per output (features, windows in absolute time and in lags, the causal check) on 4 classes (a nested dichotomy, 1000×10×20), 4 forecast horizons (1000×8×20) and a causal sequence-to-sequence model (1000×6×16, a sparse feature carried forward) with and without a one-step peek ahead, each black box with and without noise weights",
	Models: 20, QuickModels: 3, Methods: []string{"TIME"},
	// Quick: 35 s of CPU measured for the committed report
	// (results/reference/outputs/quick; 1 min 36 s of wall time on the
	// loaded two-core machine), most of it the steps and peek worlds
	// with noise weights; paper scale has about seven times the models.
	Time: "about 5 min (estimated)", QuickTime: "about 40 s",
	Report: outputsReport(),
	settings: func(quick bool, _ string) ([]Setting, error) {
		return sweep(Setting{Problem: ProblemSpec{World: outputsWorld{}, Instances: outputsInstances}, Quick: quick}, outputsAxes)
	},
}

// outputsReport draws TIME's metrics per world, with and without noise
// weights: the whole model's and each output's detection and windows in
// every world, then the lags and the causal check where they apply.
func outputsReport() report.Suite {
	panel := func(w string) report.Panel {
		return report.Panel{Title: "world " + w, Where: []record.Param{{Key: "world", Value: w}}}
	}
	noise := func(v string) []record.Param { return []record.Param{{Key: "noise-weights", Value: v}} }
	time := []report.Line{
		{Label: "TIME, no noise weights", Method: "TIME", Where: noise("0")},
		{Label: "TIME, noise weights 0.05", Method: "TIME", Where: noise("0.05")},
	}
	return report.Suite{Bars: []report.Bars{
		{
			Name: "outputs-features", Heading: "outputs: TIME on the whole model and per output", Alt: "outputs-features",
			Title:  "outputs: TIME's features and windows, whole model and per output",
			Panels: []report.Panel{panel("classes"), panel("horizons"), panel("steps"), panel("peek")},
			Bars:   time,
			Metrics: []report.Metric{
				{Name: "feature-power", Label: "feature power"}, {Name: "feature-fdr", Label: "feature FDR"},
				{Name: metrics.OutputFeaturePower, Label: "output power"}, {Name: metrics.OutputFeatureFDR, Label: "output FDR"},
				{Name: metrics.OutputExactWindow, Label: "exact windows"},
				{Name: metrics.OutputCellAUROC, Label: "output AUROC"}, {Name: metrics.OutputCellAUPRC, Label: "output AUPRC"},
			},
		},
		{
			Name: "outputs-causal", Heading: "outputs: lags and the causal check of sequence-to-sequence models", Alt: "outputs-causal",
			Title:  "outputs: exact lag windows and the causal check (steps: causal; peek: reads one step ahead)",
			Panels: []report.Panel{panel("steps"), panel("peek")},
			Bars:   time,
			Metrics: []report.Metric{
				{Name: metrics.OutputExactLag, Label: "exact lags"},
				{Name: metrics.FuturePower, Label: "reads-future power"}, {Name: metrics.FutureFDR, Label: "reads-future FDR"},
				{Name: metrics.CausalAccuracy, Label: "causal check right"},
			},
		},
	}}
}

// outputsWorld is synth.GenerateOutputs's world with configuration
// Config (the spec's Instances; its other fields are ignored).
type outputsWorld struct {
	Config synth.OutputsConfig
}

func (w outputsWorld) Name() string { return "outputs-" + w.Config.Kind.String() }

// Generate draws the problem of spec; its truth is the whole model's,
// with the outputs' windows as window lists, and every output's.
func (w outputsWorld) Generate(_ context.Context, spec ProblemSpec, seed uint64) (*Problem, error) {
	cfg := w.Config
	cfg.Instances = spec.Instances
	p, err := synth.GenerateOutputs(cfg, seed)
	if err != nil {
		return nil, err
	}
	return &Problem{Data: p.Data, Model: p.Model, Truth: outputsTruth(p)}, nil
}

// outputsTruth returns the record truth of a problem with outputs.
func outputsTruth(p *synth.OutputsProblem) *record.Truth {
	t := truthOf(p.Truth)
	t.WindowLists = p.WindowLists()
	for _, o := range p.Outputs {
		ot := record.OutputTruth{Lags: o.Lags}
		for _, f := range o.Features {
			ot.Relevant = append(ot.Relevant, f.Relevant)
			ot.Windows = append(ot.Windows, f.Window)
		}
		t.Outputs = append(t.Outputs, ot)
	}
	return t
}
