package explain

import (
	"math"

	"github.com/tempora-dev/tempora"
)

// ForceMasked exposes forceMasked to the external tests and benchmarks.
var ForceMasked = &forceMasked

// IrregularData returns an M × D × L tensor of sequences of different
// lengths with missing values, from the streams of seed: instance i's
// length n_i is uniform in [⌈L/2⌉, L] (lengths varying 2×), aligned at
// the start or the end (its support); every cell of the support holds a
// standard normal value, missing (NaN) with probability rate independently
// (MCAR), except one cell, of a uniformly chosen feature, at the support's
// last step (AlignStart) or first step (AlignEnd), which is always
// observed so that the support is the drawn one; cells outside the
// support are padding (NaN).
func IrregularData(m, d, l int, rate float64, align tempora.Alignment, seed uint64) *tempora.Tensor {
	x := tempora.NewTensor(m, d, l)
	rng := tempora.NewRand(seed, "irregular")
	lo := (l + 1) / 2
	for i := range m {
		n := lo + rng.IntN(l-lo+1)
		sup := tempora.Window{Start: 0, End: n - 1}
		edge := n - 1
		if align == tempora.AlignEnd {
			sup = tempora.Window{Start: l - n, End: l - 1}
			edge = l - n
		}
		keep := rng.IntN(d)
		for j := range d {
			s := x.Series(i, j)
			for t := range s {
				v := rng.NormFloat64()
				miss := rng.Float64() < rate
				switch {
				case t < sup.Start || t > sup.End:
					s[t] = math.NaN()
				case miss && !(j == keep && t == edge):
					s[t] = math.NaN()
				default:
					s[t] = v
				}
			}
		}
	}
	return x
}

// FullProbesTests is a test-only choice of tests: the default's, with every
// window-search probe and gap check run to its cap (the probe-cut check
// of TestProbeCut compares the two).
const FullProbesTests Tests = "full-probes"

// fullProbesTests is FullProbesTests' mode.
type fullProbesTests struct{ anytimeTests }

func (fullProbesTests) probeStop(float64) Stop { return Fixed{} }
func (fullProbesTests) checkStop(float64) Stop { return Fixed{} }

func init() { testModes[FullProbesTests] = fullProbesTests{} }

// ProbeEveryTimestep exposes probeEveryTimestep: stage 1 of the split
// probes every timestep of a window in its first round.
var ProbeEveryTimestep = &probeEveryTimestep
