package metrics

import (
	"fmt"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/record"
)

// Metrics of models with several outputs (suite outputs): an
// explanation's results per output (tempora.OutputResults) scored against
// each output's truth (record.Truth's Outputs).

// The names of the per-output metrics, in the order OutputMetrics
// returns them.
const (
	OutputFeaturePower = "output-feature-power"
	OutputFeatureFDR   = "output-feature-fdr"
	OutputExactWindow  = "output-exact-window-rate"
	OutputExactLag     = "output-exact-lag-rate"
	OutputFeatureAUROC = "output-feature-auroc"
	OutputFeatureAUPRC = "output-feature-auprc"
	OutputCellAUROC    = "output-timestep-auroc"
	OutputCellAUPRC    = "output-timestep-auprc"
	FuturePower        = "reads-future-power"
	FutureFDR          = "reads-future-fdr"
	CausalAccuracy     = "causal-check-accuracy"
)

// OutputScore is how an explanation did on one output.
type OutputScore struct {
	// True, Found and Correct count the features the output's loss
	// depends on, those the explanation finds important on the output,
	// and those both.
	True, Found, Correct int
	// Exact counts the true features with a significant window equal to
	// the true one (found important on the output); ExactLag those whose
	// significant window has the true window's lag coordinates (outputs
	// with lags only).
	Exact, ExactLag int
	// Future, FoundFuture and CorrectFuture count the features read after
	// the output's step, those the causal check says are, and those both.
	Future, FoundFuture, CorrectFuture int
	// Areas holds the output's threshold-free metrics (AreaMetrics of its
	// cells against its true cells): 0, 2 or 4 of them.
	Areas []record.Metric
}

// Power returns the output's feature power (recall; 1 when no feature is
// true).
func (s OutputScore) Power() float64 { return rate(s.Correct, s.True, 1) }

// FDR returns the output's feature FDR (1 − precision; 0 when nothing is
// found).
func (s OutputScore) FDR() float64 { return 1 - rate(s.Correct, s.Found, 1) }

// rate returns a/b, or empty when b is 0.
func rate(a, b int, empty float64) float64 {
	if b == 0 {
		return empty
	}
	return float64(a) / float64(b)
}

// CheckOutputTruth returns an error unless tr has the truth of every
// output of e (the same number of outputs, one entry per feature, windows
// within e's L timesteps, lags exactly for outputs with anchors).
func CheckOutputTruth(tr *record.Truth, e *tempora.Explanation) error {
	if err := CheckTruth(tr, e.D, e.L); err != nil {
		return err
	}
	if e.Outputs == nil || tr.Outputs == nil {
		return fmt.Errorf("metrics: per-output metrics need an explanation and a truth with outputs")
	}
	if len(tr.Outputs) != len(e.Outputs.Outputs) {
		return fmt.Errorf("metrics: truth has %d outputs, explanation %d", len(tr.Outputs), len(e.Outputs.Outputs))
	}
	for k, o := range tr.Outputs {
		out := &e.Outputs.Outputs[k]
		if len(o.Relevant) != e.D || len(o.Windows) != e.D || len(out.Features) != e.D || len(out.Cells) != e.D*e.L {
			return fmt.Errorf("metrics: output %d: truth of %d features (%d windows), results of %d features and %d cells, for %d × %d",
				k, len(o.Relevant), len(o.Windows), len(out.Features), len(out.Cells), e.D, e.L)
		}
		if (o.Lags != nil) != (e.Outputs.Anchors != nil) || o.Lags != nil && len(o.Lags) != e.D {
			return fmt.Errorf("metrics: output %d: %d true lags, explanation with anchors %v", k, len(o.Lags), e.Outputs.Anchors != nil)
		}
		for j, rel := range o.Relevant {
			if w := o.Windows[j]; rel && (w.Start < 0 || w.End < w.Start || w.End >= e.L) {
				return fmt.Errorf("metrics: output %d: true window %v of feature %d does not fit %d timesteps", k, w, j, e.L)
			}
		}
	}
	return nil
}

// ScoreOutputs scores each output's results in e against its truth in tr
// (CheckOutputTruth).
func ScoreOutputs(tr *record.Truth, e *tempora.Explanation) ([]OutputScore, error) {
	if err := CheckOutputTruth(tr, e); err != nil {
		return nil, err
	}
	scores := make([]OutputScore, len(tr.Outputs))
	for k, o := range tr.Outputs {
		out := &e.Outputs.Outputs[k]
		s := &scores[k]
		for j, f := range out.Features {
			rel := o.Relevant[j]
			future := o.Lags != nil && rel && o.Lags[j].Start < 0
			s.True += b2i(rel)
			s.Found += b2i(f.Important)
			s.Correct += b2i(rel && f.Important)
			s.Future += b2i(future)
			s.FoundFuture += b2i(f.ReadsFuture)
			s.CorrectFuture += b2i(future && f.ReadsFuture)
			if !rel || !f.Important {
				continue
			}
			for _, w := range f.Windows {
				if w.Significant && w.Window == o.Windows[j] {
					s.Exact++
					break
				}
			}
			for _, w := range f.Windows {
				if o.Lags != nil && w.Significant && w.Lag != nil && *w.Lag == o.Lags[j] {
					s.ExactLag++
					break
				}
			}
		}
		areas, err := outputAreas(o, out.Cells, e.D, e.L)
		if err != nil {
			return nil, fmt.Errorf("metrics: output %d: %w", k, err)
		}
		s.Areas = areas
	}
	return scores, nil
}

