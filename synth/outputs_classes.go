package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tempora-dev/tempora"
)

// classesWorld is the world of K classes (OutputsConfig.Kind
// tempora.Classes): a nested dichotomy drawn by splitting the classes
// 0..K−1 recursively at a uniform point into two non-empty runs (the
// nodes numbered in preorder), node n reading feature n over a window of
// 2 to 5 timesteps placed uniformly, with weights ±U(1, 2) scaled so that
// its score has SD classScoreSD (the data are standard normal) and no
// bias. Class c's truth is the nodes on its path: their features, over
// their windows.
type classesWorld struct{}

func (classesWorld) validate(c OutputsConfig) error {
	if err := c.only(); err != nil {
		return err
	}
	switch {
	case c.Outputs < 3:
		return fmt.Errorf("synth: outputs: %d classes, want at least 3", c.Outputs)
	case c.Relevant != c.Outputs-1:
		return fmt.Errorf("synth: outputs: %d classes have %d split nodes, each reading one relevant feature, not %d", c.Outputs, c.Outputs-1, c.Relevant)
	case c.Timesteps < 5:
		return fmt.Errorf("synth: outputs: classes read windows of up to 5 timesteps, so need at least 5, not %d", c.Timesteps)
	}
	return nil
}

func (classesWorld) layout(c OutputsConfig, rng *rand.Rand) layout {
	var lay layout
	var split func(lo, hi int) int
	split = func(lo, hi int) int {
		if lo == hi {
			return -1 - lo
		}
		n := len(lay.tree)
		lay.tree = append(lay.tree, [2]int{})
		mid := lo + 1 + rng.IntN(hi-lo)
		left := split(lo, mid-1)
		lay.tree[n] = [2]int{left, split(mid, hi)}
		return n
	}
	split(0, c.Outputs-1)
	for n := range lay.tree {
		w := 2 + rng.IntN(4)
		start := rng.IntN(c.Timesteps - w + 1)
		weights := signedWeights(rng, w, 1)
		ss := 0.0
		for _, v := range weights {
			ss += v * v
		}
		for k := range weights {
			weights[k] *= classScoreSD / math.Sqrt(ss)
		}
		lay.units = append(lay.units, Unit{Reads: []Read{{Feature: n, Window: tempora.Window{Start: start, End: start + w - 1}, Weights: weights}}})
	}
	return lay
}
