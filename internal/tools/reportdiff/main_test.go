package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	testRecord = `{
 "format": "tempora-record/2",
 "suite": "table1",
 "model": 0,
 "method": "TIME",
 "metrics": [{"name": "feature-power", "value": 0.8}],
 "runtime_seconds": 0.125,
 "model_calls": 2706,
 "explanation": {"cells": [[0.5, 0]], "accounting": {"model_calls": 2706, "runtime_seconds": 0.124}},
 "checksum": "sha256:aaaa"
}
`
	testTable = `# tempora report

| Method | Feat. power | Runtime (s) | (paper) | Models |
| --- | --- | --- | --- | --- |
| TIME | 0.800 (0.000) | 0.092 | 371 | 2 |
| LIME | 0.600 (0.000) | 1.76 | 682 | 2 |

Runtime is the median wall time.
`
	testCSV = `suite,method,runtime_median_s,runtime_sd_s,model_calls_mean,paper_runtime_s
table1,TIME,0.092,0.026,2706,371
`
)

// writeRun writes a run directory with one record, one markdown table, one
// CSV file and one binary file, after applying edit to each content.
func writeRun(t *testing.T, edit func(name, content string) string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"records/table1/model=0/method=TIME.json": testRecord,
		"report/index.md":                         testTable,
		"report/tables/suite-table1.csv":          testCSV,
		"report/figures/heatmap.png":              "\x89PNG\x00\x01",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(edit(name, content)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func same(_, content string) string { return content }

// replaceIn returns an edit that replaces old by new in file name only.
func replaceIn(file, old, new string) func(string, string) string {
	return func(name, content string) string {
		if name != file {
			return content
		}
		if !strings.Contains(content, old) {
			panic("fixture lacks " + old)
		}
		return strings.Replace(content, old, new, 1)
	}
}

func TestCompareRuns(t *testing.T) {
	base := writeRun(t, same)
	for _, tc := range []struct {
		name  string
		edit  func(string, string) string
		diffs int
	}{
		{"identical", same, 0},
		{"record runtime", replaceIn("records/table1/model=0/method=TIME.json", `0.125`, `7.5`), 0},
		{"explanation runtime", replaceIn("records/table1/model=0/method=TIME.json", `0.124`, `7.4`), 0},
		{"checksum (covers the runtime)", replaceIn("records/table1/model=0/method=TIME.json", `sha256:aaaa`, `sha256:bbbb`), 0},
		{"table runtime", replaceIn("report/index.md", "| 0.092 |", "| 0.31 |"), 0},
		{"csv runtimes", replaceIn("report/tables/suite-table1.csv", "0.092,0.026", "0.5,0.1"), 0},

		{"record metric", replaceIn("records/table1/model=0/method=TIME.json", `0.8}`, `0.80000001}`), 1},
		{"record model calls", replaceIn("records/table1/model=0/method=TIME.json", `2706`, `2707`), 1},
		{"explanation cell", replaceIn("records/table1/model=0/method=TIME.json", `[[0.5, 0]]`, `[[0.5, 1e-300]]`), 1},
		{"explanation model calls", replaceIn("records/table1/model=0/method=TIME.json", `{"model_calls": 2706`, `{"model_calls": 2`), 1},
		{"record extra field", replaceIn("records/table1/model=0/method=TIME.json", `"model": 0,`, `"model": 0, "x": 1,`), 1},
		{"table metric", replaceIn("report/index.md", "0.600 (0.000)", "0.600 (0.001)"), 1},
		{"paper runtime beside ours", replaceIn("report/index.md", "| 682 |", "| 683 |"), 1},
		{"table prose", replaceIn("report/index.md", "median wall", "mean wall"), 1},
		{"csv model calls", replaceIn("report/tables/suite-table1.csv", ",2706,", ",2705,"), 1},
		{"csv paper runtime", replaceIn("report/tables/suite-table1.csv", ",371\n", ",372\n"), 1},
		{"figure", replaceIn("report/figures/heatmap.png", "\x01", "\x02"), 1},
	} {
		other := writeRun(t, tc.edit)
		diffs, err := compareRuns(base, other)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(diffs) != tc.diffs {
			t.Errorf("%s: %d differences, want %d: %q", tc.name, len(diffs), tc.diffs, diffs)
		}
	}

	// A file present in one run only is a difference.
	other := writeRun(t, same)
	if err := os.Remove(filepath.Join(other, "report", "tables", "suite-table1.csv")); err != nil {
		t.Fatal(err)
	}
	if diffs, err := compareRuns(base, other); err != nil || len(diffs) != 1 || !strings.Contains(diffs[0], "only in") {
		t.Errorf("missing file: differences %q, error %v; want one 'only in'", diffs, err)
	}
	// A run without records is an error, not agreement.
	empty := t.TempDir()
	if _, err := compareRuns(empty, empty); err == nil {
		t.Error("two empty runs: no error")
	}
}
