package baselines

import (
	"fmt"
	"math"
	"strconv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/method"
)

// Models with several outputs (tempora.Outputs). Every baseline has an
// Output field, explain.WholeModel (the zero value) or explain.OutputOf(k),
// which says what it explains:
//
//   - the whole model, explain.WholeModel: SAGE and PERM score the whole
//     model's loss (tempora.Scorer: the loss averaged over the outputs, or
//     the categorical cross-entropy of classes); LIME, OCC and TimeSHAP,
//     which explain predictions, explain every output at once, and their
//     cells are the mean over the outputs of each output's cells. For a
//     model with several outputs the explanation's Outputs then holds each
//     output's cells (and feature scores), made from the same model calls:
//     the per-output losses of the same draws, walks or coalitions, or the
//     per-output predictions of the same samples;
//   - output k alone, explain.OutputOf(k): SAGE and PERM score that
//     output's loss, and LIME, OCC and TimeSHAP explain that output's
//     prediction (a class's probability); the explanation's Output names
//     it and it has no per-output results.
//
// With one output, the whole model is that output (OutputOf(0) is the
// same as WholeModel), and every explanation is what it was before models
// with several outputs existed.

// ParseOutput parses the output parameter of the baselines against data:
// empty for the whole model, else the name of one of its outputs
// (tempora.Outputs.Name) or its index. A text that names one output and is
// the index of another is an error. With one output, "0" is the whole
// model.
func ParseOutput(data *tempora.Dataset, s string) (explain.Output, error) {
	if s == "" {
		return explain.WholeModel, nil
	}
	if data == nil {
		return 0, fmt.Errorf("baselines: output %q: no data to find it in", s)
	}
	o, k := data.Outputs, data.K()
	named := -1
	for c := range k {
		if o.Name(c) == s {
			named = c
			break
		}
	}
	index, err := strconv.Atoi(s)
	isIndex := err == nil && index >= 0 && index < k
	switch {
	case named >= 0 && isIndex && index != named:
		return 0, fmt.Errorf("baselines: output %q is the name of output %d and the index of output %d (%q); give the other's name", s, named, index, o.Name(index))
	case named >= 0:
		index = named
	case !isIndex:
		return 0, fmt.Errorf("baselines: the model has no output %q (%s)", s, outputList(o, k))
	}
	if k == 1 {
		return explain.WholeModel, nil
	}
	return explain.OutputOf(index), nil
}

// outputList names the outputs for an error message.
func outputList(o *tempora.Outputs, k int) string {
	if k == 1 {
		return "it has one output, 0"
	}
	if o.Names == nil {
		return fmt.Sprintf("its outputs are 0 to %d", k-1)
	}
	return fmt.Sprintf("its outputs are %q, or 0 to %d", o.Names, k-1)
}

// outputs is what a baseline explains of a model with K predictions per
// instance: the prediction columns cols it explains (each output of the
// whole model, or the one chosen) and, for one output of several, its
// name.
type outputs struct {
	out  explain.Output
	k    int   // predictions per instance
	cols []int // the explained outputs' columns in a row of K predictions
	name string
}

// selectOutput checks out against data (validated) and returns what it
// explains. OutputOf(0) of a model with one output is its whole model.
func selectOutput(name string, out explain.Output, data *tempora.Dataset) (outputs, error) {
	k := data.K()
	switch {
	case out < explain.WholeModel || int(out) > k:
		return outputs{}, fmt.Errorf("baselines: %s Output is %v, but the model has %d outputs", name, out, k)
	case k == 1:
		return outputs{out: explain.WholeModel, k: 1, cols: []int{0}}, nil
	case out == explain.WholeModel:
		s := outputs{k: k, cols: make([]int, k)}
		for c := range k {
			s.cols[c] = c
		}
		return s, nil
	}
	c := int(out) - 1
	return outputs{out: out, k: k, cols: []int{c}, name: data.Outputs.Name(c)}, nil
}

// perOutput reports whether the explanation holds every output's cells
// (the whole model of a model with several outputs).
func (s outputs) perOutput() bool { return len(s.cols) > 1 }

// scorerOutput is the output in tempora.Scorer's terms (tempora.Whole or
// an index).
func (s outputs) scorerOutput() int {
	if s.out == explain.WholeModel {
		return tempora.Whole
	}
	return int(s.out) - 1
}

// finish sets e's cells from the explained outputs' cells (cells[o] of
// cols[o], D·L each): one output's are the explanation's, several are each
// output's in e.Outputs and their mean, taken in output order, in e.Cells
// (the rule of the methods that explain predictions). It then summarises
// the feature scores (method.FeatureScores) and names the one output of
// several that e explains.
func (s outputs) finish(e *tempora.Explanation, cells [][]float64) {
	if !s.perOutput() {
		copy(e.Cells, cells[0])
		s.fill(e, nil)
		return
	}
	clear(e.Cells)
	for _, c := range cells {
		for i, v := range c {
			e.Cells[i] += v
		}
	}
	for i := range e.Cells {
		e.Cells[i] /= float64(len(cells))
	}
	s.fill(e, cells)
}

// fill summarises e's feature scores and, with per-output cells (the
// whole model of a model with several outputs), sets each output's cells
// and feature scores in e.Outputs; with one output of several explained it
// names the output and drops e.Outputs.
func (s outputs) fill(e *tempora.Explanation, cells [][]float64) {
	summarise(e)
	switch {
	case s.name != "":
		e.Output, e.Outputs = s.name, nil
	case cells != nil && e.Outputs != nil:
		for c := range e.Outputs.Outputs {
			o := &e.Outputs.Outputs[c]
			copy(o.Cells, cells[c])
			for j := range o.Features {
				f := &o.Features[j]
				f.Score = method.FeatureScore(o.Cells[j*e.L : (j+1)*e.L])
				f.Tested = true
			}
		}
	}
}

// hasTarget reports whether instance i of data has a target for output c
// (classes: always; horizons and steps: a target that is not NaN).
func hasTarget(data *tempora.Dataset, i, c int) bool {
	o := data.Outputs
	if o == nil || o.Kind == tempora.Classes {
		return true
	}
	return !math.IsNaN(data.Y[i*o.K+c])
}
