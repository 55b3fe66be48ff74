package baselines

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/internal/fdr"
	"github.com/tempora-dev/tempora/resident"
)

// Defaults of the PERM configuration.
const (
	// DefaultPERMPermutations is the number of permutations per cell in
	// fixed mode, as the paper ran it.
	DefaultPERMPermutations = 50
	// DefaultPERMAlpha is the Benjamini–Hochberg level of PERM-f.
	DefaultPERMAlpha = 0.1
)

// PERM is permutation feature importance (Breiman 2001; Fisher et al.
// 2019) on the unrolled table, run with TIME's permutation machinery
// (package explain): every cell (feature j, timestep t) gets its own
// across-instance permutation test, and its score is the effect size, the
// mean perturbed loss minus the baseline loss. Its p-value is the empirical
// p-value of the test; Benjamini–Hochberg at Alpha over all D·L cells marks
// the significant cells.
//
// With Filter set (PERM-f), a cell keeps its score only if it is
// significant; the others score 0.
//
// The cells form one BH family, tested as Tests says (explain.Tests.Family).
// The zero value runs Besag and Clifford's sequential tests
// (explain.SequentialStop: a cell's test stops as soon as it can no longer
// be significant, or after explain.StopHits draws not worse than the
// baseline) with the cap explain.MinPermutations(D·L, Alpha), the smallest
// at which a single cell can pass BH over the D·L cells (1999 for 200
// cells at α = 0.1). A null cell then costs a few dozen draws, while a
// significant one runs to the cap. explain.AnytimeTests stops every cell
// once its BH decision in the family is settled. The paper's PERM is
// explain.FixedTests with Permutations 0: every cell makes exactly
// DefaultPERMPermutations (50) draws. Its smallest p-value is 1/(P+1), so BH can reject anything only
// when at least m/((P+1)·α) of the m cells reach it, about 40 of 200 cells
// at P = 50, which is why the paper's PERM-f has little power on wide
// tables; PERM-f's explanation then carries a warning.
//
// PERM takes data with missing values exactly when and as TIME's engine
// does (docs/decisions.md, decisions 19 and 21): a cell's permutation
// follows TIME's length rule, and a padding cell, which no permutation
// moves, scores 0.
//
// Explain returns the scores only; Analyze returns a PermResult with the
// per-cell p-values, BH-adjusted p-values and rejections, from which both
// PERM and PERM-f explanations can be built without a second run.
//
// The test of cell (j, t) draws its permutations from the stream keyed
// "perm/j_t" (see explain.Test), so the result does not depend on Workers.
type PERM struct {
	// Permutations bounds the permutations per cell, as
	// explain.TIME.Permutations does: the nominal cap of the sequential
	// tests, zero meaning explain.MinPermutations(D·L, Alpha), or with
	// explain.FixedTests the number of permutations P, zero meaning
	// DefaultPERMPermutations.
	Permutations int
	// Tests chooses the tests, as explain.TIME.Tests does; the zero value
	// is explain.BesagCliffordTests, the default of both PERM and TIME.
	Tests explain.Tests
	// Alpha is the BH level; zero means DefaultPERMAlpha.
	Alpha float64
	// Filter selects PERM-f.
	Filter bool
	// Loss is the per-instance loss; nil means tempora.LossFor(data.Task).
	Loss tempora.Loss
	// Seed is the run seed of the permutation streams.
	Seed uint64
	// Workers is the number of goroutines; zero means GOMAXPROCS.
	Workers int
	// Output is the loss the cells' tests score (explain.Test.Output):
	// the whole model's (explain.WholeModel, the zero value) or one
	// output's (explain.OutputOf) of a model with several outputs. For
	// the whole model of such a model, every cell is also tested on each
	// output's loss with the same key, so on the same draws (one draw
	// gives every output's loss: a draw is made again only for a test
	// that runs longer than the cell's others), each output's cells a
	// family of their own; the explanation's Outputs holds their effect
	// sizes (PermResult.Outputs their tests).
	Output explain.Output
}

var _ tempora.Explainer = PERM{}

