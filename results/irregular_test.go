package results

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/record"
)

// irregularGroups returns groups of every setting of the irregular suite
// for TIME and LIME, LIME refused wherever data has missing values.
func irregularGroups() []Group {
	var groups []Group
	add := func(rate, spread, align, full, pad string) {
		ps := []record.Param{{Key: "missing-rate", Value: rate}, {Key: "length-spread", Value: spread},
			{Key: "alignment", Value: align}, {Key: "full-windows", Value: full}, {Key: "padding", Value: pad}}
		fdr := 0.05
		if pad == "zeros" {
			fdr = 0.6
		}
		var ms []MetricSummary
		for _, m := range PaddingMetrics {
			v := 0.95
			if strings.HasSuffix(m.Name, "-fdr") {
				v = fdr
			}
			ms = append(ms, MetricSummary{Name: m.Name, Summary: Summary{Mean: v, SD: 0.1, N: 3}})
		}
		groups = append(groups, Group{Suite: IrregularSuite, Method: "TIME", Params: ps, Models: []int{0, 1, 2}, Metrics: ms})
		lime := Group{Suite: IrregularSuite, Method: "LIME", Params: ps}
		if rate != "0" || spread != "1" {
			lime.Incomplete, lime.Refused, lime.Refusal = []int{0, 1, 2}, []int{0, 1, 2}, "LIME needs complete data"
		}
		groups = append(groups, lime)
	}
	for _, rate := range []string{"0", "0.2", "0.5"} {
		for _, spread := range []string{"1", "2"} {
			for _, align := range []string{"start", "end"} {
				add(rate, spread, align, "false", "nan")
			}
		}
	}
	for _, align := range []string{"start", "end"} {
		add("0", "2", align, "true", "nan")
		add("0", "2", align, "true", "zeros")
	}
	return groups
}

// TestIrregularFigures draws the irregular suite's figures, and refuses
// groups without its settings.
func TestIrregularFigures(t *testing.T) {
	groups := irregularGroups()
	f, err := IrregularFigure(groups, "TIME")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := f.Encode(&b, "svg"); err != nil || !bytes.Contains(b.Bytes(), []byte("spread 2, end")) {
		t.Errorf("irregular figure: %v, legend without spread 2, end", err)
	}
	f, err = PaddingFigure(groups, "TIME")
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := f.Encode(&b, "svg"); err != nil || !bytes.Contains(b.Bytes(), []byte("alignment end")) || !bytes.Contains(b.Bytes(), []byte("zero padding")) {
		t.Errorf("padding figure: %v, no panel for alignment end or no legend", err)
	}
	if err := f.Encode(&b, "png"); err != nil {
		t.Error(err)
	}
	for _, make := range []func([]Group, string) (*Figure, error){IrregularFigure, PaddingFigure} {
		if _, err := make(groups, "SAGE"); err == nil {
			t.Error("no error for a method without settings")
		}
	}
	// Without the zeros settings there is no comparison to draw.
	var nanOnly []Group
	for _, g := range groups {
		if v, _ := g.Param("padding"); v != "zeros" {
			nanOnly = append(nanOnly, g)
		}
	}
	if _, err := PaddingFigure(nanOnly, "TIME"); err == nil {
		t.Error("no error without zero-padded settings")
	}
}

// TestRefusedRecords checks that refused records are left out of their
// group's statistics and shown in the suite table as refused with the
// method's message, not as a row of zeros.
func TestRefusedRecords(t *testing.T) {
	var recs []*record.Record
	ps := []record.Param{{Key: "missing-rate", Value: "0.2"}}
	for k := range 2 {
		recs = append(recs,
			&record.Record{Format: record.Format, Suite: IrregularSuite, Params: ps, Model: k, Seed: 1, Method: "TIME",
				Metrics: []record.Metric{{Name: "feature-power", Value: 1}}, Warnings: []string{}},
			&record.Record{Format: record.Format, Suite: IrregularSuite, Params: ps, Model: k, Seed: 1, Method: "LIME",
				Metrics: []record.Metric{}, Incomplete: true, Warnings: []string{record.RefusedWarning + "LIME needs complete data | really"}})
	}
	groups, err := Aggregate(recs)
	if err != nil {
		t.Fatal(err)
	}
	var lime *Group
	for i := range groups {
		if groups[i].Method == "LIME" {
			lime = &groups[i]
		}
	}
	if lime == nil || len(lime.Models) != 0 || len(lime.Refused) != 2 || lime.Refusal != "LIME needs complete data | really" || len(lime.Metrics) != 0 {
		t.Fatalf("LIME's group: %+v", lime)
	}
	if got, want := modelsCell(lime), `0 (refused by 2: LIME needs complete data \| really)`; got != want {
		t.Errorf("models cell %q, want %q", got, want)
	}
}
