// Package metrics scores explanations against ground truth, as the TIME
// paper's benchmark does (docs/decisions.md, decision 14): cell scores are
// taken by magnitude, magnitudes below method.NearZero count as zero, and a
// feature's score is the mean of its non-zero cells (method.FeatureScore).
// Power is recall and FDR is 1 − precision, with precision 1 when nothing is
// selected and recall 1 when nothing is true. A selection is made in one of
// two modes (method.Mode): TopN selects the n = min(#true, #non-zero)
// highest scores, ties going to the lower flat index j·L+t; AllNonZero
// selects every non-zero score.
//
// DetectionMetrics scores a D × L score matrix at the feature and the cell
// (timestep) level; TIMEMetrics scores the per-feature test outcomes of a
// method with tests (ordering, window ordering and the average window).
// The truth and the metrics are the types of package record, in which
// they are saved. The package knows nothing of how explanations or truths are made, so
// every part of tempora (the benchmark runner, "tempora evaluate" for
// outside tools, the contract tests) scores the same way.
package metrics

import (
	"fmt"
	"math"
	"slices"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/record"
)

// PowerFDR returns the recall (power) and 1 − precision (FDR) of selected
// against truth, which have the same length. As in the reference (sklearn's
// zero_division=1), precision is 1 when nothing is selected and recall is 1
// when nothing is true. It panics if the lengths differ.
func PowerFDR(truth, selected []bool) (power, fdr float64) {
	if len(truth) != len(selected) {
		panic(fmt.Sprintf("metrics: %d truth values for %d selections", len(truth), len(selected)))
	}
	var tp, pos, sel int
	for i, t := range truth {
		if t {
			pos++
		}
		if selected[i] {
			sel++
			if t {
				tp++
			}
		}
	}
	precision, recall := 1.0, 1.0
	if sel > 0 {
		precision = float64(tp) / float64(sel)
	}
	if pos > 0 {
		recall = float64(tp) / float64(pos)
	}
	return recall, 1 - precision
}

// Preprocess writes |cells| into dst with magnitudes below method.NearZero
// set to 0, and returns dst (allocated when nil). NaN scores count as 0.
func Preprocess(dst, cells []float64) []float64 {
	if dst == nil {
		dst = make([]float64, len(cells))
	}
	for i, v := range cells {
		v = math.Abs(v)
		if !(v >= method.NearZero) {
			v = 0
		}
		dst[i] = v
	}
	return dst
}

// FeatureScores writes into dst (length d, allocated when nil) the score of
// each of the d features of a d × l score matrix, method.FeatureScore of
// its row: the mean magnitude of the feature's non-zero cells, 0 if it has
// none.
func FeatureScores(dst, cells []float64, d, l int) []float64 {
	if len(cells) != d*l {
		panic(fmt.Sprintf("metrics: %d cells for %d×%d", len(cells), d, l))
	}
	if dst == nil {
		dst = make([]float64, d)
	}
	for j := range d {
		dst[j] = method.FeatureScore(cells[j*l : (j+1)*l])
	}
	return dst
}

// Select writes into dst (allocated when nil) the selection that mode makes
// from non-negative scores given nTrue true items: every non-zero score for
// AllNonZero; for TopN the n = min(nTrue, #non-zero) largest scores, ties
// broken by the lower index.
func Select(dst []bool, scores []float64, nTrue int, mode method.Mode) []bool {
	if dst == nil {
		dst = make([]bool, len(scores))
	}
	var nonZero []int
	for i, s := range scores {
		dst[i] = false
		if s != 0 {
			nonZero = append(nonZero, i)
		}
	}
	switch mode {
	case method.AllNonZero:
		for _, i := range nonZero {
			dst[i] = true
		}
	case method.TopN:
		n := min(nTrue, len(nonZero))
		for _, i := range Ranking(scores)[:n] {
			dst[i] = true
		}
	default:
		panic(fmt.Sprintf("metrics: invalid mode %d", int(mode)))
	}
	return dst
}

// Ranking returns the indices of scores in the order of the top-n rule
// (docs/decisions.md, decision 14): higher scores first, ties to the lower
// index. TopN selects its first n = min(nTrue, #non-zero) items; "tempora
// rank" prints it for programs that select features as the benchmark does.
func Ranking(scores []float64) []int {
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return a - b
	})
	return order
}

func count(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}

// TrueFeatures returns the relevant flag of every feature.
func TrueFeatures(tr *record.Truth) []bool { return slices.Clone(tr.Relevant) }

