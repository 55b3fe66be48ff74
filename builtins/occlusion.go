package builtins

import (
	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/method"
)

// OCC's parameters.
var (
	occWidth = method.Spec[int]{Name: "occlusion-width", Doc: "width in timesteps of the occluded window of one feature",
		Default: baselines.DefaultOcclusionWidth, Range: "[1, inf)"}
	occStride = method.Spec[int]{Name: "occlusion-stride", Doc: "step between the starts of occluded windows (at most the width)",
		Default: baselines.DefaultOcclusionStride, Range: "[1, inf)"}
	occBaseline = baselineSpec("occluded", baselines.ZeroBaseline)
)

// baselineSpec declares the baseline parameter of OCC and TimeSHAP (one
// declaration, each method with its own default): cells names the cells
// the baseline replaces.
func baselineSpec(cells string, def baselines.Baseline) method.Spec[string] {
	return method.Spec[string]{Name: "baseline",
		Doc:     "value of " + cells + " cells: zero, mean (the cell's mean over instances) or event (the feature's mean over instances and timesteps)",
		Default: def.String()}
}

// occMethod is OCC, sliding-window occlusion (baselines.Occlusion), which
// occludes only observed cells of data with missing values
// (docs/decisions.md, decision 21). It shares TIME's copy-memory
// parameter, the budget of the workers' working copies.
func occMethod() method.Method {
	return method.Method{
		Name:   "OCC",
		Local:  true,
		Doc:    "sliding-window occlusion: mean |output change| over the windows covering each cell",
		Params: method.Params(occWidth, occStride, occBaseline, copyMemory, outputParam),
		New: func(c method.Config) (tempora.Explainer, error) {
			b, err := baselines.ParseBaseline(occBaseline.Get(c.Values))
			if err != nil {
				return nil, err
			}
			out, err := outputOf(c)
			if err != nil {
				return nil, err
			}
			return baselines.Occlusion{Width: occWidth.Get(c.Values), Stride: occStride.Get(c.Values),
				Baseline: b, Workers: c.Workers, MemoryBudget: int64(copyMemory.Get(c.Values)) << 20, Output: out}, nil
		},
	}
}
