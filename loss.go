package tempora

import "math"

// Loss computes per-instance losses: dst[i] = loss(y[i], pred[i]). All three
// slices have the same length. A Loss must not allocate.
type Loss func(dst, y, pred []float64)

// ProbClip is how far binary cross-entropy keeps probabilities from 0 and 1:
// predictions are clipped to [ProbClip, 1-ProbClip] so that a confident wrong
// prediction costs about 27.6 rather than +Inf.
const ProbClip = 1e-12

// Quadratic is the squared error (y - pred)².
func Quadratic(dst, y, pred []float64) {
	for i, v := range y {
		d := v - pred[i]
		dst[i] = d * d
	}
}

// BinaryCrossEntropy is -y·ln p - (1-y)·ln(1-p) with p = pred clipped to
// [ProbClip, 1-ProbClip].
func BinaryCrossEntropy(dst, y, pred []float64) {
	for i, v := range y {
		p := min(max(pred[i], ProbClip), 1-ProbClip)
		// Labels 0 and 1 need one logarithm; the result is bit-identical
		// to the general formula, whose other term is then ±0.
		switch v {
		case 1:
			dst[i] = -math.Log(p)
		case 0:
			dst[i] = -math.Log1p(-p)
		default:
			dst[i] = -v*math.Log(p) - (1-v)*math.Log1p(-p)
		}
	}
}

// LossFor returns the default loss of a task: Quadratic for regression,
// BinaryCrossEntropy for classification.
func LossFor(t Task) Loss {
	if t == Classification {
		return BinaryCrossEntropy
	}
	return Quadratic
}
