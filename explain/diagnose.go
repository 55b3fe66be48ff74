package explain

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/tempora-dev/tempora"
)

// diagnose sets the explanation's Diagnostics from the top family's test
// results (topRes, one per node of the first family) and, when no node is
// important, warns with what the reader needs to know: how the model's
// loss compares with a constant prediction's, how large an effect the tests
// could have found, and that more instances help (issue 31).
func (r *timeRun) diagnose(topRes []TestResult, important int) {
	x := r.eng.data.X
	scratch := make([]float64, x.M*r.eng.data.K())
	g := &tempora.Diagnostics{BaselineLoss: r.eng.BaselineLoss(), ConstantLoss: r.eng.scorer.ConstantLoss(scratch)}
	var sds []float64
	for _, t := range topRes {
		// A test whose draws all leave the loss where it is (a feature the
		// model does not read) says nothing about the spread.
		if sd := t.SE * math.Sqrt(float64(t.Draws)); sd > 0 {
			sds = append(sds, sd)
		}
	}
	if len(sds) > 0 {
		slices.Sort(sds)
		sd := sds[len(sds)/2]
		if len(sds)%2 == 0 {
			sd = (sds[len(sds)/2-1] + sd) / 2
		}
		g.DetectableEffect = distuv.UnitNormal.Quantile(1-r.cfg.Alpha/float64(len(topRes))) * sd
	}
	r.ex.Diagnostics = g
	if important > 0 {
		return
	}
	r.ex.Warnings = append(r.ex.Warnings, noneFound(g, r.cfg.Alpha, x.M))
}

// noneFound is the warning of an explanation in which no feature is
// important.
func noneFound(g *tempora.Diagnostics, alpha float64, m int) string {
	s := fmt.Sprintf("no feature is important at alpha %.3g", alpha)
	switch {
	case g.ConstantLoss > 0 && g.BaselineLoss >= g.ConstantLoss:
		s += fmt.Sprintf(": the model's mean loss %.4g is not below a constant prediction's %.4g, so no feature can carry anything it uses", g.BaselineLoss, g.ConstantLoss)
	case g.ConstantLoss > 0:
		s += fmt.Sprintf(": the model's mean loss %.4g is %.0f%% below a constant prediction's %.4g", g.BaselineLoss, 100*(1-g.BaselineLoss/g.ConstantLoss), g.ConstantLoss)
	}
	if g.DetectableEffect > 0 {
		s += fmt.Sprintf("; with %d instances a feature's permutation must raise the mean loss by about %.3g to be found (the spread of the draws shrinks like 1/√M: more instances find smaller effects)", m, g.DetectableEffect)
	} else {
		s += "; no feature's permutation changed the model's loss"
	}
	return s
}
