package results

import (
	"bytes"
	"encoding/csv"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/record"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run go test -update after checking the change):\n%s", name, got)
	}
}

func testGroups(t *testing.T) []Group {
	t.Helper()
	groups, err := Aggregate(testRecords())
	if err != nil {
		t.Fatal(err)
	}
	return groups
}

func TestComparisonTablesGolden(t *testing.T) {
	groups := testGroups(t)
	for _, pt := range PaperTables() {
		suite := testSuiteOf(t, pt.ID)
		display, data, err := ComparisonTables(pt, selectGroups(groups, suite, nil))
		if err != nil {
			t.Fatal(err)
		}
		var md, c bytes.Buffer
		if err := display.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if err := data.WriteCSV(&c); err != nil {
			t.Fatal(err)
		}
		golden(t, pt.ID+".md", md.Bytes())
		golden(t, pt.ID+".csv", c.Bytes())
		// One row per method with records: the table's paper rows present
		// (table-s2 has no PERM-f records), then occlusion, which the
		// paper never ran.
		rows := len(pt.Rows) + 1
		if suite == "table-s2" {
			rows = len(pt.Rows) - 1
		}
		all := checkCSV(t, c.Bytes(), rows)
		if suite == "table1" && all[len(all)-1][2] != newMethod {
			t.Errorf("%s: last row %v, want %s's", pt.ID, all[len(all)-1], newMethod)
		}
	}
}

// testSuiteOf returns the suite of testDecls that fills paper table id.
func testSuiteOf(t *testing.T, id string) string {
	t.Helper()
	for name, d := range testDecls {
		if slices.Contains(d.PaperTables, id) {
			return name
		}
	}
	t.Fatalf("no test suite fills %s", id)
	return ""
}

// checkCSV parses a CSV table and checks its shape.
func checkCSV(t *testing.T, b []byte, rows int) [][]string {
	t.Helper()
	all, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatalf("CSV does not parse: %v", err)
	}
	if len(all) != rows+1 {
		t.Errorf("CSV has %d lines, want header + %d rows", len(all), rows)
	}
	return all
}

// TestComparisonValues checks the cells of Table 1 against the aggregates
// and the paper's numbers, independently of the golden file.
func TestComparisonValues(t *testing.T) {
	groups := testGroups(t)
	pt := PaperTables()[0]
	gs := selectGroups(groups, "table1", nil)
	display, data, err := ComparisonTables(pt, gs)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(display.Rows); n != 7 {
		t.Fatalf("Table 1 has %d rows, want 7 (the paper's 6 and occlusion)", n)
	}
	col := func(name string) int { return slices.Index(data.Header, name) }
	for i, pr := range pt.Rows {
		g := findMethod(gs, pr.Method)
		s, _ := g.Metric("feature-fdr")
		row := data.Rows[i]
		if row[col("method")] != pr.Method || row[col("feature_fdr_mean")] != num(s.Mean) ||
			row[col("feature_fdr_sd")] != num(s.SD) || row[col("paper_feature_fdr")] != num(pr.FeatureFDR) ||
			row[col("runtime_median_s")] != num(g.Runtime.Median) {
			t.Errorf("row %d = %v", i, row)
		}
		if want := fixed3(s.Mean) + " (" + fixed3(s.SD) + ")"; display.Rows[i][3] != want {
			t.Errorf("%s feature FDR cell %q, want %q", pr.Method, display.Rows[i][3], want)
		}
	}
	// SAGE's row says that one model was excluded.
	if got := display.Rows[3][len(display.Rows[3])-2]; got != "3 (1 incomplete excluded)" {
		t.Errorf("SAGE models cell %q", got)
	}
	// The method the paper never ran has our numbers and no paper's.
	occ := display.Rows[6]
	s, _ := findMethod(gs, newMethod).Metric("feature-power")
	if occ[0] != newMethod || occ[1] != meanSD(s, true) || occ[2] != dash || occ[len(occ)-1] != dash || occ[len(occ)-2] != "4" {
		t.Errorf("%s row %v", newMethod, occ)
	}
	if !strings.Contains(strings.Join(display.Notes, " "), "Not in the paper (no published numbers): "+newMethod) {
		t.Errorf("notes %q do not flag %s", display.Notes, newMethod)
	}
}

