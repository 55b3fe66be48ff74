package explain

import (
	"context"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

var _ resident.Explainer = TIME{}

// Explain runs TIME on model m and data: ExplainHeld without a held data
// capability. Its steps, errors and handling of missing values are
// described at explain (time.go) and in the package documentation.
func (c TIME) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	return c.ExplainHeld(ctx, m, nil, data)
}

// ExplainHeld is Explain with held, the held data capability of m (nil:
// none), passed to TIME's engine (Engine.Hold): the draws then go to held as
// blocks of the data, with the same explanation; only the accounting's
// model calls differ. m answers every other call (the baseline
// predictions, and the draws when the workers' copies of the data do not
// fit the memory budget).
func (c TIME) ExplainHeld(ctx context.Context, m tempora.Model, held resident.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	return c.explain(ctx, m, held, data)
}
