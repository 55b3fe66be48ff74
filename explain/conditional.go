package explain

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/tempora-dev/tempora"
)

// Conditional tests (docs/decisions.md, decision 15).
//
// A marginal across-instance draw replaces the block of instance i by the
// block of instance π(i). When the block's features are correlated with the
// other features, the perturbed instance pairs the block of one instance
// with the rest of another: an input the data never holds. The test then
// asks whether the model reads the block (model-centric), and its score
// mixes the loss of the lost information with the model's behaviour off
// the data's manifold.
//
// A conditional draw replaces the block by a draw from (an estimate of) its
// conditional law given the other features of the same instance. Under the
// null hypothesis that the target is independent of the block given the
// other features, the perturbed data then has the law of the data, so the
// perturbed loss is exchangeable with the baseline loss whatever the model
// does with the block: the test asks whether the block carries information
// about the target that the other features do not (data-centric).
//
// The sampler is residual permutation under a per-timestep linear model.
// For every member j of the block and every timestep t, x_j[t] is regressed
// (least squares with an intercept, over the M instances) on the other
// features at t−1, t and t+1 (the features outside the block; the lags
// capture a first-order Markov dependence across features in time):
//
//	x_{ij}[t] = f_{ij}[t] + e_{ij}[t],   f = fitted value, e = residual.
//
// Draw π (one uniform permutation of the instances, as a marginal draw)
// replaces x_{ij}[t] by f_{ij}[t] + e_{π(i)j}[t] for every t in the window:
// each instance keeps its own fitted values and receives the residual
// trajectory of another instance, the whole trajectory and all members of
// the block moved together, so the residuals' own temporal (Markov)
// dependence and their joint law across the block's members are kept
// exactly, and only their link with the target is broken. The draw is
// computed as x_{π(i)j}[t] + f_{ij}[t] − f_{π(i)j}[t], so the Engine stores
// only the fitted values: one tensor block per tested feature set, fitted
// once per Engine over the whole sequence and shared by every test of that
// set (overall, window-search probes, window). Every regression is solved
// from one set of cross-products of all lagged columns (gramSet), computed
// once per Engine.
//
// The sampler is exact when each member given the others is linear with an
// additive noise independent of them (the linear-Gaussian case). When the
// dependence is nonlinear, the residuals keep a part that depends on the
// other features, and the perturbed block is again partly off the
// manifold: validity ends there (decisions.md states how far it holds).
// A block that holds every feature has nothing to condition on: its fitted
// value is the per-timestep mean, and the draw is the marginal one.

// Conditional is the conditional across-instance perturbation: draw π
// replaces the block of instance i by its fitted values given the other
// features plus the residuals of instance π(i) (see above). Its
// permutations, exact enumeration and streams are those of
// AcrossInstances. It needs complete data.
type Conditional struct{}

// String returns "conditional".
func (Conditional) String() string { return "conditional" }

func (Conditional) prepare(e *Engine, t *Test) (drawer, error) {
	if e.masked {
		return nil, fmt.Errorf("conditional tests need complete data, and this data has missing values (NaN)")
	}
	f, err := e.conditional(t.Features)
	if err != nil {
		return nil, err
	}
	return condDrawer{src: e.data.X, t: t, fit: f}, nil
}

// condDrawer draws a conditional test.
type condDrawer struct {
	src *tempora.Tensor
	t   *Test
	fit *condFit
}

func (d condDrawer) size() int { return d.src.M }

// arrange applies the stratified sampler's strata (condStrata, tests
// only).
func (d condDrawer) arrange(perm []int, ws *workspace) []int {
	if d.fit.strata == nil {
		return perm
	}
	out, _ := ws.scratch(len(perm))
	withinStrata(out, perm, d.fit.strata)
	return out
}

// rows writes the draw into rows [i0, i0+dst.M) of the data: the block of
// row i becomes x_{π(i)} + f_i − f_{π(i)} over the window.
func (d condDrawer) rows(dst *tempora.Tensor, i0 int, perm []int) {
	f, src := d.fit, d.src
	g, l := len(f.feats), f.l
	start, end := d.t.Window.Start, d.t.Window.End
	for r := range dst.M {
		i := i0 + r
		pi := perm[i]
		for gi, j := range d.t.Features {
			out := dst.Data[dst.Index(r, j, start) : dst.Index(r, j, end)+1]
			in := src.Data[src.Index(pi, j, start):]
			if f.strata != nil {
				copy(out, in)
				continue
			}
			fi := f.fit[(i*g+gi)*l+start:]
			fp := f.fit[(pi*g+gi)*l+start:]
			for t := range out {
				out[t] = in[t] + fi[t] - fp[t]
			}
		}
	}
}