func TestComparisonTablesRowsFromRecords(t *testing.T) {
	// table-s2 has no PERM-f records: no PERM-f row, although the paper's
	// table lists it.
	groups := testGroups(t)
	display, _, err := ComparisonTables(PaperTables()[2], selectGroups(groups, "table-s2", nil))
	if err != nil {
		t.Fatal(err)
	}
	if last := display.Rows[len(display.Rows)-1]; last[0] != "PERM" {
		t.Errorf("last row %v, want PERM's", last)
	}
	// Table 1 leaves out SAGE-z and PERM-f (the paper put them in Table
	// S1) but keeps occlusion (the paper never ran it).
	display, _, _ = ComparisonTables(PaperTables()[0], selectGroups(groups, "table1", nil))
	var methods []string
	for _, r := range display.Rows {
		methods = append(methods, r[0])
	}
	if want := []string{"TIME", "TIME-n", "LIME", "SAGE", "SAGE-m", "PERM", newMethod}; !slices.Equal(methods, want) {
		t.Errorf("Table 1 rows %v, want %v", methods, want)
	}
	// A setting with no method of the table is an error.
	only := []*record.Record{testRecord("table1", nil, 0, "SAGE-z")}
	g, _ := Aggregate(only)
	if _, _, err := ComparisonTables(PaperTables()[0], g); err == nil {
		t.Error("Table 1 of SAGE-z alone: no error")
	}
}

func TestComparisonTablesErrors(t *testing.T) {
	groups := testGroups(t)
	pt := PaperTables()[0]
	if _, _, err := ComparisonTables(pt, nil); err == nil || !strings.Contains(err.Error(), "no groups") {
		t.Errorf("empty: error %v", err)
	}
	mixed := append(selectGroups(groups, "table1", nil), selectGroups(groups, "table-s2", nil)...)
	if _, _, err := ComparisonTables(pt, mixed); err == nil || !strings.Contains(err.Error(), `"table1" and "table-s2"`) {
		t.Errorf("mixed settings: error %v", err)
	}
}

func TestGenericTablesGolden(t *testing.T) {
	groups := testGroups(t)
	for _, suite := range []string{"grid", "testsize-regression"} {
		gs := suiteGroups(groups, suite)
		display, data, err := GenericTables("Suite "+suite, gs)
		if err != nil {
			t.Fatal(err)
		}
		var md, c bytes.Buffer
		if err := display.WriteMarkdown(&md); err != nil {
			t.Fatal(err)
		}
		if err := data.WriteCSV(&c); err != nil {
			t.Fatal(err)
		}
		golden(t, "suite-"+suite+".md", md.Bytes())
		golden(t, "suite-"+suite+".csv", c.Bytes())
		all := checkCSV(t, c.Bytes(), len(gs))
		// Every row has every column, and the CI columns bracket the mean.
		h := all[0]
		lo, mean, hi := slices.Index(h, "feature-power_ci95_low"), slices.Index(h, "feature-power_mean"), slices.Index(h, "feature-power_ci95_high")
		for _, row := range all[1:] {
			if len(row) != len(h) {
				t.Fatalf("row %v has %d cells, header %d", row, len(row), len(h))
			}
			l, errl := strconv.ParseFloat(row[lo], 64)
			m, errm := strconv.ParseFloat(row[mean], 64)
			u, erru := strconv.ParseFloat(row[hi], 64)
			if errl != nil || errm != nil || erru != nil || !(l < m && m < u) {
				t.Errorf("feature-power CI [%s, %s] does not bracket mean %s", row[lo], row[hi], row[mean])
			}
		}
	}
	if _, _, err := GenericTables("x", nil); err == nil {
		t.Error("GenericTables(nil) returned no error")
	}
}

