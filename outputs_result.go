package tempora

import (
	"fmt"
	"math"
)

// OutputResults are an explanation's results per output, for a model
// with several outputs (Explanation.Outputs; nil for one output). The
// explanation's own Features, Groups and Cells are then the whole model's
// (its loss averaged over the outputs; see Scorer).
type OutputResults struct {
	// Kind, Names and Anchors describe the outputs (Outputs): K names,
	// and K anchors on the time axis (nil for classes).
	Kind    OutputKind
	Names   []string
	Anchors []int
	// Outputs[k] is output k's results.
	Outputs []OutputResult
	// CausalChecked reports that every feature important to an output
	// with an anchor inside the sequence was tested on the timesteps
	// after it (TIME's causal check), and ReadsFuture that some output
	// was found to read them (FeatureResult.ReadsFuture says which).
	CausalChecked, ReadsFuture bool
}

// OutputResult is one output's results: its feature (and group) results
// on that output's loss, and its D × L cells, as an explanation's.
type OutputResult struct {
	Name     string
	Features []FeatureResult
	Groups   []FeatureResult
	Cells    []float64
}

// NewOutputResults returns untested per-output results for an
// explanation of D features × L timesteps of data whose model has the
// outputs o (nil for one output, which has none).
func NewOutputResults(o *Outputs, data *Dataset) *OutputResults {
	if o == nil {
		return nil
	}
	r := &OutputResults{Kind: o.Kind, Names: make([]string, o.K), Outputs: make([]OutputResult, o.K)}
	d, l := data.X.D, data.X.L
	for k := range o.K {
		r.Names[k] = o.Name(k)
		if a, ok := o.Anchor(k, l); ok {
			r.Anchors = append(r.Anchors, a)
		}
		out := OutputResult{Name: r.Names[k], Features: make([]FeatureResult, d), Cells: make([]float64, d*l)}
		for j := range d {
			out.Features[j] = NewFeatureResult(j, data.Name(j))
		}
		r.Outputs[k] = out
	}
	return r
}

// jsonOutputs and jsonOutput are the JSON form of OutputResults.
type jsonOutputs struct {
	Kind          OutputKind   `json:"kind"`
	Names         []string     `json:"names"`
	Anchors       []int        `json:"anchors,omitempty"`
	CausalChecked bool         `json:"causal_checked"`
	ReadsFuture   bool         `json:"reads_future"`
	Outputs       []jsonOutput `json:"per_output"`
}

type jsonOutput struct {
	Name     string        `json:"name"`
	Features []jsonFeature `json:"features"`
	Groups   []jsonFeature `json:"groups,omitempty"`
	Cells    [][]float64   `json:"cells"`
}

// toJSONOutputs converts per-output results of an explanation of d × l.
func toJSONOutputs(r *OutputResults, d, l int) (*jsonOutputs, error) {
	if r == nil {
		return nil, nil
	}
	if len(r.Names) != len(r.Outputs) || (r.Anchors != nil && len(r.Anchors) != len(r.Outputs)) {
		return nil, fmt.Errorf("tempora: explanation has %d outputs, %d output names and %d anchors", len(r.Outputs), len(r.Names), len(r.Anchors))
	}
	j := &jsonOutputs{Kind: r.Kind, Names: r.Names, Anchors: r.Anchors, CausalChecked: r.CausalChecked, ReadsFuture: r.ReadsFuture}
	for k, o := range r.Outputs {
		if len(o.Cells) != d*l || len(o.Features) != d {
			return nil, fmt.Errorf("tempora: output %d has %d cells and %d features for %d×%d", k, len(o.Cells), len(o.Features), d, l)
		}
		jo := jsonOutput{Name: o.Name, Cells: make([][]float64, d)}
		for r := range d {
			jo.Cells[r] = o.Cells[r*l : (r+1)*l]
			for t, v := range jo.Cells[r] {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, fmt.Errorf("tempora: output %d cell (%d, %d) is %v", k, r, t, v)
				}
			}
		}
		for _, f := range o.Features {
			jo.Features = append(jo.Features, toJSONFeature(f))
		}
		for _, g := range o.Groups {
			jo.Groups = append(jo.Groups, toJSONFeature(g))
		}
		j.Outputs = append(j.Outputs, jo)
	}
	return j, nil
}

// fromJSONOutputs converts the JSON form back, checking shapes against d
// × l.
func fromJSONOutputs(j *jsonOutputs, d, l int) (*OutputResults, error) {
	if j == nil {
		return nil, nil
	}
	if len(j.Names) != len(j.Outputs) || (j.Anchors != nil && len(j.Anchors) != len(j.Outputs)) {
		return nil, fmt.Errorf("tempora: explanation has %d outputs, %d output names and %d anchors", len(j.Outputs), len(j.Names), len(j.Anchors))
	}
	r := &OutputResults{Kind: j.Kind, Names: j.Names, Anchors: j.Anchors, CausalChecked: j.CausalChecked, ReadsFuture: j.ReadsFuture}
	for k, jo := range j.Outputs {
		if len(jo.Cells) != d || len(jo.Features) != d {
			return nil, fmt.Errorf("tempora: output %d has %d cell rows and %d features for %d features", k, len(jo.Cells), len(jo.Features), d)
		}
		o := OutputResult{Name: jo.Name, Cells: make([]float64, 0, d*l)}
		for r, row := range jo.Cells {
			if len(row) != l {
				return nil, fmt.Errorf("tempora: output %d cell row %d has %d values for %d timesteps", k, r, len(row), l)
			}
			o.Cells = append(o.Cells, row...)
		}
		for _, f := range jo.Features {
			o.Features = append(o.Features, fromJSONFeature(f))
		}
		for _, g := range jo.Groups {
			o.Groups = append(o.Groups, fromJSONFeature(g))
		}
		r.Outputs = append(r.Outputs, o)
	}
	return r, nil
}
