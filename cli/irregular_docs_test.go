package cli

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/synth"
)

// irregularTable returns the TIME rows of the irregular suite's committed
// report, keyed by setting ("missing-rate=0,length-spread=1,…"), each a
// map from metric to its mean as the table prints it.
func irregularTable(t *testing.T) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile("../results/reference/irregular/quick/tables/suite-irregular.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := markdownTable(t, "suite-irregular.md", string(b), "| Setting |")
	out := map[string]map[string]string{}
	for _, r := range rows[2:] {
		if r[1] != "TIME" {
			continue
		}
		m := map[string]string{}
		for k, h := range rows[0] {
			mean, _, _ := strings.Cut(r[k], " ")
			m[h] = mean
		}
		out[r[0]] = m
	}
	return out
}

// TestDocIrregular checks the numbers docs/benchmarks.md quotes from the
// irregular suite's committed report: for each missing rate, TIME's mean
// over the four length spreads × alignments and their range, and the
// padding comparison's FDRs with NaN and with zeros.
func TestDocIrregular(t *testing.T) {
	tab := irregularTable(t)
	readme := readDoc(t, benchmarksPath)
	f := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("table value %q: %v", s, err)
		}
		return v
	}
	for _, rate := range []string{"0", "0.2", "0.5"} {
		var parts []string
		for _, metric := range []struct{ name, label string }{
			{"feature-power", "feature power"}, {"feature-fdr", "feature FDR"},
			{"timestep-power", "timestep power"}, {"timestep-fdr", "timestep FDR"},
		} {
			var vals []float64
			for _, spread := range []string{"1", "2"} {
				for _, align := range []string{"start", "end"} {
					key := fmt.Sprintf("missing-rate=%s,length-spread=%s,alignment=%s,full-windows=false,padding=nan", rate, spread, align)
					row, ok := tab[key]
					if !ok {
						t.Fatalf("the irregular report has no TIME row %s", key)
					}
					vals = append(vals, f(row[metric.name]))
				}
			}
			mean := 0.0
			for _, v := range vals {
				mean += v / float64(len(vals))
			}
			parts = append(parts, fmt.Sprintf("%s %.3f (%.3f–%.3f)", metric.label, mean, slices.Min(vals), slices.Max(vals)))
		}
		want := "missing rate " + rate + ": " + strings.Join(parts, ", ")
		if !strings.Contains(readme, want) {
			t.Errorf("docs/benchmarks.md does not state %q", want)
		}
	}
	if want := fmt.Sprintf("logistic in their standardised value with slope %g", synth.MNARSlope); !strings.Contains(readme, want) {
		t.Errorf("docs/benchmarks.md does not state %q", want)
	}
	lo, hi := 1.0, 0.0
	for k, row := range tab {
		if strings.Contains(k, "full-windows=false") {
			lo, hi = min(lo, f(row["avg-window-power"])), max(hi, f(row["avg-window-fdr"]))
		}
	}
	if want := fmt.Sprintf("average-window power at least %.3f and FDR at most %.3f in every setting of the sweep", lo, hi); !strings.Contains(readme, want) {
		t.Errorf("docs/benchmarks.md does not state %q", want)
	}
	for _, align := range []string{"start", "end"} {
		key := "missing-rate=0,length-spread=2,alignment=" + align + ",full-windows=true,padding="
		nan, zeros := tab[key+"nan"], tab[key+"zeros"]
		if nan == nil || zeros == nil {
			t.Fatalf("the irregular report has no padding comparison for alignment %s", align)
		}
		var parts []string
		for _, metric := range []struct{ name, label string }{
			{"feature-fdr", "feature FDR"}, {"timestep-fdr", "timestep FDR"},
			{"ordering-fdr", "ordering FDR"}, {"window-ordering-fdr", "window-ordering FDR"},
		} {
			parts = append(parts, fmt.Sprintf("%s %s → %s", metric.label, nan[metric.name], zeros[metric.name]))
		}
		want := "alignment " + align + ": " + strings.Join(parts, ", ")
		if !strings.Contains(readme, want) {
			t.Errorf("docs/benchmarks.md does not state %q", want)
		}
	}
}
