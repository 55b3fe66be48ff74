package experiments

import (
	"context"
	"math"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/metrics"
)

// TestWindowsSuiteTruth checks the windows suite's settings and that its
// problems' truth lists the windows of synth.GenerateWindows, with their
// hull as the window, and that the exact-window rate counts a true window
// only when reported exactly: the truth's own windows score 1, their hull
// scores 0.
func TestWindowsSuiteTruth(t *testing.T) {
	ss, err := windowsSuite.Settings(true, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != len(windowsTrue)*len(windowsScales)*len(windowsTIME) {
		t.Fatalf("%d settings, want %d", len(ss), len(windowsTrue)*len(windowsScales)*len(windowsTIME))
	}
	spec := ss[2].Problem // true-windows=1, noise-weights=0.05
	w := spec.World.(windowsWorld)
	w.Windows = 2
	spec.World = w
	prob, err := synthesise(context.Background(), spec, 7)
	if err != nil {
		t.Fatal(err)
	}
	tr := prob.Truth
	l := spec.Timesteps
	if err := metrics.CheckTruth(tr, spec.Features, l); err != nil {
		t.Fatal(err)
	}
	exact := make([]tempora.FeatureResult, spec.Features)
	hull := make([]tempora.FeatureResult, spec.Features)
	for j := range exact {
		exact[j], hull[j] = tempora.NewFeatureResult(j, ""), tempora.NewFeatureResult(j, "")
		ws := tr.WindowLists[j]
		if tr.Relevant[j] != (len(ws) == 2) {
			t.Fatalf("feature %d: relevant %v with windows %v", j, tr.Relevant[j], ws)
		}
		if !tr.Relevant[j] {
			continue
		}
		if h := (tempora.Window{Start: ws[0].Start, End: ws[1].End}); tr.Windows[j] != h {
			t.Errorf("feature %d: window %v, want the hull %v", j, tr.Windows[j], h)
		}
		for s := range l {
			if tr.InWindow(j, s) != (ws[0].Contains(s) || ws[1].Contains(s)) {
				t.Errorf("feature %d: InWindow(%d) wrong for windows %v", j, s, ws)
			}
		}
		exact[j].Important, hull[j].Important = true, true
		for _, w := range ws {
			exact[j].Windows = append(exact[j].Windows, tempora.WindowResult{Window: w, Significant: true})
		}
		hull[j].Windows = []tempora.WindowResult{{Window: tr.Windows[j], Significant: true}}
	}
	for _, c := range []struct {
		name string
		fs   []tempora.FeatureResult
		want float64
	}{{"exact", exact, 1}, {"hull", hull, 0}} {
		m, err := metrics.ExactWindows(tr, c.fs, l)
		if err != nil {
			t.Fatal(err)
		}
		if m.Name != metrics.ExactWindowMetric || math.Abs(m.Value-c.want) > 0 {
			t.Errorf("%s: %v, want %s %v", c.name, m, metrics.ExactWindowMetric, c.want)
		}
	}
}
