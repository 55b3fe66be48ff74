package explain_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/explain"
)

// TestDiagnostics checks what an explanation says about what its tests
// could see. A weak feature (weights 0.07 against noise SD 1) is missed at
// 60 instances and found at 2000: the first explanation warns that no
// feature is important, with the model's loss against a constant
// prediction's (here above the model's: 60 instances are too few to fit
// the weak effect) and the detectable effect; the detectable effect shrinks
// about like 1/√M between the two (a ratio of √(2000/60) ≈ 5.8, within a
// factor 2 for the sampling of the draws' spread); and the constant
// prediction's loss is the targets' variance (quadratic loss).
func TestDiagnostics(t *testing.T) {
	f := weightedWindow(0, 0, []float64{0.07, 0.07, 0.07})
	var effects []float64
	for _, m := range []int{60, 2000} {
		data := regressionData(t, gaussianData(m, 3, 6, 5), f, 1, 5)
		ex, err := explain.TIME{Seed: 2}.Explain(context.Background(), f, data)
		if err != nil {
			t.Fatal(err)
		}
		g := ex.Diagnostics
		if g == nil {
			t.Fatal("no diagnostics")
		}
		var mean, v float64
		for _, y := range data.Y {
			mean += y
		}
		mean /= float64(m)
		for _, y := range data.Y {
			v += (y - mean) * (y - mean)
		}
		v /= float64(m)
		if math.Abs(g.ConstantLoss-v) > 1e-9*v {
			t.Errorf("M=%d: constant loss %v, the targets' variance %v", m, g.ConstantLoss, v)
		}
		effects = append(effects, g.DetectableEffect)
		found := ex.Features[0].Important
		warned := false
		for _, w := range ex.Warnings {
			if strings.HasPrefix(w, "no feature is important") {
				warned = true
				if !strings.Contains(w, "below a constant prediction's") || !strings.Contains(w, fmt.Sprintf("by about %.3g to be found", g.DetectableEffect)) {
					t.Errorf("M=%d: warning %q lacks the losses or the detectable effect", m, w)
				}
			}
		}
		switch {
		case m == 60 && (found || !warned):
			t.Errorf("M=60: found %v, warned %v; want the weak feature missed and the warning", found, warned)
		case m == 2000 && (!found || warned):
			t.Errorf("M=2000: found %v, warned %v; want the feature found and no warning", found, warned)
		}
	}
	if r, want := effects[0]/effects[1], math.Sqrt(2000.0/60); r < want/2 || r > want*2 {
		t.Errorf("detectable effect %v at 60 instances, %v at 2000: ratio %.2f, want about %.2f", effects[0], effects[1], r, want)
	}
}