// conditionalLags is the largest lag |δ| of the other features' values
// x_k[t+δ] in the regression of x_j[t].
const conditionalLags = 1

// condStrata, when positive, replaces the residual sampler by the
// stratified one measured against it (docs/decisions.md, decision 15): the raw block of
// instance i is replaced by that of instance π_s(i), π_s a uniform
// permutation within i's stratum, the strata being condStrata equal-count
// bins of the instances' mean fitted value of the block's first member.
// Tests only.
var condStrata = 0

// condFit is the fitted values of one feature set: Fit[(i*len(feats)+g)*L+t]
// is the fitted value of member g (feature feats[g]) of instance i at
// timestep t.
type condFit struct {
	feats  []int
	l      int
	fit    []float64
	strata []int // stratum of each instance (condStrata > 0 only)
}

// conditional returns the fit of feature set feats, computing it on first
// use; the cross-products it is solved from are computed once per Engine.
func (e *Engine) conditional(feats []int) (*condFit, error) {
	key := make([]string, len(feats))
	for i, j := range feats {
		key[i] = strconv.Itoa(j)
	}
	gram, err := e.memo(gramKey{}, func() (any, error) { return newGramSet(e.data.X), nil })
	if err != nil {
		return nil, err
	}
	f, err := e.memo(condKey(strings.Join(key, ",")), func() (any, error) {
		return fitConditional(e.data.X, feats, gram.(*gramSet))
	})
	if err != nil {
		return nil, err
	}
	return f.(*condFit), nil
}

// gramKey and condKey are the Engine's memo keys of the cross-products
// and of the fit of a feature set.
type (
	gramKey struct{}
	condKey string
)

// gramSet holds, for every timestep t, the centred cross-products of the
// lagged columns that any regression at t can use: the values x_k[u] of
// every feature k at every u in [t−conditionalLags, t+conditionalLags] ∩
// [0, L−1], and their means. Every regression at t (any member, any
// conditioning set) is a sub-block of it, so it is computed once per
// Engine: L·(3D)² values, whatever M.
type gramSet struct {
	cols [][]lagCol
	gram []*mat.SymDense
	mean [][]float64
}

// lagCol is the column x_k[u].
type lagCol struct{ k, u int }

func newGramSet(x *tempora.Tensor) *gramSet {
	m, d, l := x.M, x.D, x.L
	gs := &gramSet{cols: make([][]lagCol, l), gram: make([]*mat.SymDense, l), mean: make([][]float64, l)}
	var zdata []float64
	for t := range l {
		var cols []lagCol
		for k := range d {
			for u := max(0, t-conditionalLags); u <= min(l-1, t+conditionalLags); u++ {
				cols = append(cols, lagCol{k, u})
			}
		}
		c := len(cols)
		zdata = slices.Grow(zdata[:0], c*m)[:c*m]
		mean := make([]float64, c)
		for a, col := range cols {
			row := zdata[a*m : (a+1)*m]
			var s float64
			for i := range m {
				row[i] = x.Data[x.Index(i, col.k, col.u)]
				s += row[i]
			}
			mean[a] = s / float64(m)
			for i := range row {
				row[i] -= mean[a]
			}
		}
		g := mat.NewSymDense(c, nil)
		g.SymOuterK(1, mat.NewDense(c, m, zdata))
		gs.cols[t], gs.gram[t], gs.mean[t] = cols, g, mean
	}
	return gs
}