// PermResult holds the outcome of PERM's D·L cell tests. Every slice has
// D·L entries, entry j·L+t for feature j at timestep t.
type PermResult struct {
	// D and L are the numbers of features and timesteps.
	D, L int
	// Names are the feature names of the data (nil for the default names).
	Names []string
	// Baseline is the mean loss on the unperturbed data.
	Baseline float64
	// Scores holds the effect sizes, PValues the empirical p-values and
	// PAdjusted their BH adjustment over all cells.
	Scores, PValues, PAdjusted []float64
	// Significant reports BH rejection at Alpha.
	Significant []bool
	// Draws holds the permutations each cell's test used.
	Draws []int
	// Alpha is the BH level, Permutations the cap of every cell's test (the
	// draws of a fixed test) and Tests the tests.
	Alpha        float64
	Permutations int
	Tests        explain.Tests
	// Accounting is the cost of the run.
	Accounting tempora.Accounting
	// Warnings are the run's warnings (the p-value floor of fixed tests);
	// they concern the significance of cells, so only PERM-f's explanation
	// carries them.
	Warnings []string
	// OutputName names the output the cells were tested on when it was
	// one of a model's several (empty: the whole model). For the whole
	// model of a model with several outputs, ModelOutputs describes them
	// and Outputs holds each output's cell tests (Outputs[k] of output k,
	// with Baseline its mean loss, no accounting and no warnings); both
	// are nil otherwise.
	ModelOutputs *tempora.Outputs
	OutputName   string
	Outputs      []*PermResult
}

// Explain implements tempora.Explainer. The method name is "PERM", or
// "PERM-f" with Filter.
func (c PERM) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	r, err := c.Analyze(ctx, m, data)
	if err != nil {
		return nil, err
	}
	return r.Explanation(c.Filter), nil
}

// AnalyzeHeld is Analyze with held, the held data capability of m (nil:
// none), passed to the engine (explain.Engine.Hold): the same result, the
// draws sent to held as blocks of the data.
func (c PERM) AnalyzeHeld(ctx context.Context, m tempora.Model, held resident.Model, data *tempora.Dataset) (*PermResult, error) {
	start := time.Now()
	if data == nil {
		return nil, fmt.Errorf("baselines: PERM: nil dataset")
	}
	tests, perms, stop, alpha, err := c.resolve(data.X)
	if err != nil {
		return nil, err
	}
	// NewEngine validates the data (at least 2 instances) and the model.
	eng, err := explain.NewEngine(m, data, c.Loss, c.Seed, c.Workers)
	if err != nil {
		return nil, fmt.Errorf("baselines: PERM: %w", err)
	}
	sel, err := selectOutput("PERM", c.Output, data)
	if err != nil {
		return nil, err
	}
	eng.Hold(held)
	d, l := data.X.D, data.X.L
	// The family of the explained loss, then, for the whole model of a
	// model with several outputs, one per output on the same keys.
	outs := []explain.Output{sel.out}
	if sel.perOutput() {
		for k := range sel.k {
			outs = append(outs, explain.OutputOf(k))
		}
	}
	fams := make([]explain.Family, len(outs))
	for f, o := range outs {
		fams[f] = explain.Family{Alpha: alpha, Tests: permCells(d, l, perms, stop, o)}
	}
	all, err := eng.RunFamilies(ctx, fams)
	if err != nil {
		return nil, fmt.Errorf("baselines: PERM: %w", err)
	}
	count := tempora.DrawCount{Test: "cell"}
	r := newPermResult(data, eng.OutputLoss(sel.out), alpha, perms, tests, all[0], &count)
	r.OutputName = sel.name
	if sel.perOutput() {
		r.ModelOutputs = data.Outputs
		for k, res := range all[1:] {
			r.Outputs = append(r.Outputs, newPermResult(data, eng.OutputLoss(explain.OutputOf(k)), alpha, perms, tests, res, &count))
		}
	}
	if m := d * l; 1/float64(perms+1) > alpha/float64(m)*(1+1e-12) {
		need := int(math.Ceil(float64(m)/(alpha*float64(perms+1)) - 1e-9))
		r.Warnings = append(r.Warnings, fmt.Sprintf("the family of %d cells: with %d permutations the smallest p-value 1/%d = %.3g exceeds alpha/m = %.3g, so BH rejects none of them unless at least %d reach it; a single discovery needs at least %d permutations",
			m, perms, perms+1, 1/float64(perms+1), alpha/float64(m), min(need, m+1), explain.MinPermutations(m, alpha)))
	}
	r.Accounting = eng.Accounting()
	r.Accounting.Runtime = time.Since(start)
	r.Accounting.Draws = []tempora.DrawCount{count}
	return r, nil
}

// permCells returns the tests of the D·L cells on output o: cell (j, t)
// keyed "perm/j_t", whatever the output, so that the tests of one cell
// share their draws.
func permCells(d, l, perms int, stop explain.Stop, o explain.Output) []explain.Test {
	cells := make([]explain.Test, d*l)
	for j := range d {
		for t := range l {
			cells[j*l+t] = explain.Test{
				Features:     []int{j},
				Window:       tempora.Window{Start: t, End: t},
				Permutations: perms,
				Key:          "perm/" + strconv.Itoa(j) + "_" + strconv.Itoa(t),
				Stop:         stop,
				Output:       o,
			}
		}
	}
	return cells
}

