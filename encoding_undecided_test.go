package tempora

import (
	"bytes"
	"encoding/csv"
	"math"
	"testing"
)

// TestCSVUndecided checks that a decision a budget did not make is written
// empty, and the decisions made before it as they are.
func TestCSVUndecided(t *testing.T) {
	nan := math.NaN()
	f := FeatureResult{Index: 0, Name: "a", Tested: true, Important: true, Score: 1, PValue: 0.01, PAdjusted: 0.02,
		WindowScore: nan, WindowPValue: nan, WindowPAdjusted: nan, OrderingPValue: nan, OrderingPAdjusted: nan,
		WindowOrderingPValue: nan, FuturePValue: nan, FuturePAdjusted: nan, Undecided: "window"}
	g := f
	g.Index, g.Name, g.Important, g.Undecided = 1, "b", false, "overall"
	h := f
	h.Index, h.Name, h.Undecided = 2, "c", ""
	e := &Explanation{Features: []FeatureResult{f, g, h}}
	var buf bytes.Buffer
	if err := e.WriteCSV(&buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for k, name := range rows[0] {
		col[name] = k
	}
	for _, tc := range []struct {
		row                   int
		important, window, wo string
	}{
		{1, "true", "", ""},           // stopped at its windows
		{2, "", "", ""},               // stopped before its importance
		{3, "true", "false", "false"}, // decided
	} {
		r := rows[tc.row]
		if r[col["important"]] != tc.important || r[col["window_significant"]] != tc.window || r[col["window_ordering_important"]] != tc.wo {
			t.Errorf("row %d: important %q, window_significant %q, window_ordering_important %q; want %q, %q, %q",
				tc.row, r[col["important"]], r[col["window_significant"]], r[col["window_ordering_important"]], tc.important, tc.window, tc.wo)
		}
	}
}