// fitConditional regresses every member of feats at every timestep on the
// other features at lags −conditionalLags..conditionalLags (see the top of
// this file), from the cross-products gs (nil: computed here). Columns are
// centred; a ridge of 1e−8 times the mean variance of the regressors keeps
// the normal equations positive definite when regressors are collinear or
// constant, and changes the fit of a well-conditioned problem by a
// relative 1e−8 at most.
func fitConditional(x *tempora.Tensor, feats []int, gs *gramSet) (*condFit, error) {
	if gs == nil {
		gs = newGramSet(x)
	}
	m, l := x.M, x.L
	g := len(feats)
	f := &condFit{feats: slices.Clone(feats), l: l, fit: make([]float64, m*g*l)}
	for t := range l {
		cols, gram, mean := gs.cols[t], gs.gram[t], gs.mean[t]
		var reg []int
		resp := make([]int, g)
		for a, col := range cols {
			if gi := slices.Index(feats, col.k); gi < 0 {
				reg = append(reg, a)
			} else if col.u == t {
				resp[gi] = a
			}
		}
		p := len(reg)
		if p == 0 {
			for i := range m {
				for gi, r := range resp {
					f.fit[(i*g+gi)*l+t] = mean[r]
				}
			}
			continue
		}
		ztz := mat.NewSymDense(p, nil)
		var trace float64
		for a, ra := range reg {
			for b := a; b < p; b++ {
				ztz.SetSym(a, b, gram.At(ra, reg[b]))
			}
			trace += gram.At(ra, ra)
		}
		ridge := 1e-8 * trace / float64(p)
		if ridge == 0 {
			ridge = 1e-12
		}
		for a := range p {
			ztz.SetSym(a, a, ztz.At(a, a)+ridge)
		}
		var chol mat.Cholesky
		if !chol.Factorize(ztz) {
			return nil, fmt.Errorf("explain: conditional fit of features %v at timestep %d is singular", feats, t)
		}
		zty := mat.NewDense(p, g, nil)
		for a, ra := range reg {
			for gi, r := range resp {
				zty.Set(a, gi, gram.At(ra, r))
			}
		}
		var beta mat.Dense
		if err := chol.SolveTo(&beta, zty); err != nil {
			return nil, fmt.Errorf("explain: conditional fit of features %v at timestep %d: %w", feats, t, err)
		}
		// fit_i = ȳ + Σ_a β_a (x_a,i − μ_a), with the constant part first.
		for gi, r := range resp {
			c := mean[r]
			for a, ra := range reg {
				c -= beta.At(a, gi) * mean[ra]
			}
			for i := range m {
				v := c
				for a, ra := range reg {
					col := cols[ra]
					v += beta.At(a, gi) * x.Data[x.Index(i, col.k, col.u)]
				}
				f.fit[(i*g+gi)*l+t] = v
			}
		}
	}
	if condStrata > 0 {
		f.strata = strataOf(f, m, condStrata)
	}
	return f, nil
}

// strataOf assigns the instances to k equal-count strata (the first
// M mod k strata one larger) by their mean fitted value of the first member
// over the whole sequence, ties broken by instance index.
func strataOf(f *condFit, m, k int) []int {
	g, l := len(f.feats), f.l
	mean := make([]float64, m)
	for i := range m {
		var s float64
		for _, v := range f.fit[(i*g)*l : (i*g+1)*l] {
			s += v
		}
		mean[i] = s / float64(l)
	}
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case mean[a] < mean[b]:
			return -1
		case mean[a] > mean[b]:
			return 1
		}
		return 0
	})
	k = min(k, m)
	strata := make([]int, m)
	for r, i := range order {
		strata[i] = r * k / m
	}
	return strata
}

// withinStrata turns the uniform permutation perm into a uniform
// permutation within the strata: the members of each stratum, in index
// order, are sent to the members of the same stratum in the order of their
// perm values (the ranks of a uniform permutation on a fixed subset are a
// uniform permutation of it). out must have len(perm).
func withinStrata(out, perm, strata []int) {
	k := slices.Max(strata) + 1
	members := make([][]int, k)
	for i, s := range strata {
		members[s] = append(members[s], i)
	}
	for _, ms := range members {
		byPerm := slices.Clone(ms)
		slices.SortFunc(byPerm, func(a, b int) int { return perm[a] - perm[b] })
		for r, i := range ms {
			out[i] = byPerm[r]
		}
	}
}

// across returns the across-instance perturbation of the configuration:
// Conditional with c.Conditional, else AcrossInstances under the length
// rule.
func (c TIME) across() Perturbation {
	if c.Conditional {
		return Conditional{}
	}
	return AcrossInstances{Lengths: c.LengthRule}
}

// conditionalTestName is the Explanation.Test of a conditional TIME run.
const conditionalTestName = "conditional"

// conditionalWarnings warns when the regression of a feature on the others
// has many regressors for the instances: with p = 3(D − 1) regressors and M
// instances, least squares absorbs about a fraction p/M of a feature's own
// variation into its fitted values even when the others carry nothing
// about it, so a draw keeps that part of the instance's own value and the
// tests lose power (they stay valid: the draws are closer to the data, not
// further). It warns above p/M = 0.1.
func (c TIME) conditionalWarnings(data *tempora.Dataset) []string {
	if !c.Conditional {
		return nil
	}
	p := (2*conditionalLags + 1) * (data.X.D - 1)
	if r := float64(p) / float64(data.X.M); r > 0.1 {
		return []string{fmt.Sprintf("conditional tests: each feature is regressed on %d values of the other features with %d instances, so its fit absorbs about %.0f%% of its own variation and the tests lose power; more instances or a hierarchy of groups help",
			p, data.X.M, 100*min(r, 1))}
	}
	return nil
}
