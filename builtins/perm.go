package builtins

import (
	"context"
	"fmt"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/method"
)

// permAlpha is PERM's own alpha: the level of PERM-f's filter (TIME's alpha
// is its FDR level).
var permAlpha = method.Spec[float64]{Name: "alpha", Doc: "Benjamini–Hochberg level of PERM-f's filter",
	Default: baselines.DefaultPERMAlpha, Range: "(0, 1)"}

// permTests is PERM's choice of tests: its cells are one
// Benjamini–Hochberg family, by default tested with Besag and Clifford's
// sequential tests.
var permTests = method.Spec[string]{Name: "tests", Doc: testsDoc, Default: string(explain.BesagCliffordTests)}

// permMethod is PERM (baselines.PERM), with TIME's test parameters; it
// permutes missing values as TIME's across-instance tests do
// (docs/decisions.md, decision 21).
func permMethod() method.Method {
	return method.Method{
		Name:   "PERM",
		Doc:    "permutation importance of every feature-timestep cell (effect size of a permutation test per cell); missing values permuted as by TIME",
		Params: method.Params(permTests, permutations, permAlpha, outputParam, sequential),
		New: func(c method.Config) (tempora.Explainer, error) {
			tests, err := testsOf(c.Values, permTests, false)
			if err != nil {
				return nil, err
			}
			out, err := outputOf(c)
			if err != nil {
				return nil, err
			}
			return &permRun{cfg: baselines.PERM{Tests: tests, Permutations: permutations.Get(c.Values),
				Alpha: permAlpha.Get(c.Values), Seed: c.Seed, Workers: c.Workers, Output: out}}, nil
		},
	}
}

// permFMethod is PERM-f: PERM's run, keeping only the significant cells.
func permFMethod(permM *method.Method) method.Method {
	return method.Method{
		Name: "PERM-f", Doc: "PERM keeping only the cells significant under Benjamini–Hochberg",
		From: permM,
		Derive: func(ex tempora.Explainer, _ *tempora.Explanation) (*tempora.Explanation, error) {
			pr, ok := ex.(*permRun)
			if !ok || pr.res == nil {
				return nil, fmt.Errorf("PERM-f needs a finished PERM run")
			}
			return pr.res.Explanation(true), nil
		},
	}
}

// permRun runs PERM once and keeps its per-cell results, so that PERM-f is
// derived from the same run (and reports its runtime).
type permRun struct {
	cfg baselines.PERM
	res *baselines.PermResult
}

func (p *permRun) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	r, err := p.cfg.Analyze(ctx, m, data)
	if err != nil {
		return nil, err
	}
	p.res = r
	return r.Explanation(false), nil
}

// EstimateEvals implements method.Estimator with PERM's estimate.
func (p *permRun) EstimateEvals(data *tempora.Dataset) (int64, bool) {
	return p.cfg.EstimateEvals(data)
}