func TestGenericTablesMissingMetric(t *testing.T) {
	// PERM lacks TIME's ordering metrics: dashes in markdown, n = 0 in CSV.
	groups := testGroups(t)
	display, data, err := GenericTables("grid", suiteGroups(groups, "grid"))
	if err != nil {
		t.Fatal(err)
	}
	dcol := slices.Index(display.Header, "ordering-power")
	ccol := slices.Index(data.Header, "ordering-power_n")
	for i, row := range display.Rows {
		isPerm := row[1] == "PERM"
		if (row[dcol] == dash) != isPerm || (data.Rows[i][ccol] == "0") != isPerm {
			t.Errorf("row %d %v: ordering-power %q, n %q", i, row[:2], row[dcol], data.Rows[i][ccol])
		}
	}
}

func TestPaperTables(t *testing.T) {
	pts := PaperTables()
	if len(pts) != 3 || len(pts[0].Rows) != 6 || len(pts[1].Rows) != 8 || len(pts[2].Rows) != 8 {
		t.Fatalf("paper tables have the wrong shape")
	}
	// Table S1 = Table 1 + SAGE-z and PERM-f, all in the paper's order.
	for _, pt := range pts {
		var methods []string
		for _, r := range pt.Rows {
			methods = append(methods, r.Method)
		}
		if !slices.IsSortedFunc(methods, compareMethods) {
			t.Errorf("%s rows %v not in the paper's order", pt.ID, methods)
		}
		for _, r := range pt.Rows {
			// The paper's observation (its Tables 1, S1, S2): top-n
			// baselines select exactly n items, so FDR = 1 − power.
			if r.Method == "LIME" || strings.HasPrefix(r.Method, "SAGE") || r.Method == "PERM" {
				if math.Abs(r.FeaturePower+r.FeatureFDR-1) > 1e-9 || math.Abs(r.TimestepPower+r.TimestepFDR-1) > 1e-9 {
					t.Errorf("%s %s: power + FDR != 1 (transcription error?)", pt.ID, r.Method)
				}
			}
		}
	}
	for _, m := range MethodOrder[:6] {
		a, _ := pts[0].Row(m)
		b, ok := pts[1].Row(m)
		if !ok || a != b && m != "SAGE-z" {
			t.Errorf("Table S1 row %s = %+v, Table 1 %+v", m, b, a)
		}
	}
	// A fresh copy each call.
	pts[0].Rows[0].FeaturePower = 0
	if PaperTables()[0].Rows[0].FeaturePower != 0.930 {
		t.Error("PaperTables returns shared rows")
	}
	if r, _ := pts[2].Row("SAGE"); r.Models != 86 {
		t.Errorf("Table S2 SAGE models %d, want 86", r.Models)
	}
}

func TestWriteMarkdownEscapes(t *testing.T) {
	tb := &Table{Title: "T", Header: []string{"a", "b"}, Rows: [][]string{{"x|y", "1"}}, Notes: []string{"note"}}
	var b bytes.Buffer
	if err := tb.WriteMarkdown(&b); err != nil {
		t.Fatal(err)
	}
	want := "## T\n\n| a | b |\n| --- | --- |\n| x\\|y | 1 |\n\nnote\n"
	if b.String() != want {
		t.Errorf("markdown %q, want %q", b.String(), want)
	}
}

// TestComparisonScaledSetting checks that a table1 run at a different
// scale is tabulated with a note.
func TestComparisonScaledSetting(t *testing.T) {
	ps := []record.Param{{Key: "instances", Value: "200"}}
	var recs []*record.Record
	for m := range 2 {
		recs = append(recs, testRecord("table1", ps, m, "TIME"))
	}
	groups, err := Aggregate(recs)
	if err != nil {
		t.Fatal(err)
	}
	display, _, err := ComparisonTables(PaperTables()[0], groups)
	if err != nil {
		t.Fatal(err)
	}
	if display.Title != "Table 1: table1 (instances=200)" || !strings.Contains(strings.Join(display.Notes, " "), "differs from the paper's: instances=200") {
		t.Errorf("title %q notes %q", display.Title, display.Notes)
	}
}
