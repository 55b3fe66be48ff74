package results

import (
	"bytes"
	"testing"

	"github.com/tempora-dev/tempora/record"
)

// TestCorrelatedFigure draws the correlated suite's figure from groups of
// every setting, and refuses groups without the suite's settings.
func TestCorrelatedFigure(t *testing.T) {
	var groups []Group
	for _, rho := range []string{"0", "0.9"} {
		for _, truth := range []string{"model", "data"} {
			for _, cond := range []string{"false", "true"} {
				for _, m := range []string{"TIME", "TIME-n", "PERM-f", "SAGE-m"} {
					groups = append(groups, Group{Suite: CorrelatedSuite, Method: m,
						Params:  []record.Param{{Key: "rho", Value: rho}, {Key: "box", Value: "spread"}, {Key: "truth", Value: truth}, {Key: "conditional", Value: cond}},
						Metrics: []MetricSummary{{Name: "feature-power", Summary: Summary{Mean: 1, N: 2}}, {Name: "feature-fdr", Summary: Summary{Mean: 0.5, N: 2}}}})
				}
			}
		}
	}
	f, err := CorrelatedFigure(groups, "spread")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f.Encode(&b, "svg"); err != nil || !bytes.Contains(b.Bytes(), []byte("TIME conditional")) {
		t.Errorf("figure: %v, legend without TIME conditional", err)
	}
	if _, err := CorrelatedFigure(groups, "A"); err == nil {
		t.Error("no error for a box without settings")
	}
}