// newPermResult returns the result of one family of cell tests res of
// data, with baseline loss base and BH at alpha, adding the tests' draws
// to count (each key's draws once: explain.TestResult.New and Owner).
func newPermResult(data *tempora.Dataset, base, alpha float64, perms int, tests explain.Tests, res []explain.TestResult, count *tempora.DrawCount) *PermResult {
	d, l := data.X.D, data.X.L
	r := &PermResult{
		D: d, L: l, Baseline: base, Alpha: alpha, Permutations: perms, Tests: tests,
		Scores: make([]float64, d*l), PValues: make([]float64, d*l), PAdjusted: make([]float64, d*l),
		Significant: make([]bool, d*l), Draws: make([]int, d*l),
	}
	if data.FeatureNames != nil {
		r.Names = append([]string(nil), data.FeatureNames...)
	}
	for k, t := range res {
		r.Scores[k], r.PValues[k], r.Draws[k] = t.Score, t.PValue, t.Draws
		count.Tests++
		count.Draws += int64(t.New)
		if t.Owner {
			count.MaxDraws += int64(t.Max)
		}
	}
	fdr.BH(r.Significant, r.PAdjusted, r.PValues, alpha)
	return r
}

// resolve checks the configuration and resolves its defaults for data of
// x's shape: the tests, the cap of every cell's test (the draws of a fixed
// one) and its stopping rule, and the BH level. Analyze and EstimateEvals
// share it, so each check has one owner; the data itself is checked by
// TIME's engine (explain.NewEngine).
func (c PERM) resolve(x *tempora.Tensor) (tests explain.Tests, perms int, stop explain.Stop, alpha float64, err error) {
	tests, perms, alpha = c.Tests, c.Permutations, c.Alpha
	if tests == "" {
		tests = explain.BesagCliffordTests
	}
	if tests, err = explain.ParseTests(string(tests)); err != nil {
		return "", 0, nil, 0, fmt.Errorf("baselines: PERM: %w", err)
	}
	if perms < 0 {
		return "", 0, nil, 0, fmt.Errorf("baselines: PERM Permutations is %d, want at least 1 (or 0 for the default)", perms)
	}
	switch {
	case alpha == 0:
		alpha = DefaultPERMAlpha
	case !(alpha > 0 && alpha <= 1):
		return "", 0, nil, 0, fmt.Errorf("baselines: PERM Alpha is %v, want a level in (0, 1] (or 0 for %v)", alpha, DefaultPERMAlpha)
	}
	if err := checkWorkers("PERM", c.Workers); err != nil {
		return "", 0, nil, 0, err
	}
	m := 1
	if x != nil {
		m = x.D * x.L
	}
	perms, stop = tests.Family(m, alpha, perms)
	return tests, perms, stop, alpha, nil
}

// Explanation builds the PERM explanation (filter false: every cell's
// effect size) or the PERM-f explanation (filter true: significant cells
// keep their effect size, the others score 0). The p-values stay in r; the
// explanation's feature p-values are NaN, since PERM tests cells, not
// features. Each call returns a fresh explanation.
func (r *PermResult) Explanation(filter bool) *tempora.Explanation {
	method := "PERM"
	if filter {
		method = "PERM-f"
	}
	data := &tempora.Dataset{X: &tempora.Tensor{D: r.D, L: r.L}, FeatureNames: r.Names}
	if r.Outputs != nil {
		data.Outputs = r.ModelOutputs
	}
	e := tempora.NewExplanation(method, data)
	r.cells(e.Cells, filter)
	sel := outputs{name: r.OutputName}
	var cells [][]float64
	for _, o := range r.Outputs {
		c := make([]float64, r.D*r.L)
		o.cells(c, filter)
		cells = append(cells, c)
	}
	sel.fill(e, cells)
	e.Accounting = r.Accounting
	e.Accounting.Draws = append([]tempora.DrawCount(nil), r.Accounting.Draws...)
	if filter {
		e.Warnings = append([]string(nil), r.Warnings...)
	}
	return e
}

// cells writes r's cell scores into dst: every cell's effect size, or
// with filter only the significant cells' (the others 0).
func (r *PermResult) cells(dst []float64, filter bool) {
	for k, s := range r.Scores {
		if !filter || r.Significant[k] {
			dst[k] = s
		}
	}
}

// PValue returns the p-value of cell (j, t).
func (r *PermResult) PValue(j, t int) float64 { return r.PValues[j*r.L+t] }

// Count returns the number of significant cells.
func (r *PermResult) Count() int {
	n := 0
	for _, s := range r.Significant {
		if s {
			n++
		}
	}
	return n
}
