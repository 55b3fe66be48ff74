package metrics

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tempora-dev/tempora/record"
)

// ErrOneClass reports a truth vector with no true or no false item, for
// which AUROC and AUPRC are undefined (AUPRC needs a true item; it is left
// undefined without a false item too, where every ranking scores 1).
var ErrOneClass = errors.New("metrics: the truth has a single class, so the area is undefined")

// checkRanking returns an error unless truth and scores have the same
// length, the scores are not NaN, and the truth holds both classes; it
// returns the numbers of true and false items.
func checkRanking(truth []bool, scores []float64) (pos, neg int, err error) {
	if len(truth) != len(scores) {
		return 0, 0, fmt.Errorf("metrics: %d truth values for %d scores", len(truth), len(scores))
	}
	for i, s := range scores {
		if math.IsNaN(s) {
			return 0, 0, fmt.Errorf("metrics: score %d is NaN", i)
		}
		if truth[i] {
			pos++
		}
	}
	neg = len(truth) - pos
	if pos == 0 || neg == 0 {
		return pos, neg, fmt.Errorf("%w (%d true, %d false of %d)", ErrOneClass, pos, neg, len(truth))
	}
	return pos, neg, nil
}

// curve walks the thresholds of scores in decreasing order and calls step
// with the cumulative true and false positives after each group of tied
// scores.
func curve(truth []bool, scores []float64, step func(tp, fp int)) {
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	// Sort by decreasing score; the order within a tie does not matter,
	// since a tie enters the curve as one group.
	slices.SortFunc(order, func(a, b int) int {
		switch {
		case scores[a] > scores[b]:
			return -1
		case scores[a] < scores[b]:
			return 1
		}
		return 0
	})
	tp, fp := 0, 0
	for k := 0; k < len(order); {
		s := scores[order[k]]
		for ; k < len(order) && scores[order[k]] == s; k++ {
			if truth[order[k]] {
				tp++
			} else {
				fp++
			}
		}
		step(tp, fp)
	}
}

// AUROC returns the area under the ROC curve of scores against truth, a
// higher score meaning "more likely true": the trapezoidal area through the
// points of the distinct score thresholds, tied scores entering the curve
// together. It equals the Mann–Whitney probability that a random true item
// scores above a random false one, ties counting one half, and
// scikit-learn's roc_auc_score. A perfect ranking scores 1, a reversed one
// 0, constant scores 1/2. The lengths must agree and no score may be NaN
// (±Inf are ranked as usual). It returns an error wrapping ErrOneClass when
// truth has a single class.
func AUROC(truth []bool, scores []float64) (float64, error) {
	roc, _, err := rankAreas(truth, scores)
	return roc, err
}

// AUPRC returns the average precision of scores against truth, a higher
// score meaning "more likely true":
//
//	AP = Σ_k (R_k − R_{k−1})·P_k
//
// over the distinct score thresholds k in decreasing order, where R_k and
// P_k are the recall and precision of selecting every item scoring at
// least the k-th threshold (R_0 = 0). Tied scores enter together, and the
// curve is a step function, not interpolated: scikit-learn's
// average_precision_score. A perfect ranking scores 1; a random one about
// the prevalence (the fraction of true items). The lengths must agree and
// no score may be NaN. It returns an error wrapping ErrOneClass when truth
// has a single class.
func AUPRC(truth []bool, scores []float64) (float64, error) {
	_, pr, err := rankAreas(truth, scores)
	return pr, err
}

// rankAreas returns AUROC and AUPRC of scores against truth from one walk
// of the curve (one sort).
func rankAreas(truth []bool, scores []float64) (roc, pr float64, err error) {
	pos, neg, err := checkRanking(truth, scores)
	if err != nil {
		return 0, 0, err
	}
	var area, ap float64 // area in units of one true × one false item
	ptp, pfp := 0, 0
	curve(truth, scores, func(tp, fp int) {
		area += float64(fp-pfp) * float64(tp+ptp) / 2
		if tp > ptp {
			ap += float64(tp-ptp) / float64(pos) * float64(tp) / float64(tp+fp)
		}
		ptp, pfp = tp, fp
	})
	return area / (float64(pos) * float64(neg)), ap, nil
}

// areas appends name-auroc and name-auprc to ms when the truth has both
// classes, and nothing when it has one.
func areas(ms []record.Metric, name string, truth []bool, scores []float64) ([]record.Metric, error) {
	roc, pr, err := rankAreas(truth, scores)
	if errors.Is(err, ErrOneClass) {
		return ms, nil
	}
	if err != nil {
		return nil, err
	}
	return append(ms, record.Metric{Name: name + "-auroc", Value: roc}, record.Metric{Name: name + "-auprc", Value: pr}), nil
}

