package tempora

import (
	"math"
	"testing"
)

// lossTol is the tolerance for losses computed in closed form: a few ulps of
// values of order 1 to 30.
const lossTol = 1e-12

func TestQuadratic(t *testing.T) {
	y := []float64{0, 1, -2, 3.5}
	pred := []float64{0, 0.5, 1, 3.5}
	want := []float64{0, 0.25, 9, 0}
	dst := make([]float64, len(y))
	Quadratic(dst, y, pred)
	for i := range want {
		if math.IsNaN(dst[i]) || math.Abs(dst[i]-want[i]) > lossTol {
			t.Errorf("Quadratic(%v, %v) = %v, want %v", y[i], pred[i], dst[i], want[i])
		}
	}
}

func TestBinaryCrossEntropy(t *testing.T) {
	// clipped is the loss of a maximally confident wrong prediction:
	// -ln(ProbClip) = 12·ln 10 ≈ 27.631.
	clipped := -math.Log(ProbClip)
	// On the upper side the bound 1-ProbClip is not representable: the
	// nearest float64 leaves 1-p = 9.99978e-13, so a confident wrong
	// prediction of class 1 costs ≈ 27.631043 instead.
	clippedHigh := -math.Log1p(-(1 - ProbClip))
	for _, tc := range []struct {
		y, p, want float64
	}{
		{1, 0.5, math.Ln2},
		{0, 0.5, math.Ln2},
		{1, 0.9, -math.Log(0.9)},
		{0, 0.9, -math.Log(0.1)},
		{0, 0.2, -math.Log(0.8)},
		// Clipping keeps exact 0/1 predictions finite.
		{1, 0, clipped},
		{0, 1, clippedHigh},
		// Predictions outside [0, 1] are clipped too.
		{1, -3, clipped},
		{0, 7, clippedHigh},
		// A correct confident prediction costs about ProbClip, not 0 or NaN.
		{1, 1, ProbClip},
		{0, 0, ProbClip},
	} {
		dst := []float64{math.NaN()}
		BinaryCrossEntropy(dst, []float64{tc.y}, []float64{tc.p})
		if math.IsNaN(dst[0]) || math.Abs(dst[0]-tc.want) > lossTol*max(1, tc.want) {
			t.Errorf("BinaryCrossEntropy(y=%v, p=%v) = %v, want %v", tc.y, tc.p, dst[0], tc.want)
		}
	}
	if math.Abs(clippedHigh-clipped) > 1e-4 {
		t.Errorf("upper and lower clipped losses differ by %v", clippedHigh-clipped)
	}
	if math.Abs(clipped-27.631021115928547) > lossTol*30 {
		t.Errorf("-ln(ProbClip) = %v, want 27.631 (the documented cost of a confident wrong prediction)", clipped)
	}
}

func TestLossFor(t *testing.T) {
	y, pred := []float64{1}, []float64{0.25}
	dst := make([]float64, 1)
	LossFor(Regression)(dst, y, pred)
	if dst[0] != 0.5625 {
		t.Errorf("LossFor(Regression) gave %v, want the quadratic loss 0.5625", dst[0])
	}
	LossFor(Classification)(dst, y, pred)
	if math.Abs(dst[0]-math.Log(4)) > lossTol {
		t.Errorf("LossFor(Classification) gave %v, want the cross-entropy ln 4", dst[0])
	}
}

func TestLossesDoNotAllocate(t *testing.T) {
	y := []float64{0, 1, 1, 0}
	pred := []float64{0.1, 0.7, 1, 0}
	dst := make([]float64, 4)
	for name, loss := range map[string]Loss{"Quadratic": Quadratic, "BinaryCrossEntropy": BinaryCrossEntropy} {
		if a := testing.AllocsPerRun(10, func() { loss(dst, y, pred) }); a != 0 {
			t.Errorf("%s allocates %v times per call", name, a)
		}
	}
}
