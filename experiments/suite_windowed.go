package experiments

import (
	"context"
	"strconv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/synth"
)

// The windows suite (issue 23; docs/decisions.md, decision 18): the
// windows world of synth.GenerateWindows, where each relevant feature is
// read over 1 to 3 disjoint windows with weights of either sign and small
// noise weights elsewhere, swept over the number of true windows and the
// noise weights' scale, with TIME's single window (the paper's) and its
// several windows. A setting's parameters are
//
//	true-windows=1|2|3 / noise-weights=0|0.05 / time-windows=1|3
//
// time-windows is TIME's parameter "windows" (the other methods ignore
// it, so their records under time-windows=3 repeat those under 1). The
// settings of one (true-windows, noise-weights) analyse the same
// problems. Records carry the true windows as lists (record.Truth's
// WindowLists) and, for methods with windows, the exact-window rate
// (metrics.ExactWindows). A finer sweep of TIME alone over the noise
// weights' scale, with the stretch rate, is TestWindowsSweep
// (results/reference/windows/sweep).

// windowsMethods are the suite's default methods: TIME and the cheap
// baselines PERM (TIME's machinery without windows) and OCC (occlusion).
var windowsMethods = []string{"TIME", "PERM", "OCC"}

// windowsProblem is the suite's problem shape: 600 regression instances of
// 4 features (2 relevant) over 24 timesteps, target noise SD 1 (the shape
// of TestWindowsWorld).
var windowsProblem = ProblemSpec{World: windowsWorld{}, Instances: 600, Features: 4, Timesteps: 24, FractionRelevant: 0.5, Task: tempora.Regression, Noise: "1"}

var (
	windowsTrue   = []string{"1", "2", "3"}
	windowsScales = []string{"0", "0.05"}
	windowsTIME   = []string{"1", "3"}
)

// windowsAxes are the suite's axes: the world's true windows and noise
// weights, and TIME's parameter windows.
var windowsAxes = []axis{
	worldAxis("true-windows", windowsTrue, func(w *windowsWorld, v string) (err error) { w.Windows, err = strconv.Atoi(v); return err }),
	worldAxis("noise-weights", windowsScales, func(w *windowsWorld, v string) (err error) {
		w.NoiseScale, err = strconv.ParseFloat(v, 64)
		return err
	}),
	methodAxis("time-windows", "windows", windowsTIME...),
}

var windowsSuite = &Suite{
	Name: "windows", Doc: "several windows per feature: TIME with one window and with up to three on features read over 1–3 disjoint windows (600×4×24, 2 relevant, regression), with and without small noise weights",
	Models: 20, QuickModels: 5, Methods: windowsMethods,
	// Quick: 59 s of CPU measured for the committed report
	// (results/reference/windows/quick; PERM takes most of it), so about
	// 30 to 45 s on two idle cores; paper scale is four
	// times the models.
	Time: "about 4 min (estimated)", QuickTime: "about 45 s",
	settings: func(quick bool, _ string) ([]Setting, error) {
		return sweep(Setting{Problem: windowsProblem, Quick: quick}, windowsAxes)
	},
}

// windowsWorld is synth.GenerateWindows's world, with Windows true windows
// per relevant feature and noise weights of scale NoiseScale (the spec's
// Instances, Features, Timesteps, FractionRelevant and a numeric Noise as
// for synth.Generate's world).
type windowsWorld struct {
	Windows    int
	NoiseScale float64
}

func (windowsWorld) Name() string { return "windows" }

// Generate draws the windows world of spec; its truth lists the windows
// (WindowLists) with their hull as each feature's window.
func (w windowsWorld) Generate(_ context.Context, spec ProblemSpec, seed uint64) (*Problem, error) {
	noise, err := strconv.ParseFloat(spec.Noise, 64)
	if err != nil {
		return nil, err
	}
	relevant := int(spec.FractionRelevant*float64(spec.Features) + 0.5)
	p, err := synth.GenerateWindows(synth.WindowsConfig{Instances: spec.Instances, Features: spec.Features, Timesteps: spec.Timesteps,
		Relevant: relevant, Windows: w.Windows, NoiseScale: w.NoiseScale, Noise: noise}, seed)
	if err != nil {
		return nil, err
	}
	return &Problem{Data: p.Data, Model: p.Model, Truth: windowsTruth(p)}, nil
}

// windowsTruth returns the record truth of a windows-world problem. A
// relevant feature's window is the hull of its windows; its weights differ
// from timestep to timestep, so ordering matters, over the whole sequence
// and within each window; its effect size is the variance of its
// contribution, Σ w² over its timesteps (the values are standard normal).
func windowsTruth(p *synth.WindowsProblem) *record.Truth {
	d := len(p.Windows)
	t := &record.Truth{
		Relevant: make([]bool, d), Windows: make([]tempora.Window, d), EffectSize: make([]float64, d),
		OrderingImportant: make([]bool, d), WindowOrderingImportant: make([]bool, d),
		WindowLists: make([][]tempora.Window, d),
	}
	for j, ws := range p.Windows {
		t.WindowLists[j] = append([]tempora.Window{}, ws...)
		if len(ws) == 0 {
			continue
		}
		t.Relevant[j], t.OrderingImportant[j], t.WindowOrderingImportant[j] = true, true, true
		t.Windows[j] = tempora.Window{Start: ws[0].Start, End: ws[len(ws)-1].End}
		for _, c := range p.Model.Feature(j).Weights {
			t.EffectSize[j] += c * c
		}
	}
	return t
}
