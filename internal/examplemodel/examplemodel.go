// Package examplemodel is the additive windowed model served by the example
// model programs (examples/gomodel, and examples/python/serve_model.py,
// which computes the same thing), so that tests and benchmarks can compare
// a model run in a child process with its in-process twin.
//
// The model's score for instance i is
//
//	score(i) = bias + Σ_k weight_k · mean(x[i, feature_k, start_k..end_k])
//
// over its terms k, in order; a regression model predicts the score and a
// classification model predicts sigmoid(score) = 1 / (1 + exp(−score)).
package examplemodel

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
)

// DefaultTerms is the terms specification used by the example programs when
// none is given. It needs at least 8 features and 20 timesteps.
const DefaultTerms = "0:10:19:1.5;3:0:4:-2;7:5:14:0.5"

// Term is one summand of the score: Weight times the mean of feature Feature
// over timesteps Start..End (inclusive).
type Term struct {
	Feature, Start, End int
	Weight              float64
}

// Model is an additive windowed model. The zero value predicts 0 for
// regression.
type Model struct {
	Terms []Term
	Bias  float64
	// Classification selects the sigmoid link.
	Classification bool
}

var _ tempora.Model = (*Model)(nil)

// ParseTerms parses a specification "feature:start:end:weight;…", e.g.
// DefaultTerms. An empty string means no terms.
func ParseTerms(s string) ([]Term, error) {
	var terms []Term
	for _, part := range strings.Split(s, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		f := strings.Split(part, ":")
		if len(f) != 4 {
			return nil, fmt.Errorf("examplemodel: term %q is not feature:start:end:weight", part)
		}
		var t Term
		var err error
		ints := []*int{&t.Feature, &t.Start, &t.End}
		for k, p := range ints {
			if *p, err = strconv.Atoi(f[k]); err != nil || *p < 0 {
				return nil, fmt.Errorf("examplemodel: term %q: %q is not a non-negative integer", part, f[k])
			}
		}
		if t.Start > t.End {
			return nil, fmt.Errorf("examplemodel: term %q: window start %d after end %d", part, t.Start, t.End)
		}
		if t.Weight, err = strconv.ParseFloat(f[3], 64); err != nil {
			return nil, fmt.Errorf("examplemodel: term %q: weight %q is not a number", part, f[3])
		}
		terms = append(terms, t)
	}
	return terms, nil
}

// Predict writes the model's predictions for x into dst. It returns an error
// if a term's feature or window lies outside x.
func (m *Model) Predict(dst []float64, x *tempora.Tensor) error {
	if len(dst) != x.M {
		return fmt.Errorf("examplemodel: %d predictions requested for %d instances", len(dst), x.M)
	}
	for _, t := range m.Terms {
		if t.Feature >= x.D || t.End >= x.L {
			return fmt.Errorf("examplemodel: term on feature %d, timesteps %d..%d does not fit data with %d features and %d timesteps",
				t.Feature, t.Start, t.End, x.D, x.L)
		}
	}
	for i := range dst {
		s := m.Bias
		for _, t := range m.Terms {
			var sum float64
			for _, v := range x.Window(i, t.Feature, t.Start, t.End) {
				sum += v
			}
			s += t.Weight * (sum / float64(t.End-t.Start+1))
		}
		if m.Classification {
			s = 1 / (1 + math.Exp(-s))
		}
		dst[i] = s
	}
	return nil
}
