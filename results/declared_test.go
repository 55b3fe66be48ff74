package results

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/record/report"
)

// Declarations like those of package experiments' suites, for suites the
// tests make up: results knows no suite.

// testBarMetrics are the bars' metrics of the padding-like figure.
var testBarMetrics = []report.Metric{
	{Name: "feature-fdr", Label: "feature FDR"}, {Name: "timestep-fdr", Label: "timestep FDR"},
	{Name: "feature-power", Label: "feature power"}, {Name: "timestep-power", Label: "timestep power"},
}

// paddedGroups returns groups of a sweep over missing-rate × length-spread
// × alignment (full-windows=false, padding=nan) and a comparison of two
// paddings (full-windows=true) for TIME and LIME, LIME refused wherever
// data has missing values.
func paddedGroups() []Group {
	var groups []Group
	add := func(rate, spread, align, full, pad string) {
		ps := []record.Param{{Key: "missing-rate", Value: rate}, {Key: "length-spread", Value: spread},
			{Key: "alignment", Value: align}, {Key: "full-windows", Value: full}, {Key: "padding", Value: pad}}
		fdr := 0.05
		if pad == "zeros" {
			fdr = 0.6
		}
		var ms []MetricSummary
		for _, m := range testBarMetrics {
			v := 0.95
			if strings.HasSuffix(m.Name, "-fdr") {
				v = fdr
			}
			ms = append(ms, MetricSummary{Name: m.Name, Summary: Summary{Mean: v, SD: 0.1, N: 3}})
		}
		groups = append(groups, Group{Suite: "padded", Method: "TIME", Params: ps, Models: []int{0, 1, 2}, Metrics: ms})
		lime := Group{Suite: "padded", Method: "LIME", Params: ps}
		if rate != "0" || spread != "1" {
			lime.Incomplete, lime.Refused, lime.Refusal = []int{0, 1, 2}, []int{0, 1, 2}, "LIME needs complete data"
		}
		groups = append(groups, lime)
	}
	for _, rate := range []string{"0", "0.2", "0.5"} {
		for _, spread := range []string{"1", "2"} {
			for _, align := range []string{"end", "start"} {
				add(rate, spread, align, "false", "nan")
			}
		}
	}
	for _, align := range []string{"end", "start"} {
		add("0", "2", align, "true", "nan")
		add("0", "2", align, "true", "zeros")
	}
	return groups
}

// paddedSweep draws method's lines against the missing rate, one per
// length spread and alignment.
func paddedSweep(method string) report.Sweep {
	return report.Sweep{
		Name: "padded-sweep", Heading: "padded: the sweep", X: "missing-rate", Title: "padded: " + method,
		Where:   []record.Param{{Key: "padding", Value: "nan"}, {Key: "full-windows", Value: "false"}},
		Lines:   []report.Line{{Label: "spread {length-spread}, {alignment}", Method: method}},
		Columns: []report.Column{{Title: "features", Power: "feature-power", FDR: "feature-fdr"}},
	}
}

// paddedBars compares method's metrics with either padding, one panel per
// alignment.
func paddedBars(method string) report.Bars {
	return report.Bars{
		Name: "padded-bars", Heading: "padded: the paddings", Title: "padded: " + method + " padded twice",
		Where:  []record.Param{{Key: "full-windows", Value: "true"}},
		Panels: []report.Panel{{Title: "alignment start", Where: []record.Param{{Key: "alignment", Value: "start"}}}, {Title: "alignment end", Where: []record.Param{{Key: "alignment", Value: "end"}}}},
		Bars: []report.Line{{Label: "NaN padding", Method: method, Where: []record.Param{{Key: "padding", Value: "nan"}}},
			{Label: "zero padding", Method: method, Where: []record.Param{{Key: "padding", Value: "zeros"}}}},
		Metrics: testBarMetrics,
	}
}

