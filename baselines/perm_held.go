package baselines

import (
	"context"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

var _ resident.Explainer = PERM{}

// Analyze runs one permutation test per cell and the BH procedure over all
// cells: AnalyzeHeld without a held data capability.
func (c PERM) Analyze(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*PermResult, error) {
	return c.AnalyzeHeld(ctx, m, nil, data)
}

// ExplainHeld implements resident.Explainer: Explain with held, the held
// data capability of m (see AnalyzeHeld).
func (c PERM) ExplainHeld(ctx context.Context, m tempora.Model, held resident.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	r, err := c.AnalyzeHeld(ctx, m, held, data)
	if err != nil {
		return nil, err
	}
	return r.Explanation(c.Filter), nil
}