// AreaMetrics scores a d × l cell-score matrix against the truth with the
// threshold-free metrics: feature-auroc and feature-auprc of the feature
// scores (method.FeatureScore of each row) against the relevant features,
// then timestep-auroc and timestep-auprc of the cells against the true
// cells. Scores are preprocessed as for DetectionMetrics (magnitudes,
// below method.NearZero counting as 0), so a method that scores nothing
// ties every item. A level whose truth has a single class (every feature
// relevant, or none) is left out, since its areas are undefined: the
// result has 0, 2 or 4 metrics, in that order.
func AreaMetrics(tr *record.Truth, cells []float64, d, l int) ([]record.Metric, error) {
	if err := CheckTruth(tr, d, l); err != nil {
		return nil, err
	}
	if len(cells) != d*l {
		return nil, fmt.Errorf("metrics: %d scores for %d features × %d timesteps", len(cells), d, l)
	}
	c := Preprocess(nil, cells)
	ms, err := areas(nil, "feature", TrueFeatures(tr), FeatureScores(nil, c, d, l))
	if err != nil {
		return nil, err
	}
	return areas(ms, "timestep", TrueCells(tr, l), c)
}

// InstanceAreas are the threshold-free metrics of per-instance
// attributions against per-instance truth, each averaged over the
// instances for which it is defined.
type InstanceAreas struct {
	// CellAUROC and CellAUPRC are the means over the instances with at
	// least one true and one false cell; Cells counts those instances.
	CellAUROC, CellAUPRC float64
	Cells                int
	// FeatureAUROC and FeatureAUPRC score each instance's feature scores
	// (method.FeatureScore of its rows) against its true features (a
	// feature is true when any of its cells is), averaged over the
	// instances with at least one true and one false feature; Features
	// counts those instances.
	FeatureAUROC, FeatureAUPRC float64
	Features                   int
}

// Metrics returns the defined averages as record metrics, in the order
// instance-timestep-auroc, instance-timestep-auprc, instance-feature-auroc,
// instance-feature-auprc; a pair whose count is 0 is left out.
func (a InstanceAreas) Metrics() []record.Metric {
	var ms []record.Metric
	if a.Cells > 0 {
		ms = append(ms, record.Metric{Name: "instance-timestep-auroc", Value: a.CellAUROC}, record.Metric{Name: "instance-timestep-auprc", Value: a.CellAUPRC})
	}
	if a.Features > 0 {
		ms = append(ms, record.Metric{Name: "instance-feature-auroc", Value: a.FeatureAUROC}, record.Metric{Name: "instance-feature-auprc", Value: a.FeatureAUPRC})
	}
	return ms
}

// InstanceMetrics scores per-instance attributions against per-instance
// truth. Both hold n instances × d features × l timesteps in the layout of
// tempora.Tensor (entry (i·d + j)·l + t). For each instance the
// attributions are preprocessed as for AreaMetrics (magnitudes, below
// method.NearZero counting as 0) and scored at the cell level and, through
// method.FeatureScore, at the feature level; each level is averaged over
// the instances where its truth has both classes. An instance whose truth
// has one class at a level does not count at that level. It returns an
// error for mismatched lengths or NaN attributions; when no instance
// counts at either level, both counts are 0 and every area is 0.
func InstanceMetrics(truth []bool, attributions []float64, n, d, l int) (InstanceAreas, error) {
	var a InstanceAreas
	if n < 0 || d <= 0 || l <= 0 {
		return a, fmt.Errorf("metrics: bad shape %d instances × %d features × %d timesteps", n, d, l)
	}
	p := d * l
	if len(truth) != n*p || len(attributions) != n*p {
		return a, fmt.Errorf("metrics: %d truth values and %d attributions for %d instances × %d features × %d timesteps", len(truth), len(attributions), n, d, l)
	}
	c := make([]float64, p)
	f := make([]float64, d)
	tf := make([]bool, d)
	for i := range n {
		row := attributions[i*p : (i+1)*p]
		for k, v := range row {
			if math.IsNaN(v) {
				return a, fmt.Errorf("metrics: attribution of instance %d, feature %d, timestep %d is NaN", i, k/l, k%l)
			}
		}
		tc := truth[i*p : (i+1)*p]
		Preprocess(c, row)
		roc, pr, err := rankAreas(tc, c)
		switch {
		case err == nil:
			a.CellAUROC += roc
			a.CellAUPRC += pr
			a.Cells++
		case !errors.Is(err, ErrOneClass):
			return a, err
		}
		FeatureScores(f, c, d, l)
		for j := range d {
			tf[j] = slices.Contains(tc[j*l:(j+1)*l], true)
		}
		roc, pr, err = rankAreas(tf, f)
		switch {
		case err == nil:
			a.FeatureAUROC += roc
			a.FeatureAUPRC += pr
			a.Features++
		case !errors.Is(err, ErrOneClass):
			return a, err
		}
	}
	if a.Cells > 0 {
		a.CellAUROC /= float64(a.Cells)
		a.CellAUPRC /= float64(a.Cells)
	}
	if a.Features > 0 {
		a.FeatureAUROC /= float64(a.Features)
		a.FeatureAUPRC /= float64(a.Features)
	}
	return a, nil
}
