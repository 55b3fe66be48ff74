package builtins

import (
	"context"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

var _ resident.Explainer = (*permRun)(nil)

// ExplainHeld implements resident.Explainer: PERM's run with the held data
// capability of m (baselines.PERM.AnalyzeHeld), kept for PERM-f like
// Explain's.
func (p *permRun) ExplainHeld(ctx context.Context, m tempora.Model, held resident.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	r, err := p.cfg.AnalyzeHeld(ctx, m, held, data)
	if err != nil {
		return nil, err
	}
	p.res = r
	return r.Explanation(false), nil
}
