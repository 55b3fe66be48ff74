package metrics

import (
	"math"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/record"
)

// TestTIMEMetricsWindowList checks that a feature's list of windows counts
// as the union of its windows: true window [2, 7], found windows [2, 3]
// and [6, 9] (lead window [2, 3]) select 2, 3, 6, 7, 8, 9, so the timestep
// power is 4/6 and the FDR 2/6; the lead window alone would give 2/6 and 0.
func TestTIMEMetricsWindowList(t *testing.T) {
	tr := &record.Truth{Relevant: []bool{true}, Windows: []tempora.Window{{Start: 2, End: 7}}}
	f := tempora.NewFeatureResult(0, "a")
	f.Tested, f.Important = true, true
	f.Window = &tempora.Window{Start: 2, End: 3}
	f.Windows = []tempora.WindowResult{{Window: tempora.Window{Start: 2, End: 3}}, {Window: tempora.Window{Start: 6, End: 9}}}
	ms, err := TIMEMetrics(tr, []tempora.FeatureResult{f}, 10)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, m := range ms {
		got[m.Name] = m.Value
	}
	if p, fdr := got["avg-window-power"], got["avg-window-fdr"]; math.Abs(p-4.0/6) > 1e-12 || math.Abs(fdr-2.0/6) > 1e-12 {
		t.Errorf("avg-window power %v, FDR %v; want 4/6 and 2/6", p, fdr)
	}
}
