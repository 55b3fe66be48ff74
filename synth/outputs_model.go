package synth

import (
	"fmt"
	"math"
	"slices"

	"github.com/tempora-dev/tempora"
)

// Read is one term of a Unit: Σ_t Weights[t − Window.Start]·v_j(t) over
// the timesteps t of Window, where v_j(t) is feature j's value at t or,
// for a feature the model carries forward (OutputsSpec.Carried), its last
// observed value at or before t (0 before its first observation).
type Read struct {
	Feature int
	Window  tempora.Window
	Weights []float64
}

// Unit is a linear score of an OutputsModel: Bias plus its Reads, at most
// one per feature.
type Unit struct {
	Bias  float64
	Reads []Read
}

// OutputsSpec describes an OutputsModel.
type OutputsSpec struct {
	// Kind and K are the model's outputs: K horizons or output steps of a
	// regression model (output k is unit k's score), or K ≥ 3 classes of
	// a classification model (a nested dichotomy over the K − 1 units).
	Kind tempora.OutputKind
	K    int
	// Features and Timesteps are the D × L shape of an instance.
	Features, Timesteps int
	// Units are the scores: K for horizons and steps, K − 1 split nodes
	// for classes.
	Units []Unit
	// Tree is the nested dichotomy of classes (nil otherwise): Tree[n]
	// holds node n's two children, a node index (greater than n) or a
	// class c written −1 − c; node 0 is the root. Going to the second
	// child of node n has probability σ(z_n), z_n unit n's score, so a
	// class's probability is the product of its path's branch
	// probabilities.
	Tree [][2]int
	// Carried lists the features the model carries forward over missing
	// values (NaN), in increasing order; any other feature must be
	// observed wherever the model is evaluated.
	Carried []int
}

// OutputsModel is the black box of the worlds with several outputs
// (GenerateOutputs): linear scores of windows of the features, which are
// the outputs themselves (horizons, steps; regression) or the split nodes
// of a nested dichotomy whose leaves are the classes (classification).
// Class c's probability depends exactly on the features read by the
// nodes on its path, which a softmax over per-class scores would not
// give: every class would then depend on every score. An OutputsModel is
// immutable and safe for concurrent use.
type OutputsModel struct {
	spec    OutputsSpec
	carried []int // per feature: its index in spec.Carried, or −1
	paths   [][]branch
}

// branch is one step of a class's path: node n, to its second child when
// right.
type branch struct {
	node  int
	right bool
}

var _ tempora.Model = (*OutputsModel)(nil)

// NewOutputsModel returns the model of spec (copied), or an error naming
// what is wrong with it.
func NewOutputsModel(spec OutputsSpec) (*OutputsModel, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	s := spec.clone()
	m := &OutputsModel{spec: s, carried: make([]int, s.Features)}
	for j := range m.carried {
		m.carried[j] = slices.Index(s.Carried, j)
	}
	if s.Kind == tempora.Classes {
		m.paths = make([][]branch, s.K)
		var walk func(n int, path []branch)
		walk = func(n int, path []branch) {
			for side, c := range s.Tree[n] {
				p := append(slices.Clone(path), branch{n, side == 1})
				if c < 0 {
					m.paths[-1-c] = p
				} else {
					walk(c, p)
				}
			}
		}
		walk(0, nil)
	}
	return m, nil
}

// clone returns a deep copy of s.
func (s OutputsSpec) clone() OutputsSpec {
	c := s
	c.Units = make([]Unit, len(s.Units))
	for u, unit := range s.Units {
		c.Units[u] = Unit{Bias: unit.Bias, Reads: make([]Read, len(unit.Reads))}
		for r, rd := range unit.Reads {
			c.Units[u].Reads[r] = Read{Feature: rd.Feature, Window: rd.Window, Weights: slices.Clone(rd.Weights)}
		}
	}
	c.Tree = slices.Clone(s.Tree)
	c.Carried = slices.Clone(s.Carried)
	return c
}

// Spec returns a copy of the model's description.
func (m *OutputsModel) Spec() OutputsSpec { return m.spec.clone() }

// Outputs returns the model's outputs (default names and anchors).
func (m *OutputsModel) Outputs() *tempora.Outputs {
	return &tempora.Outputs{Kind: m.spec.Kind, K: m.spec.K}
}

// Task returns tempora.Classification for classes, tempora.Regression
// otherwise.
func (m *OutputsModel) Task() tempora.Task { return taskOf(m.spec.Kind) }

func taskOf(k tempora.OutputKind) tempora.Task {
	if k == tempora.Classes {
		return tempora.Classification
	}
	return tempora.Regression
}

// ClassPath returns the split nodes on class c's path from the root, in
// order.
func (m *OutputsModel) ClassPath(c int) []int {
	var nodes []int
	for _, b := range m.paths[c] {
		nodes = append(nodes, b.node)
	}
	return nodes
}

