package builtins

import (
	"fmt"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/method"
)

// SAGE's budgets at quick scale. The paper let SAGE run for up to 72 hours
// per model; here every SAGE method is capped at
// baselines.SAGEMaxPermutations permutations by default
// (docs/decisions.md, decision 12).
const (
	// QuickSAGEMaxPermutations caps SAGE (marginal imputation, by far the
	// most expensive) at quick scale, where with QuickSAGEBackground it
	// converges within a few seconds per model (table1 and table-s2 at 200
	// instances); SAGE-m and SAGE-z keep baselines.SAGEMaxPermutations,
	// which they need on small problems.
	QuickSAGEMaxPermutations = 1 << 15
	// QuickSAGEBackground is SAGE's marginal background at quick scale (the
	// first rows of the data; the paper's baselines.DefaultSAGEBackground
	// otherwise), which makes each permutation four times cheaper.
	QuickSAGEBackground = 32
)

// The parameters of the SAGE methods: SAGE proper (marginal imputation)
// has a background and a smaller cap at quick scale.
var (
	sageBackground = method.Spec[int]{Name: "background",
		Doc:     fmt.Sprintf("background rows of the marginal imputer (0: min(%d, instances))", baselines.DefaultSAGEBackground),
		Default: 0, Quick: new(QuickSAGEBackground), Range: "[0, inf)"}
	sageMaxPermutations = method.Spec[int]{Name: "max-permutations",
		Doc:     "cap on sampled permutations; a capped run is marked incomplete (0: none)",
		Default: baselines.SAGEMaxPermutations, Range: "[0, inf)"}
	sageMarginalMaxPermutations = withQuick(sageMaxPermutations, QuickSAGEMaxPermutations)
	sageMaxTime                 = method.Spec[time.Duration]{Name: "max-time",
		Doc:   "wall-time budget: no permutation starts after it, and a run stopped by it is marked incomplete and depends on the machine (0: none)",
		Range: "[0, inf)"}
)

// withQuick returns s with the quick-scale default q.
func withQuick[T method.Value](s method.Spec[T], q T) method.Spec[T] {
	s.Quick = &q
	return s
}

// sageDocs are the one-line descriptions of the SAGE methods.
var sageDocs = map[baselines.Imputer]string{
	baselines.Marginal: "Shapley additive global importance per cell, marginal imputation over a background",
	baselines.Mean:     "SAGE with mean imputation (of held-out cells, by the mean of observed values)",
	baselines.Zero:     "SAGE with zero imputation (of held-out cells; missing values reach the model as NaN)",
}

// sageMethod is SAGE with the given imputer (baselines.SAGE), named by the
// imputer: SAGE, SAGE-m or SAGE-z. On data with missing values a held-out
// cell takes the imputer's value and a row's padding stays its own
// (docs/decisions.md, decision 21).
func sageMethod(imp baselines.Imputer) method.Method {
	maxPerms := sageMaxPermutations
	params := method.Params(maxPerms, sageMaxTime, outputParam)
	if imp == baselines.Marginal {
		maxPerms = sageMarginalMaxPermutations
		params = method.Params(sageBackground, maxPerms, sageMaxTime, outputParam)
	}
	return method.Method{
		Name:   imp.String(),
		Doc:    sageDocs[imp],
		Params: params,
		New: func(c method.Config) (tempora.Explainer, error) {
			out, err := outputOf(c)
			if err != nil {
				return nil, err
			}
			s := baselines.SAGE{Imputer: imp, MaxPermutations: maxPerms.Get(c.Values),
				MaxTime: sageMaxTime.Get(c.Values), Seed: c.Seed, Workers: c.Workers, Output: out}
			if imp == baselines.Marginal {
				s.Background = sageBackground.Get(c.Values)
			}
			return s, nil
		},
	}
}