// TrueCells returns the d × l cell truth (row-major): cell (j, t) is true
// when feature j is relevant and t lies in its window.
func TrueCells(tr *record.Truth, l int) []bool {
	d := len(tr.Relevant)
	c := make([]bool, d*l)
	for j, rel := range tr.Relevant {
		if !rel {
			continue
		}
		for t := range l {
			c[j*l+t] = tr.InWindow(j, t)
		}
	}
	return c
}

// CheckTruth returns an error if tr does not describe d features over l
// timesteps with valid windows for the relevant features.
func CheckTruth(tr *record.Truth, d, l int) error {
	if tr == nil {
		return fmt.Errorf("metrics: nil truth")
	}
	if len(tr.Relevant) != d {
		return fmt.Errorf("metrics: truth has %d features, explanation %d", len(tr.Relevant), d)
	}
	if len(tr.Windows) != d {
		return fmt.Errorf("metrics: truth has %d windows for %d features", len(tr.Windows), d)
	}
	for _, flags := range [][]bool{tr.OrderingImportant, tr.WindowOrderingImportant} {
		if flags != nil && len(flags) != d {
			return fmt.Errorf("metrics: truth has %d ordering flags for %d features", len(flags), d)
		}
	}
	if tr.WindowLists != nil && len(tr.WindowLists) != d {
		return fmt.Errorf("metrics: truth has %d window lists for %d features", len(tr.WindowLists), d)
	}
	for j, rel := range tr.Relevant {
		w := tr.Windows[j]
		if rel && (w.Start < 0 || w.End < w.Start || w.End >= l) {
			return fmt.Errorf("metrics: true window %v of feature %d does not fit %d timesteps", w, j, l)
		}
		if tr.WindowLists == nil {
			continue
		}
		for i, v := range tr.WindowLists[j] {
			if v.Start < w.Start || v.End < v.Start || v.End > w.End || i > 0 && v.Start <= tr.WindowLists[j][i-1].End {
				return fmt.Errorf("metrics: true windows %v of feature %d are not disjoint windows in time order within %v", tr.WindowLists[j], j, w)
			}
		}
	}
	return nil
}

// DetectionMetrics scores a d × l cell-score matrix against the truth: the
// feature-level and cell-level (timestep) power and FDR of the selection
// mode makes, then the same under AllNonZero. Scores are preprocessed first
// (Preprocess, FeatureScores). The metrics are, in order, feature-power,
// feature-fdr, timestep-power, timestep-fdr, feature-power-all,
// feature-fdr-all, timestep-power-all, timestep-fdr-all.
func DetectionMetrics(tr *record.Truth, cells []float64, d, l int, mode method.Mode) ([]record.Metric, error) {
	return detectionMetrics(tr, cells, d, l, mode, nil)
}

// detectionMetrics is DetectionMetrics; with important not nil (a method
// with tests: its features' Important flags), the features selected under
// AllNonZero are the important ones instead of those with a non-zero
// score: a feature TIME finds important without a significant window
// claims no cell, yet it is a claim (issue 31: scored by its cells, TIME's
// feature FDR over 100 Table-1 problems read 0.022 where its important
// flags' was 0.047).
func detectionMetrics(tr *record.Truth, cells []float64, d, l int, mode method.Mode, important []bool) ([]record.Metric, error) {
	if err := CheckTruth(tr, d, l); err != nil {
		return nil, err
	}
	if len(cells) != d*l {
		return nil, fmt.Errorf("metrics: %d scores for %d features × %d timesteps", len(cells), d, l)
	}
	c := Preprocess(nil, cells)
	f := FeatureScores(nil, c, d, l)
	tf, tc := TrueFeatures(tr), TrueCells(tr, l)
	var ms []record.Metric
	for _, m := range []struct {
		mode   method.Mode
		suffix string
	}{{mode, ""}, {method.AllNonZero, "-all"}} {
		sel := Select(nil, f, count(tf), m.mode)
		if important != nil && m.mode == method.AllNonZero {
			sel = important
		}
		fp, ff := PowerFDR(tf, sel)
		cp, cf := PowerFDR(tc, Select(nil, c, count(tc), m.mode))
		ms = append(ms,
			record.Metric{Name: "feature-power" + m.suffix, Value: fp},
			record.Metric{Name: "feature-fdr" + m.suffix, Value: ff},
			record.Metric{Name: "timestep-power" + m.suffix, Value: cp},
			record.Metric{Name: "timestep-fdr" + m.suffix, Value: cf},
		)
	}
	return ms, nil
}