func (s *OutputsSpec) validate() error {
	switch s.Kind {
	case tempora.Classes, tempora.Horizons, tempora.Steps:
	default:
		return fmt.Errorf("synth: outputs model: invalid output kind %d", int(s.Kind))
	}
	if s.Features < 1 || s.Timesteps < 1 || s.Features > maxValues/s.Timesteps {
		return fmt.Errorf("synth: outputs model: shape %d features × %d timesteps", s.Features, s.Timesteps)
	}
	units := s.K
	if s.Kind == tempora.Classes {
		if s.K < 3 {
			return fmt.Errorf("synth: outputs model: %d classes, want at least 3", s.K)
		}
		units = s.K - 1
		if err := s.validateTree(); err != nil {
			return err
		}
	} else {
		if s.K < 1 {
			return fmt.Errorf("synth: outputs model: %d %v, want at least 1", s.K, s.Kind)
		}
		if s.Tree != nil {
			return fmt.Errorf("synth: outputs model: %v have no tree", s.Kind)
		}
	}
	if len(s.Units) != units {
		return fmt.Errorf("synth: outputs model: %d units for %d %v (want %d)", len(s.Units), s.K, s.Kind, units)
	}
	for u, unit := range s.Units {
		if !finite(unit.Bias) {
			return fmt.Errorf("synth: outputs model: unit %d has bias %v", u, unit.Bias)
		}
		seen := map[int]bool{}
		for _, r := range unit.Reads {
			if r.Feature < 0 || r.Feature >= s.Features {
				return fmt.Errorf("synth: outputs model: unit %d reads feature %d of %d", u, r.Feature, s.Features)
			}
			if seen[r.Feature] {
				return fmt.Errorf("synth: outputs model: unit %d reads feature %d twice", u, r.Feature)
			}
			seen[r.Feature] = true
			if err := checkWindow(r.Window, s.Timesteps); err != nil {
				return fmt.Errorf("synth: outputs model: unit %d, feature %d: %w", u, r.Feature, err)
			}
			if len(r.Weights) != r.Window.Len() {
				return fmt.Errorf("synth: outputs model: unit %d, feature %d: %d weights for window %v", u, r.Feature, len(r.Weights), r.Window)
			}
			for _, w := range r.Weights {
				if !finite(w) {
					return fmt.Errorf("synth: outputs model: unit %d, feature %d has weight %v", u, r.Feature, w)
				}
			}
		}
	}
	for i, j := range s.Carried {
		if j < 0 || j >= s.Features || i > 0 && j <= s.Carried[i-1] {
			return fmt.Errorf("synth: outputs model: carried features %v are not distinct features in increasing order", s.Carried)
		}
	}
	return nil
}

// validateTree checks that Tree is a binary tree over K − 1 nodes, rooted
// at node 0, whose leaves are the K classes, each once.
func (s *OutputsSpec) validateTree() error {
	if len(s.Tree) != s.K-1 {
		return fmt.Errorf("synth: outputs model: a tree of %d nodes for %d classes (want %d)", len(s.Tree), s.K, s.K-1)
	}
	nodes := make([]int, len(s.Tree))
	classes := make([]int, s.K)
	for n, ch := range s.Tree {
		for _, c := range ch {
			switch {
			case c < 0 && -1-c < s.K:
				classes[-1-c]++
			case c > n && c < len(s.Tree):
				nodes[c]++
			default:
				return fmt.Errorf("synth: outputs model: node %d has child %d (want a later node or a class −1 − c)", n, c)
			}
		}
	}
	for n := 1; n < len(nodes); n++ {
		if nodes[n] != 1 {
			return fmt.Errorf("synth: outputs model: node %d has %d parents, want 1", n, nodes[n])
		}
	}
	for c, k := range classes {
		if k != 1 {
			return fmt.Errorf("synth: outputs model: class %d is %d leaves of the tree, want 1", c, k)
		}
	}
	return nil
}

// Predict writes the K outputs of every instance of x into dst
// (instance-major, len(dst) = x.M·K): the units' scores for horizons and
// steps, the class probabilities for classes. It returns an error for a
// tensor of another shape and for a missing value (NaN) in a feature the
// model does not carry forward.
func (m *OutputsModel) Predict(dst []float64, x *tempora.Tensor) error {
	s := &m.spec
	if x == nil || x.D != s.Features || x.L != s.Timesteps || x.M < 0 || len(x.Data) != x.M*x.D*x.L {
		return fmt.Errorf("synth: outputs model of %d features × %d timesteps given other data", s.Features, s.Timesteps)
	}
	if len(dst) != x.M*s.K {
		return fmt.Errorf("synth: %d predictions requested for %d instances × %d outputs", len(dst), x.M, s.K)
	}
	l := s.Timesteps
	held := make([]float64, len(s.Carried)*l)
	z := make([]float64, len(s.Units))
	for i := range x.M {
		row := x.Instance(i)
		for c, j := range s.Carried {
			carryForward(held[c*l:(c+1)*l], row[j*l:(j+1)*l])
		}
		for u := range s.Units {
			z[u] = m.score(u, row, held)
			if math.IsNaN(z[u]) {
				return fmt.Errorf("synth: instance %d has a missing value (NaN) in a feature the model does not carry forward", i)
			}
		}
		out := dst[i*s.K : (i+1)*s.K]
		if s.Kind != tempora.Classes {
			copy(out, z)
			continue
		}
		for c, path := range m.paths {
			p := 1.0
			for _, b := range path {
				if b.right {
					p *= sigmoid(z[b.node])
				} else {
					p *= sigmoid(-z[b.node])
				}
			}
			out[c] = p
		}
	}
	return nil
}

// score returns unit u's score on an instance's row of D·L values, held
// holding the carried features' values.
func (m *OutputsModel) score(u int, row, held []float64) float64 {
	l := m.spec.Timesteps
	unit := &m.spec.Units[u]
	v := unit.Bias
	for _, r := range unit.Reads {
		series := row[r.Feature*l : (r.Feature+1)*l]
		if c := m.carried[r.Feature]; c >= 0 {
			series = held[c*l : (c+1)*l]
		}
		for k, w := range r.Weights {
			v += w * series[r.Window.Start+k]
		}
	}
	return v
}

// carryForward writes into dst the last observed value of series at or
// before each timestep, 0 before the first observation.
func carryForward(dst, series []float64) {
	last := 0.0
	for t, v := range series {
		if v == v {
			last = v
		}
		dst[t] = last
	}
}
