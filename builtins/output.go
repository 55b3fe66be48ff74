package builtins

import (
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/method"
)

// The output parameter of the baselines: for a model with several outputs
// (tempora.Outputs), the output a method explains, by index or name
// (baselines.ParseOutput), or empty for the whole model. The methods that
// score a loss (SAGE, PERM) then score the whole model's loss and give each
// output's cells from the same model calls; those that explain
// predictions (LIME, OCC, TimeSHAP) explain every output, their cells the
// mean of the outputs' cells. TIME always explains the whole model and
// every output (explain.TIME), so it has no output parameter.
var outputParam = method.Spec[string]{Name: "output",
	Doc: "output explained, by index or name (empty: the whole model, with each output's cells too)"}

// outputOf returns the output chosen in c's values, resolved against c's
// data.
func outputOf(c method.Config) (explain.Output, error) {
	return baselines.ParseOutput(c.Data, outputParam.Get(c.Values))
}