// outputAreas returns AreaMetrics of one output's cells against its true
// cells.
func outputAreas(o record.OutputTruth, cells []float64, d, l int) ([]record.Metric, error) {
	tc := make([]bool, d*l)
	for j, rel := range o.Relevant {
		for t := range l {
			tc[j*l+t] = rel && o.Windows[j].Contains(t)
		}
	}
	c := Preprocess(nil, cells)
	ms, err := areas(nil, "feature", o.Relevant, FeatureScores(nil, c, d, l))
	if err != nil {
		return nil, err
	}
	return areas(ms, "timestep", tc, c)
}

// OutputMetrics scores e's per-output results against tr's per-output
// truth (ScoreOutputs), pooled over outputs, returning in order:
//
//   - output-feature-power, output-feature-fdr: the recall and
//     1 − precision of the (output, feature) pairs found important
//     against those whose loss depends on the feature;
//   - output-exact-window-rate: the fraction of the true pairs with a
//     significant window exactly the true one (0 when there is none);
//   - output-exact-lag-rate, for outputs with anchors (horizons, steps):
//     the same in lag coordinates (WindowResult.Lag against the true
//     lags);
//   - output-feature-auroc, output-feature-auprc, output-timestep-auroc,
//     output-timestep-auprc: each output's AreaMetrics of its cells
//     against its truth, averaged over the outputs where they are
//     defined (left out where no output defines them);
//   - reads-future-power, reads-future-fdr and causal-check-accuracy,
//     for outputs with an anchor before the last timestep (steps), where
//     TIME's causal check applies: the recall and 1 − precision of the
//     pairs said to read the future (FeatureResult.ReadsFuture) against
//     those whose true lags reach after the output's step, and 1 when
//     the explanation's verdict on the whole model
//     (OutputResults.ReadsFuture) is right, else 0.
func OutputMetrics(tr *record.Truth, e *tempora.Explanation) ([]record.Metric, error) {
	scores, err := ScoreOutputs(tr, e)
	if err != nil {
		return nil, err
	}
	var t OutputScore
	areaSum := map[string]float64{} // lookup only; never iterated
	areaN := map[string]int{}       // lookup only; never iterated
	for _, s := range scores {
		t.True += s.True
		t.Found += s.Found
		t.Correct += s.Correct
		t.Exact += s.Exact
		t.ExactLag += s.ExactLag
		t.Future += s.Future
		t.FoundFuture += s.FoundFuture
		t.CorrectFuture += s.CorrectFuture
		for _, m := range s.Areas {
			areaSum[m.Name] += m.Value
			areaN[m.Name]++
		}
	}
	ms := []record.Metric{
		{Name: OutputFeaturePower, Value: t.Power()}, {Name: OutputFeatureFDR, Value: t.FDR()},
		{Name: OutputExactWindow, Value: rate(t.Exact, t.True, 0)},
	}
	if e.Outputs.Anchors != nil {
		ms = append(ms, record.Metric{Name: OutputExactLag, Value: rate(t.ExactLag, t.True, 0)})
	}
	for _, name := range []string{"feature-auroc", "feature-auprc", "timestep-auroc", "timestep-auprc"} {
		if n := areaN[name]; n > 0 {
			ms = append(ms, record.Metric{Name: "output-" + name, Value: areaSum[name] / float64(n)})
		}
	}
	if causal(e) {
		right := 0.0
		if e.Outputs.ReadsFuture == (t.Future > 0) {
			right = 1
		}
		ms = append(ms, record.Metric{Name: FuturePower, Value: rate(t.CorrectFuture, t.Future, 1)},
			record.Metric{Name: FutureFDR, Value: 1 - rate(t.CorrectFuture, t.FoundFuture, 1)},
			record.Metric{Name: CausalAccuracy, Value: right})
	}
	return ms, nil
}

// causal reports whether some output of e has an anchor before the last
// timestep, where TIME's causal check applies.
func causal(e *tempora.Explanation) bool {
	for _, a := range e.Outputs.Anchors {
		if a < e.L-1 {
			return true
		}
	}
	return false
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
