package cli_test

import (
	"context"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/cli"
	"github.com/tempora-dev/tempora/method"
)

// Noop is a stand-in for a researcher's explainer.
type Noop struct{}

func (Noop) Explain(ctx context.Context, m tempora.Model, data *tempora.Dataset) (*tempora.Explanation, error) {
	if err := data.Validate(1); err != nil {
		return nil, err
	}
	e := tempora.NewExplanation("noop", data)
	method.FeatureScores(e)
	return e, nil
}

// A researcher's whole main: the tempora command line with one more
// method. "prog explain -method noop", "prog run -methods TIME,noop",
// merge, report, evaluate and export (whose jobs run prog) all know it;
// examples/newmethod is a complete program.
func ExampleMain() {
	cli.Main(method.Method{
		Name: "noop",
		Doc:  "scores nothing",
		New:  func(method.Config) (tempora.Explainer, error) { return Noop{}, nil },
	})
}
