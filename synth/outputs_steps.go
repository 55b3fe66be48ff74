package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tempora-dev/tempora"
)

// stepsWorld is the world of a causal sequence-to-sequence model
// (OutputsConfig.Kind tempora.Steps): one output per timestep, output s
// anchored at s. Relevant feature j is read over the lags [a_j, b_j] of
// every output, a_j uniform on {0, 1, 2} and b_j − a_j + 1 uniform on 2
// to 4, with weights ±U(1, 2)/√w per lag: output s reads timesteps
// s − b_j … s − a_j, clipped to the sequence (an output before a_j does
// not read the feature). With Period, the last relevant feature is
// sparse and read at lag a_j alone, through its last observation (weight
// ±U(1, 2)); its truth is the P timesteps ending there. With Peek, the
// first relevant feature is also read at lag −1, with weight ±U(1, 2)/√w:
// output s then reads input s + 1, in the targets too, so its loss
// depends on the future.
type stepsWorld struct{}

// maxStepLag is the largest lag a step reads (a_j ≤ 2, windows of up to 4
// lags).
const maxStepLag = 5

func (stepsWorld) validate(c OutputsConfig) error {
	if err := c.only("noise", "null outputs", "period", "peek"); err != nil {
		return err
	}
	switch {
	case c.Outputs != 0:
		return fmt.Errorf("synth: outputs: steps have one output per timestep, so take no number of outputs (got %d)", c.Outputs)
	case c.Timesteps < maxStepLag+3:
		return fmt.Errorf("synth: outputs: steps read lags up to %d, so need at least %d timesteps, not %d", maxStepLag, maxStepLag+3, c.Timesteps)
	case c.Period > 0 && c.Peek && c.Relevant < 2:
		return fmt.Errorf("synth: outputs: a sparse feature and a peeking one need 2 relevant features, not %d", c.Relevant)
	}
	return nil
}

func (stepsWorld) layout(c OutputsConfig, rng *rand.Rand) layout {
	l := c.Timesteps
	lay := layout{units: make([]Unit, l)}
	for j := range c.Relevant {
		a := rng.IntN(3)
		w := 2 + rng.IntN(3)
		weights := signedWeights(rng, w, 1/math.Sqrt(float64(w)))
		switch {
		case c.Period > 0 && j == c.Relevant-1:
			weights = signedWeights(rng, 1, 1)
		case c.Peek && j == 0:
			weights = append(signedWeights(rng, 1, 1/math.Sqrt(float64(w))), weights...)
			a = -1
		}
		// weights[q] is the weight of lag a + q.
		b := a + len(weights) - 1
		for s := range l {
			win := tempora.Window{Start: max(0, s-b), End: min(l-1, s-a)}
			if win.Start > win.End {
				continue
			}
			ws := make([]float64, win.Len())
			for t := win.Start; t <= win.End; t++ {
				ws[t-win.Start] = weights[s-t-a]
			}
			lay.units[s].Reads = append(lay.units[s].Reads, Read{Feature: j, Window: win, Weights: ws})
		}
	}
	return lay
}
