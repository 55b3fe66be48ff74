package baselines

import (
	"context"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
)

// The baselines with per-instance attributions are LocalExplainers: their
// ExplainLocal is their Attribute's explanation and attributions.
var (
	_ method.LocalExplainer = Occlusion{}
	_ method.LocalExplainer = TimeSHAP{}
	_ method.LocalExplainer = LIME{}
)

// ExplainLocal returns Attribute's explanation and per-instance
// attributions (OcclusionResult.Local).
func (c Occlusion) ExplainLocal(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, *tempora.Tensor, error) {
	r, err := c.Attribute(ctx, m, data)
	if err != nil {
		return nil, nil, err
	}
	return r.Explanation, r.Local, nil
}

// ExplainLocal returns Attribute's explanation and per-instance
// attributions (TimeSHAPResult.Local).
func (c TimeSHAP) ExplainLocal(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, *tempora.Tensor, error) {
	r, err := c.Attribute(ctx, m, data)
	if err != nil {
		return nil, nil, err
	}
	return r.Explanation, r.Local, nil
}

// ExplainLocal returns Attribute's explanation and per-instance
// attributions (LIMEResult.Local).
func (c LIME) ExplainLocal(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, *tempora.Tensor, error) {
	r, err := c.Attribute(ctx, m, data)
	if err != nil {
		return nil, nil, err
	}
	return r.Explanation, r.Local, nil
}
