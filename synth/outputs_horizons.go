package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tempora-dev/tempora"
)

// horizonsWorld is the world of K forecast horizons (OutputsConfig.Kind
// tempora.Horizons), horizon h anchored at timestep L + h. Each relevant
// feature is read by every horizon, or, for the last Partial ones, by a
// uniform subset of 1 to K − 1 horizons (its size uniform, then the
// subset); each (feature, horizon) read has its own window of 2 to 4
// timesteps placed uniformly, so horizons read a feature at different
// lags, with weights ±U(1, 2)/√w over its w timesteps (variance of its
// contribution 7/3 on average).
type horizonsWorld struct{}

func (horizonsWorld) validate(c OutputsConfig) error {
	if err := c.only("partial", "noise", "null outputs"); err != nil {
		return err
	}
	switch {
	case c.Outputs < 1:
		return fmt.Errorf("synth: outputs: %d horizons, want at least 1", c.Outputs)
	case c.Partial > 0 && c.Outputs < 2:
		return fmt.Errorf("synth: outputs: a feature read by some horizons only needs at least 2 horizons")
	case c.Timesteps < 4:
		return fmt.Errorf("synth: outputs: horizons read windows of up to 4 timesteps, so need at least 4, not %d", c.Timesteps)
	}
	return nil
}

func (horizonsWorld) layout(c OutputsConfig, rng *rand.Rand) layout {
	k, l := c.Outputs, c.Timesteps
	lay := layout{units: make([]Unit, k)}
	for j := range c.Relevant {
		horizons := make([]bool, k)
		if j >= c.Relevant-c.Partial {
			n := 1 + rng.IntN(k-1)
			for _, h := range rng.Perm(k)[:n] {
				horizons[h] = true
			}
		} else {
			for h := range horizons {
				horizons[h] = true
			}
		}
		for h, reads := range horizons {
			if !reads {
				continue
			}
			w := 2 + rng.IntN(3)
			start := rng.IntN(l - w + 1)
			lay.units[h].Reads = append(lay.units[h].Reads, Read{Feature: j, Window: tempora.Window{Start: start, End: start + w - 1},
				Weights: signedWeights(rng, w, 1/math.Sqrt(float64(w)))})
		}
	}
	return lay
}
