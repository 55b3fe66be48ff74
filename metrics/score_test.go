package metrics

import (
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/record"
)

// TestScoreCountsImportantFeatures checks that the feature metrics of a
// method with tests count every feature it marks important, with or
// without cells: feature 1 is a false discovery that claims no cell (its
// window was not significant), and the feature FDR is that of the
// important flags, 1/2, not that of the cells, 0.
func TestScoreCountsImportantFeatures(t *testing.T) {
	data := &tempora.Dataset{X: tempora.NewTensor(1, 3, 4)}
	e := tempora.NewExplanation("TIME", data)
	e.Features[0].Important, e.Features[1].Important = true, true
	e.Cells[0*4+1], e.Cells[0*4+2] = 0.5, 0.5
	tr := &record.Truth{Relevant: []bool{true, false, false}, Windows: make([]tempora.Window, 3)}
	tr.Windows[0] = tempora.Window{Start: 1, End: 2}
	get := func(rec *record.Record, name string) float64 {
		for _, m := range rec.Metrics {
			if m.Name == name {
				return m.Value
			}
		}
		t.Fatalf("no metric %s", name)
		return 0
	}
	rec, err := Score(tr, e, method.AllNonZero, true)
	if err != nil {
		t.Fatal(err)
	}
	if p, f := get(rec, "feature-power-all"), get(rec, "feature-fdr-all"); p != 1 || f != 0.5 {
		t.Errorf("with tests: feature power %v, FDR %v; want 1 and 0.5 (the important flags)", p, f)
	}
	rec, err = Score(tr, e, method.AllNonZero, false)
	if err != nil {
		t.Fatal(err)
	}
	if f := get(rec, "feature-fdr-all"); f != 0 {
		t.Errorf("a method without tests: feature FDR %v, want 0 (its cells)", f)
	}
}