func svgOf(t *testing.T, f *Figure) string {
	t.Helper()
	var b bytes.Buffer
	if err := f.Encode(&b, "svg"); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestDeclaredSweepLines draws lines of one method split by a parameter
// (TIME marginal and conditional) beside other methods, one column per
// truth, and refuses a declaration that selects nothing.
func TestDeclaredSweepLines(t *testing.T) {
	var groups []Group
	for _, rho := range []string{"0", "0.9"} {
		for _, truth := range []string{"model", "data"} {
			for _, cond := range []string{"false", "true"} {
				for _, m := range []string{"TIME", "TIME-n", "PERM-f", "SAGE-m"} {
					groups = append(groups, Group{Suite: "corr", Method: m,
						Params:  []record.Param{{Key: "rho", Value: rho}, {Key: "box", Value: "spread"}, {Key: "truth", Value: truth}, {Key: "conditional", Value: cond}},
						Metrics: []MetricSummary{{Name: "feature-power", Summary: Summary{Mean: 1, N: 2}}, {Name: "feature-fdr", Summary: Summary{Mean: 0.5, N: 2}}}})
				}
			}
		}
	}
	marginal := []record.Param{{Key: "conditional", Value: "false"}}
	f := report.Sweep{Name: "corr-spread", X: "rho", Where: []record.Param{{Key: "box", Value: "spread"}},
		Lines: []report.Line{{Label: "TIME marginal", Method: "TIME", Where: marginal},
			{Label: "TIME conditional", Method: "TIME", Where: []record.Param{{Key: "conditional", Value: "true"}}},
			{Label: "PERM-f", Method: "PERM-f", Where: marginal}, {Label: "LIME", Method: "LIME"}},
		Columns: []report.Column{{Title: "model", Where: []record.Param{{Key: "truth", Value: "model"}}, Power: "feature-power", FDR: "feature-fdr"},
			{Title: "data", Where: []record.Param{{Key: "truth", Value: "data"}}, Power: "feature-power", FDR: "feature-fdr"}}}
	fig, err := DeclaredSweep(groups, "corr", f)
	if err != nil {
		t.Fatal(err)
	}
	// The default title lists the lines drawn; LIME has no records.
	if svg := svgOf(t, fig); !strings.Contains(svg, "corr: TIME marginal, TIME conditional, PERM-f power and FDR versus rho") {
		t.Errorf("figure without the default title naming its lines")
	}
	f.Where = []record.Param{{Key: "box", Value: "A"}}
	if _, err := DeclaredSweep(groups, "corr", f); err == nil {
		t.Error("no error for a declaration that selects no setting")
	}
	// Without the line's split, two settings give TIME marginal its power
	// at one rho.
	f.Where, f.Lines[0].Where = nil, nil
	if _, err := DeclaredSweep(groups, "corr", f); err == nil || !strings.Contains(err.Error(), "two settings") {
		t.Errorf("ambiguous line: error %v", err)
	}
}

// TestDeclaredFigures draws lines named by placeholders and bars, and
// refuses declarations that select nothing.
func TestDeclaredFigures(t *testing.T) {
	groups := paddedGroups()
	fig, err := DeclaredSweep(groups, "padded", paddedSweep("TIME"))
	if err != nil {
		t.Fatal(err)
	}
	// Lines in the order of the groups.
	svg := svgOf(t, fig)
	if i, j := strings.Index(svg, "spread 1, end"), strings.Index(svg, "spread 2, start"); i < 0 || j < i {
		t.Errorf("legend without spread 1, end before spread 2, start")
	}
	fig, err = DeclaredBars(groups, "padded", paddedBars("TIME"))
	if err != nil {
		t.Fatal(err)
	}
	svg = svgOf(t, fig)
	if i, j := strings.Index(svg, "alignment start"), strings.Index(svg, "alignment end"); i < 0 || j < i || !strings.Contains(svg, "zero padding") {
		t.Errorf("bars: no panel for alignment start above alignment end, or no legend")
	}
	var b bytes.Buffer
	if err := fig.Encode(&b, "png"); err != nil {
		t.Error(err)
	}
	if _, err := DeclaredSweep(groups, "padded", paddedSweep("SAGE")); err == nil {
		t.Error("sweep: no error for a method without settings")
	}
	if _, err := DeclaredBars(groups, "padded", paddedBars("SAGE")); err == nil {
		t.Error("bars: no error for a method without settings")
	}
	// Without the zeros settings no panel has both bars.
	var nanOnly []Group
	for _, g := range groups {
		if v, _ := g.Param("padding"); v != "zeros" {
			nanOnly = append(nanOnly, g)
		}
	}
	if _, err := DeclaredBars(nanOnly, "padded", paddedBars("TIME")); err == nil {
		t.Error("no error without zero-padded settings")
	}
	// Two settings fit a bar once full-windows is not fixed.
	wide := paddedBars("TIME")
	wide.Where = nil
	if _, err := DeclaredBars(groups, "padded", wide); err == nil || !strings.Contains(err.Error(), "both fit") {
		t.Errorf("ambiguous bar: error %v", err)
	}
}

// TestWriteReportDeclared checks that a report draws the figures a suite
// declares under their headings, says in index.md why one could not be
// drawn, and refuses declarations that cannot be drawn.
func TestWriteReportDeclared(t *testing.T) {
	var recs []*record.Record
	for _, g := range paddedGroups() {
		if g.Method != "TIME" {
			continue
		}
		for _, m := range g.Models {
			r := &record.Record{Format: record.Format, Suite: g.Suite, Params: g.Params, Model: m, Seed: 1, Method: g.Method, Warnings: []string{}}
			for _, s := range g.Metrics {
				r.Metrics = append(r.Metrics, record.Metric{Name: s.Name, Value: s.Mean + 0.01*float64(m)})
			}
			recs = append(recs, r)
		}
	}
	decl := report.Suite{Sweeps: []report.Sweep{paddedSweep("TIME"), paddedSweep("SAGE")}, Bars: []report.Bars{paddedBars("TIME")}}
	decl.Sweeps[1].Name, decl.Sweeps[1].Heading = "padded-sage", "padded: SAGE"
	dir := t.TempDir()
	files, err := WriteReport(dir, recs, map[string]report.Suite{"padded": decl})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"figures/padded-sweep.png", "figures/padded-sweep.svg", "figures/padded-bars.png", "figures/padded-bars.svg"} {
		if !slices.Contains(files, f) {
			t.Errorf("files %v lack %s", files, f)
		}
	}
	idx, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	for _, want := range []string{"### padded: the sweep\n\n![padded](figures/padded-sweep.png)", "### padded: the paddings\n\n![padded](figures/padded-bars.png)",
		"### padded: SAGE\n\nnot drawn: results: figure padded-sage: no settings of padded to draw"} {
		if !strings.Contains(string(idx), want) {
			t.Errorf("index.md lacks %q:\n%s", want, idx)
		}
	}
	for _, bad := range []report.Suite{{PaperTables: []string{"table-s9"}}, {Sweeps: []report.Sweep{{Name: "x"}}}} {
		if _, err := WriteReport(t.TempDir(), recs, map[string]report.Suite{"padded": bad}); err == nil {
			t.Errorf("no error for the declaration %+v", bad)
		}
	}
}
