package tempora

import (
	"fmt"
	"math"
)

// Whole selects the whole model's loss where an output index is asked for
// (Scorer.Losses).
const Whole = -1

// A Scorer turns a model's predictions on a dataset into losses against
// the dataset's targets: the whole model's mean loss and, for a model with
// several outputs (Dataset.Outputs), each output's.
//
// The losses. With one output the per-instance loss is the Loss given
// (LossFor(task) by default) and the whole model's mean loss is its mean
// over the instances, summed in instance order. With several outputs each
// output has the task's loss (squared error, or binary cross-entropy of 0/1
// targets; a custom Loss is applied to each output's targets and
// predictions): output k's mean loss is its mean over the instances that
// have a target for it, and an instance's whole-model loss is the mean of
// its outputs' losses over the outputs it has a target for, so that the
// whole model's mean loss averages the outputs. Class outputs are scored
// by their own rule: the whole model's loss is the categorical
// cross-entropy −ln p_y (p clipped to [ProbClip, 1 − ProbClip]) and class
// k's is the binary cross-entropy of p_k against 1{y = k}; they take no
// custom Loss.
type Scorer struct {
	data   *Dataset
	loss   Loss
	k      int
	counts []int // per output: the instances with a target
}

// NewScorer returns the scorer of data (validated) with loss (nil: the
// task's). It returns an error for a custom loss with class outputs.
func NewScorer(data *Dataset, loss Loss) (*Scorer, error) {
	o := data.Outputs
	if loss != nil && o != nil && o.Kind == Classes {
		return nil, fmt.Errorf("tempora: class outputs are scored by the categorical cross-entropy, not a custom loss")
	}
	if loss == nil {
		loss = LossFor(data.Task)
	}
	s := &Scorer{data: data, loss: loss, k: data.K()}
	if o != nil && o.Kind != Classes {
		s.counts = make([]int, s.k)
		for i, y := range data.Y {
			if !math.IsNaN(y) {
				s.counts[i%s.k]++
			}
		}
	}
	return s, nil
}

// Means returns the number of means Scorer.Means writes: 1 with one
// output, 1 + K with K outputs.
func (s *Scorer) Means() int {
	if s.data.Outputs == nil {
		return 1
	}
	return 1 + s.k
}

// Mean writes the mean losses of pred, the M·K predictions of the
// dataset's instances (instance-major), into out (length s.Means()):
// out[0] is the whole model's and out[1+k] output k's. scratch must hold
// at least M·K values. It does not allocate.
func (s *Scorer) Mean(out, pred, scratch []float64) {
	y := s.data.Y
	m := s.data.X.M
	switch o := s.data.Outputs; {
	case o == nil:
		l := scratch[:m]
		s.loss(l, y, pred)
		var sum float64
		for _, v := range l {
			sum += v
		}
		out[0] = sum / float64(m)
	case o.Kind == Classes:
		s.meanClasses(out, pred)
	default:
		s.meanOutputs(out, pred, scratch[:m*s.k])
	}
}

// meanOutputs is Mean for horizons and steps: the elementwise loss, NaN
// where a target is missing, then each output's mean and the instances'
// means of their outputs.
func (s *Scorer) meanOutputs(out, pred, l []float64) {
	k, m := s.k, s.data.X.M
	s.loss(l, s.data.Y, pred)
	for c := range k {
		out[1+c] = 0
	}
	var whole float64
	for i := range m {
		var sum float64
		n := 0
		for c, v := range l[i*k : (i+1)*k] {
			if math.IsNaN(v) {
				continue
			}
			out[1+c] += v
			sum += v
			n++
		}
		whole += sum / float64(n)
	}
	for c := range k {
		out[1+c] /= float64(s.counts[c])
	}
	out[0] = whole / float64(m)
}

// meanClasses is Mean for class outputs.
func (s *Scorer) meanClasses(out, pred []float64) {
	k, m := s.k, s.data.X.M
	for c := range k {
		out[1+c] = 0
	}
	var whole float64
	for i := range m {
		label := int(s.data.Y[i])
		for c, p := range pred[i*k : (i+1)*k] {
			p = min(max(p, ProbClip), 1-ProbClip)
			if c == label {
				l := -math.Log(p)
				whole += l
				out[1+c] += l
			} else {
				out[1+c] -= math.Log1p(-p)
			}
		}
	}
	for c := range k {
		out[1+c] /= float64(m)
	}
	out[0] = whole / float64(m)
}

// Losses writes into dst, for each of the M instances, the loss of output
// (Whole: the whole model's loss) on pred; an instance without a target
// for that output gets NaN. scratch must hold at least M·K values.
func (s *Scorer) Losses(dst, pred, scratch []float64, output int) {
	y := s.data.Y
	k, m := s.k, s.data.X.M
	switch o := s.data.Outputs; {
	case o == nil:
		s.loss(dst[:m], y, pred)
	case o.Kind == Classes:
		for i := range m {
			label := int(y[i])
			c := output
			if c == Whole {
				c = label
			}
			p := min(max(pred[i*k+c], ProbClip), 1-ProbClip)
			if c == label {
				dst[i] = -math.Log(p)
			} else {
				dst[i] = -math.Log1p(-p)
			}
		}
	default:
		l := scratch[:m*k]
		s.loss(l, y, pred)
		for i := range m {
			if output != Whole {
				dst[i] = l[i*k+output]
				continue
			}
			var sum float64
			n := 0
			for _, v := range l[i*k : (i+1)*k] {
				if !math.IsNaN(v) {
					sum += v
					n++
				}
			}
			dst[i] = sum / float64(n)
		}
	}
}

// ConstantLoss returns the whole model's mean loss of the best constant
// prediction, the yardstick of a model's baseline loss: the mean target
// (for 0/1 targets, the rate of 1s) of every output, or for classes each
// class's frequency. scratch must hold at least M·K values.
func (s *Scorer) ConstantLoss(scratch []float64) float64 {
	y := s.data.Y
	k, m := s.k, s.data.X.M
	consts := make([]float64, k)
	counts := make([]float64, k)
	switch o := s.data.Outputs; {
	case o != nil && o.Kind == Classes:
		for _, v := range y {
			consts[int(v)]++
		}
		for c := range consts {
			consts[c] /= float64(m)
		}
	default:
		for i, v := range y {
			if !math.IsNaN(v) {
				consts[i%k] += v
				counts[i%k]++
			}
		}
		for c := range consts {
			consts[c] /= counts[c]
		}
	}
	pred := make([]float64, m*k)
	for i := range pred {
		pred[i] = consts[i%k]
	}
	out := make([]float64, s.Means())
	s.Mean(out, pred, scratch)
	return out[0]
}
