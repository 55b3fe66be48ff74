package report

import (
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/record"
)

// TestCheck refuses declarations that no records can draw and accepts a
// complete one.
func TestCheck(t *testing.T) {
	line := Line{Label: "spread {length-spread}", Method: "TIME"}
	col := Column{Title: "features", Power: "feature-power", FDR: "feature-fdr"}
	sweep := Sweep{Name: "s", X: "rho", Lines: []Line{line}, Columns: []Column{col}}
	bars := Bars{Name: "b", Title: "T", Panels: []Panel{{Title: "all"}}, Bars: []Line{{Label: "nan", Method: "TIME", Where: []record.Param{{Key: "padding", Value: "nan"}}}},
		Metrics: []Metric{{Name: "feature-fdr", Label: "feature FDR"}}}
	if err := (&Suite{PaperTables: []string{"table1"}, Sweeps: []Sweep{sweep}, Bars: []Bars{bars}}).Check(); err != nil {
		t.Fatalf("a complete declaration: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(s *Suite)
		want string
	}{
		{"unnamed sweep", func(s *Suite) { s.Sweeps[0].Name = "" }, "no name"},
		{"two figures of one name", func(s *Suite) { s.Bars[0].Name = "s" }, "two figures named s"},
		{"no swept parameter", func(s *Suite) { s.Sweeps[0].X = "" }, "sweeps no parameter"},
		{"no lines", func(s *Suite) { s.Sweeps[0].Lines = nil }, "no lines"},
		{"no columns", func(s *Suite) { s.Sweeps[0].Columns = nil }, "no columns"},
		{"line without method", func(s *Suite) { s.Sweeps[0].Lines = []Line{{Label: "x"}} }, "has no method"},
		{"bars without title", func(s *Suite) { s.Bars[0].Title = "" }, "no title"},
		{"no panels", func(s *Suite) { s.Bars[0].Panels = nil }, "no panels"},
		{"no metrics", func(s *Suite) { s.Bars[0].Metrics = nil }, "no panels, bars or metrics"},
		{"bar with placeholder", func(s *Suite) { s.Bars[0].Bars = []Line{line} }, "without placeholders"},
	} {
		s := &Suite{Sweeps: []Sweep{sweep}, Bars: []Bars{bars}}
		s.Sweeps = append([]Sweep(nil), s.Sweeps...)
		s.Bars = append([]Bars(nil), s.Bars...)
		tc.edit(s)
		if err := s.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
