package experiments

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/metrics"
	"github.com/tempora-dev/tempora/synth"
)

// The numbers docs/benchmarks.md quotes about models with several outputs
// ("Models with several outputs") are checked here: those of the
// committed quick report against its table (TestDocOutputs), the others
// by the tests that measure them, when they run at their default size
// (docStates).

// benchmarksDoc is the page of benchmark results.
const benchmarksDoc = "../docs/benchmarks.md"

// docStates fails t unless docs/benchmarks.md states text (white space
// collapsed).
func docStates(t *testing.T, text string) {
	t.Helper()
	b, err := os.ReadFile(benchmarksDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Join(strings.Fields(string(b)), " ")
	if !strings.Contains(doc, strings.Join(strings.Fields(text), " ")) {
		t.Errorf("docs/benchmarks.md does not state %q (what the test measured)", text)
	}
}

// outputsDocMetrics are the columns of the suite's table the page quotes
// per setting, with their names there; a column a setting lacks (lags of
// classes, the causal check of horizons) is left out.
var outputsDocMetrics = []struct{ name, label string }{
	{metrics.OutputFeaturePower, "output power"}, {metrics.OutputFeatureFDR, "output FDR"},
	{metrics.OutputExactWindow, "exact windows"}, {metrics.OutputExactLag, "exact lags"},
	{metrics.CausalAccuracy, "causal check right"},
}

// TestDocOutputs checks the list of TIME's per-output metrics at quick
// scale that docs/benchmarks.md quotes against the committed report's
// table (results/reference/outputs/quick/tables/suite-outputs.md): one
// line per setting, the mean over models of each metric of
// outputsDocMetrics.
func TestDocOutputs(t *testing.T) {
	b, err := os.ReadFile("../results/reference/outputs/quick/tables/suite-outputs.md")
	if err != nil {
		t.Fatal(err)
	}
	var head []string
	var lines []string
	for _, row := range strings.Split(string(b), "\n") {
		cells := strings.Split(strings.Trim(row, "| "), " | ")
		switch {
		case strings.HasPrefix(row, "| Setting |"):
			head = cells
		case strings.HasPrefix(row, "| world="):
			setting := map[string]string{}
			for _, kv := range strings.Split(cells[0], ",") {
				k, v, _ := strings.Cut(kv, "=")
				setting[k] = v
			}
			noise := "no noise weights"
			if setting["noise-weights"] != "0" {
				noise = "noise weights " + setting["noise-weights"]
			}
			var parts []string
			for _, m := range outputsDocMetrics {
				col := -1
				for c, h := range head {
					if h == m.name {
						col = c
					}
				}
				if col < 0 || cells[col] == "—" {
					continue
				}
				mean, _, _ := strings.Cut(cells[col], " ")
				parts = append(parts, m.label+" "+mean)
			}
			lines = append(lines, fmt.Sprintf("- %s, %s: %s", setting["world"], noise, strings.Join(parts, ", ")))
		}
	}
	// The worlds as the page describes them.
	cfg := map[string]synth.OutputsConfig{}
	for _, w := range outputsWorlds {
		cfg[w.name] = w.cfg
	}
	c, h, st := cfg["classes"], cfg["horizons"], cfg["steps"]
	docStates(t, fmt.Sprintf("%d classes of a nested dichotomy whose %d split nodes", c.Outputs, c.Outputs-1))
	docStates(t, fmt.Sprintf("%d forecast horizons, each reading %d relevant features over windows of its own (%d of them read by some horizons only)", h.Outputs, h.Relevant, h.Partial))
	docStates(t, fmt.Sprintf("reading %d features at fixed lags, one of them observed every %d steps", st.Relevant, st.Period))
	docStates(t, fmt.Sprintf("with and without noise weights (SD %s on every", outputsAxes[1].values[1]))
	if len(lines) != 8 {
		t.Fatalf("the table has %d settings, want 8", len(lines))
	}
	for i, l := range lines {
		end := ";"
		if i == len(lines)-1 {
			end = "."
		}
		docStates(t, l+end)
	}
}
