package results

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/record"
)

func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	recs := testRecords()
	files, err := WriteReport(dir, recs, testDecls)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"tables/table1.md", "tables/table1.csv", "tables/table-s1.md", "tables/table-s1.csv",
		"tables/table-s2.md", "tables/table-s2.csv",
		"tables/suite-grid.md", "tables/suite-grid.csv", "tables/suite-table-s2.md", "tables/suite-table-s2.csv",
		"tables/suite-table1.md", "tables/suite-table1.csv",
		"tables/suite-testsize-regression.md", "tables/suite-testsize-regression.csv",
		// grid sweeps two parameters (no sweep figure) and has no truth
		// (no heat map); table-s2 has no explanations.
		"figures/heatmap-table1-model0.png", "figures/heatmap-table1-model0.svg",
		"figures/sweep-testsize-regression.png", "figures/sweep-testsize-regression.svg",
		"figures/heatmap-testsize-regression_instances-800-model1.png",
		"figures/heatmap-testsize-regression_instances-800-model1.svg",
		"index.md",
	}
	if !slices.Equal(files, want) {
		t.Fatalf("files\n%v\nwant\n%v", files, want)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(b) == 0 {
			t.Fatalf("%s: %v (%d bytes)", f, err, len(b))
		}
		switch filepath.Ext(f) {
		case ".png":
			if _, err := png.Decode(bytes.NewReader(b)); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		case ".svg":
			checkSVG(t, b)
		}
	}
	// The paper tables in tables/ are the golden ones.
	for _, name := range []string{"table1.md", "table-s2.csv"} {
		got, _ := os.ReadFile(filepath.Join(dir, "tables", name))
		golden(t, name, got)
	}

	// Every link and image of index.md points to a written file, and every
	// written file is linked.
	index, err := os.ReadFile(filepath.Join(dir, "index.md"))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "index.md", index)
	var linked []string
	for _, m := range regexp.MustCompile(`\]\(([^)]+)\)`).FindAllStringSubmatch(string(index), -1) {
		if _, err := os.Stat(filepath.Join(dir, m[1])); err != nil {
			t.Errorf("index.md links to missing %s", m[1])
		}
		linked = append(linked, m[1])
	}
	for _, f := range files[:len(files)-1] {
		if !slices.Contains(linked, f) {
			t.Errorf("index.md does not link %s", f)
		}
	}
}

// TestWriteReportDeterministic checks that two reports of the same records,
// given in different orders, are byte-identical, figures included.
func TestWriteReportDeterministic(t *testing.T) {
	recs := testRecords()
	a, b := t.TempDir(), t.TempDir()
	filesA, err := WriteReport(a, recs, testDecls)
	if err != nil {
		t.Fatal(err)
	}
	rev := slices.Clone(recs)
	slices.Reverse(rev)
	filesB, err := WriteReport(b, rev, testDecls)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(filesA, filesB) {
		t.Fatalf("file lists differ: %v vs %v", filesA, filesB)
	}
	for _, f := range filesA {
		x, _ := os.ReadFile(filepath.Join(a, f))
		y, _ := os.ReadFile(filepath.Join(b, f))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between runs", f)
		}
	}
}

func TestWriteReportErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := WriteReport(dir, nil, testDecls); !errors.Is(err, ErrNoRecords) {
		t.Errorf("no records: error %v", err)
	}
	r := testRecord("table1", nil, 0, "TIME")
	if _, err := WriteReport(dir, []*record.Record{r, r}, testDecls); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicates: error %v", err)
	}
	// An output path that is a file.
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteReport(file, []*record.Record{r}, testDecls); err == nil || !strings.HasPrefix(err.Error(), "results: ") {
		t.Errorf("output is a file: error %v", err)
	}
}

// TestWriteReportBadHeatmap checks that a figure that cannot be drawn is
// listed in index.md instead of failing the report.
func TestWriteReportBadHeatmap(t *testing.T) {
	r := testRecord("table1", nil, 0, "TIME")
	r.Truth, r.Explanation = testTruth(), testExplanation("TIME", 0)
	r.Truth.Windows[0].End = 99
	dir := t.TempDir()
	files, err := WriteReport(dir, []*record.Record{r}, testDecls)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(f, "figures/") }) {
		t.Errorf("figures written: %v", files)
	}
	index, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	if !strings.Contains(string(index), "truth window [1, 99] of feature 0 outside [0, 5]") {
		t.Errorf("index.md does not report the failed heat map:\n%s", index)
	}
}
