package experiments

import (
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/explainertest"
	"github.com/tempora-dev/tempora/method"
)

// occMethod and timeSHAPMethod are the method-table entries proposed for
// the temporal peers of issue 20. Once the built-in table carries them,
// TestBuiltinContract covers them and this file can go.

// occMethod is OCC's entry: sliding-window occlusion (baselines.Occlusion).
func occMethod() method.Method {
	return method.Method{
		Name: "OCC",
		Doc:  "sliding-window occlusion: mean |output change| when a window of one feature is replaced by a baseline, averaged over the windows covering each cell",
		Params: []method.Param{
			{Name: "occlusion-width", Doc: "width in timesteps of the occluded window of one feature", Default: baselines.DefaultOcclusionWidth, Range: "[1, inf)"},
			{Name: "occlusion-stride", Doc: "step between the starts of occluded windows (at most the width)", Default: baselines.DefaultOcclusionStride, Range: "[1, inf)"},
			{Name: "baseline", Doc: "value of removed cells: zero, mean (the cell's mean over instances) or event (the feature's mean over instances and timesteps)", Default: "zero"},
		},
		New: func(c method.Config) (tempora.Explainer, error) {
			b, err := baselines.ParseBaseline(c.Values.String("baseline"))
			if err != nil {
				return nil, err
			}
			return baselines.Occlusion{Width: c.Values.Int("occlusion-width"), Stride: c.Values.Int("occlusion-stride"),
				Baseline: b, Workers: c.Workers}, nil
		},
	}
}

// timeSHAPMethod is TimeSHAP's entry: KernelSHAP over temporal coalitions
// (baselines.TimeSHAP).
func timeSHAPMethod() method.Method {
	return method.Method{
		Name: "TimeSHAP",
		Doc:  "KernelSHAP over temporal coalitions (recent timesteps played individually, older ones pruned into one player), mean |attribution| per cell",
		Params: []method.Param{
			{Name: "level", Doc: "TimeSHAP's players: cell (each recent feature-timestep cell), event (each recent timestep) or feature (each feature over the recent timesteps)", Default: "cell"},
			{Name: "recent", Doc: "recent timesteps played individually, older ones forming one player (0: TimeSHAP's pruning by tolerance)", Default: 0, Range: "[0, inf)"},
			{Name: "pruning-tolerance", Doc: "TimeSHAP's pruning: the older timesteps become one player once their |Shapley value| is at most this (model output units)", Default: baselines.DefaultTimeSHAPTolerance, Range: "(0, inf)"},
			{Name: "coalitions", Doc: "KernelSHAP coalitions per explained instance (0: 2·players + 2048)", Default: 0, Range: "[0, inf)"},
			{Name: "instances-explained", Doc: "explain only the first N instances (0, or more than the data: all)", Default: baselines.DefaultTimeSHAPInstances, Quick: 20, Range: "[0, inf)"},
			{Name: "baseline", Doc: "value of removed cells: zero, mean (the cell's mean over instances) or event (the feature's mean over instances and timesteps)", Default: "event"},
		},
		New: func(c method.Config) (tempora.Explainer, error) {
			level, err := baselines.ParseTimeSHAPLevel(c.Values.String("level"))
			if err != nil {
				return nil, err
			}
			b, err := baselines.ParseBaseline(c.Values.String("baseline"))
			if err != nil {
				return nil, err
			}
			n := c.Values.Int("instances-explained")
			if c.Data != nil && c.Data.X != nil && (n == 0 || n > c.Data.X.M) {
				n = c.Data.X.M
			}
			return baselines.TimeSHAP{Level: level, Recent: c.Values.Int("recent"), Tolerance: c.Values.Float("pruning-tolerance"),
				Samples: c.Values.Int("coalitions"), Instances: n, Baseline: b, Seed: c.Seed, Workers: c.Workers}, nil
		},
	}
}

// TestPeersContract runs explainertest on the proposed entries, at their
// defaults and at the other levels and baselines, and checks that they
// form a table.
func TestPeersContract(t *testing.T) {
	occ, ts := occMethod(), timeSHAPMethod()
	if _, err := method.NewTable(occ, ts); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		m      method.Method
		params map[string]string
	}{
		{occ, nil},
		{occ, map[string]string{"occlusion-width": "3", "occlusion-stride": "2", "baseline": "mean"}},
		{ts, nil},
		{ts, map[string]string{"level": "event", "coalitions": "40", "baseline": "zero"}},
		{ts, map[string]string{"level": "feature", "recent": "2", "instances-explained": "0"}},
	} {
		t.Run(tc.m.Name, func(t *testing.T) {
			t.Parallel()
			if err := explainertest.Test(&tc.m, explainertest.Options{Params: tc.params}); err != nil {
				t.Error(err)
			}
		})
	}
}
