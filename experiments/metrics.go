package experiments

import (
	"fmt"
	"math"
	"slices"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/record"
)

// Truth is the ground truth an explanation is scored against: per feature,
// whether it is relevant, its true window, its effect size and its two
// ordering flags. It is stored in every record.
type Truth = record.Truth

// Metric is one named measurement of a record, e.g. {"feature-power", 0.9}.
type Metric = record.Metric

// NearZero is the magnitude below which a cell score counts as zero
// (reference-facts §4.2, anamod's NEAR_ZERO).
const NearZero = 1e-10

// Mode is how a score matrix becomes a selection of features and cells.
type Mode int

const (
	// TopN selects the n highest scores with n = min(#true items,
	// #non-zero items); ties go to the higher score, then the lower index.
	// It is the mode of TIME-n and of every baseline.
	TopN Mode = iota
	// AllNonZero selects every item with a non-zero score. It is TIME's mode.
	AllNonZero
)

// String returns "top-n" or "all-non-zero".
func (m Mode) String() string {
	switch m {
	case TopN:
		return "top-n"
	case AllNonZero:
		return "all-non-zero"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// PowerFDR returns the recall (power) and 1 − precision (FDR) of selected
// against truth, which have the same length. As in the reference (sklearn's
// zero_division=1), precision is 1 when nothing is selected and recall is 1
// when nothing is true. It panics if the lengths differ.
func PowerFDR(truth, selected []bool) (power, fdr float64) {
	if len(truth) != len(selected) {
		panic(fmt.Sprintf("experiments: %d truth values for %d selections", len(truth), len(selected)))
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

// Preprocess writes |cells| into dst with magnitudes below NearZero set to
// 0, and returns dst (allocated when nil). NaN scores count as 0.
func Preprocess(dst, cells []float64) []float64 {
	if dst == nil {
		dst = make([]float64, len(cells))
	}
	for i, v := range cells {
		v = math.Abs(v)
		if !(v >= NearZero) {
			v = 0
		}
		dst[i] = v
	}
	return dst
}

// FeatureScores writes into dst (length d, allocated when nil) the score of
// each of the d features of a preprocessed d × l score matrix: the mean of
// the feature's non-zero cells, 0 if it has none.
func FeatureScores(dst, cells []float64, d, l int) []float64 {
	if len(cells) != d*l {
		panic(fmt.Sprintf("experiments: %d cells for %d×%d", len(cells), d, l))
	}
	if dst == nil {
		dst = make([]float64, d)
	}
	for j := range d {
		var sum float64
		var n int
		for _, v := range cells[j*l : (j+1)*l] {
			if v != 0 {
				sum += v
				n++
			}
		}
		dst[j] = 0
		if n > 0 {
			dst[j] = sum / float64(n)
		}
	}
	return dst
}

// Select writes into dst (allocated when nil) the selection that mode makes
// from non-negative scores given nTrue true items: every non-zero score for
// AllNonZero; for TopN the n = min(nTrue, #non-zero) largest scores, ties
// broken by the lower index.
func Select(dst []bool, scores []float64, nTrue int, mode Mode) []bool {
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
	case AllNonZero:
		for _, i := range nonZero {
			dst[i] = true
		}
	case TopN:
		n := min(nTrue, len(nonZero))
		slices.SortStableFunc(nonZero, func(a, b int) int {
			switch {
			case scores[a] > scores[b]:
				return -1
			case scores[a] < scores[b]:
				return 1
			}
			return a - b
		})
		for _, i := range nonZero[:n] {
			dst[i] = true
		}
	default:
		panic(fmt.Sprintf("experiments: invalid mode %d", int(mode)))
	}
	return dst
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
func TrueFeatures(tr *Truth) []bool { return slices.Clone(tr.Relevant) }

// TrueCells returns the d × l cell truth (row-major): cell (j, t) is true
// when feature j is relevant and t lies in its window.
func TrueCells(tr *Truth, l int) []bool {
	d := len(tr.Relevant)
	c := make([]bool, d*l)
	for j, rel := range tr.Relevant {
		if !rel {
			continue
		}
		w := tr.Windows[j]
		for t := max(w.Start, 0); t <= min(w.End, l-1); t++ {
			c[j*l+t] = true
		}
	}
	return c
}

// CheckTruth returns an error if tr does not describe d features over l
// timesteps with valid windows for the relevant features.
func CheckTruth(tr *Truth, d, l int) error {
	if tr == nil {
		return fmt.Errorf("experiments: nil truth")
	}
	if len(tr.Relevant) != d {
		return fmt.Errorf("experiments: truth has %d features, explanation %d", len(tr.Relevant), d)
	}
	if len(tr.Windows) != d {
		return fmt.Errorf("experiments: truth has %d windows for %d features", len(tr.Windows), d)
	}
	for _, flags := range [][]bool{tr.OrderingImportant, tr.WindowOrderingImportant} {
		if flags != nil && len(flags) != d {
			return fmt.Errorf("experiments: truth has %d ordering flags for %d features", len(flags), d)
		}
	}
	for j, rel := range tr.Relevant {
		w := tr.Windows[j]
		if rel && (w.Start < 0 || w.End < w.Start || w.End >= l) {
			return fmt.Errorf("experiments: true window %v of feature %d does not fit %d timesteps", w, j, l)
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
func DetectionMetrics(tr *Truth, cells []float64, d, l int, mode Mode) ([]Metric, error) {
	if err := CheckTruth(tr, d, l); err != nil {
		return nil, err
	}
	if len(cells) != d*l {
		return nil, fmt.Errorf("experiments: %d scores for %d features × %d timesteps", len(cells), d, l)
	}
	c := Preprocess(nil, cells)
	f := FeatureScores(nil, c, d, l)
	tf, tc := TrueFeatures(tr), TrueCells(tr, l)
	var ms []Metric
	for _, m := range []struct {
		mode   Mode
		suffix string
	}{{mode, ""}, {AllNonZero, "-all"}} {
		fp, ff := PowerFDR(tf, Select(nil, f, count(tf), m.mode))
		cp, cf := PowerFDR(tc, Select(nil, c, count(tc), m.mode))
		ms = append(ms,
			Metric{Name: "feature-power" + m.suffix, Value: fp},
			Metric{Name: "feature-fdr" + m.suffix, Value: ff},
			Metric{Name: "timestep-power" + m.suffix, Value: cp},
			Metric{Name: "timestep-fdr" + m.suffix, Value: cf},
		)
	}
	return ms, nil
}

// TIMEMetrics scores TIME's per-feature results against the truth
// (reference-facts §4.1), returning, in order:
//
//   - ordering-power, ordering-fdr: Ordering_All_Important over all d
//     features (a feature not identified as important counts as not
//     ordering-important);
//   - window-ordering-power, window-ordering-fdr: Window_Ordering_Important
//     over the features identified as important;
//   - avg-window-power, avg-window-fdr: Average_Window, the per-feature
//     timestep recall and 1 − precision of the localised window against the
//     true window (whether or not the window test was significant; a feature
//     without a window selects no timestep), averaged over the features both
//     relevant and identified; with no such feature, power 0 and FDR 0.
//
// Empty populations follow PowerFDR's rules (power 1, FDR 0).
func TIMEMetrics(tr *Truth, features []tempora.FeatureResult, l int) ([]Metric, error) {
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
			return nil, fmt.Errorf("experiments: feature result %d has index %d", j, f.Index)
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
			trueW[t] = tr.Windows[j].Contains(t)
			gotW[t] = f.Window != nil && f.Window.Contains(t)
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
	return []Metric{
		{Name: "ordering-power", Value: op}, {Name: "ordering-fdr", Value: of},
		{Name: "window-ordering-power", Value: wp}, {Name: "window-ordering-fdr", Value: wf},
		{Name: "avg-window-power", Value: ap}, {Name: "avg-window-fdr", Value: af},
	}, nil
}