// TIMEMetrics scores the per-feature test outcomes of a method with tests
// (method.Method.Tests, e.g. TIME) against the truth, with the metrics of
// the paper's Figure 4 (docs/decisions.md, decision 14), returning, in order:
//
//   - ordering-power, ordering-fdr: Ordering_All_Important over all d
//     features (a feature not identified as important counts as not
//     ordering-important);
//   - window-ordering-power, window-ordering-fdr: Window_Ordering_Important
//     over the features identified as important;
//   - avg-window-power, avg-window-fdr: Average_Window, the per-feature
//     timestep recall and 1 − precision of the localised window (the union
//     of a list of windows) against the true window (whether or not the
//     window test was significant; a feature without a window selects no
//     timestep), averaged over the features both
//     relevant and identified; with no such feature, power 0 and FDR 0.
//
// Empty populations follow PowerFDR's rules (power 1, FDR 0).
func TIMEMetrics(tr *record.Truth, features []tempora.FeatureResult, l int) ([]record.Metric, error) {
	d := len(features)
	if err := CheckTruth(tr, d, l); err != nil {
		return nil, err
	}
	flag := func(f []bool, j int) bool { return f != nil && f[j] }
	ordT := make([]bool, d)
	ordS := make([]bool, d)
	var wordT, wordS []bool
	var sumP, sumPrec float64
	var nAvg int
	for j, f := range features {
		if f.Index != j {
			return nil, fmt.Errorf("metrics: feature result %d has index %d", j, f.Index)
		}
		ordT[j] = flag(tr.OrderingImportant, j)
		ordS[j] = f.Important && f.OrderingImportant
		if !f.Important {
			continue
		}
		wordT = append(wordT, flag(tr.WindowOrderingImportant, j))
		wordS = append(wordS, f.WindowOrderingImportant)
		if !tr.Relevant[j] {
			continue
		}
		trueW := make([]bool, l)
		gotW := make([]bool, l)
		for t := range l {
			trueW[t] = tr.InWindow(j, t)
			gotW[t] = f.Window != nil && f.Window.Contains(t)
			for _, w := range f.Windows {
				gotW[t] = gotW[t] || w.Window.Contains(t)
			}
		}
		p, fdr := PowerFDR(trueW, gotW)
		sumP += p
		sumPrec += 1 - fdr
		nAvg++
	}
	op, of := PowerFDR(ordT, ordS)
	wp, wf := PowerFDR(wordT, wordS)
	ap, af := 0.0, 0.0
	if nAvg > 0 {
		ap, af = sumP/float64(nAvg), 1-sumPrec/float64(nAvg)
	}
	return []record.Metric{
		{Name: "ordering-power", Value: op}, {Name: "ordering-fdr", Value: of},
		{Name: "window-ordering-power", Value: wp}, {Name: "window-ordering-fdr", Value: wf},
		{Name: "avg-window-power", Value: ap}, {Name: "avg-window-fdr", Value: af},
	}, nil
}

// ExactWindowMetric is the name of the metric ExactWindows returns.
const ExactWindowMetric = "exact-window-rate"

// ExactWindows scores the windows of a method's feature results against a
// truth with window lists (the windows world): the fraction of the true
// windows of the relevant features that the method reports exactly, as a
// significant window of the feature with the same start and end, while
// finding the feature important. A hull that covers two true windows
// recovers neither. It is 0 when no feature is relevant.
func ExactWindows(tr *record.Truth, features []tempora.FeatureResult, l int) (record.Metric, error) {
	d := len(features)
	if err := CheckTruth(tr, d, l); err != nil {
		return record.Metric{}, err
	}
	if tr.WindowLists == nil {
		return record.Metric{}, fmt.Errorf("metrics: the exact-window rate needs a truth with window lists")
	}
	var total, exact int
	for j, f := range features {
		if !tr.Relevant[j] {
			continue
		}
		for _, w := range tr.WindowLists[j] {
			total++
			if !f.Important {
				continue
			}
			for _, got := range f.Windows {
				if got.Significant && got.Window == w {
					exact++
					break
				}
			}
		}
	}
	v := 0.0
	if total > 0 {
		v = float64(exact) / float64(total)
	}
	return record.Metric{Name: ExactWindowMetric, Value: v}, nil
}
