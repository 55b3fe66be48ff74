package results

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/record"
)

func areaRecords() []*record.Record {
	var recs []*record.Record
	for m := range 3 {
		for _, method := range []string{"TIME", "OCC"} {
			ms := []record.Metric{{Name: "timestep-auprc", Value: 0.5 + 0.1*float64(m)}}
			if method == "OCC" {
				ms = append(ms, record.Metric{Name: "instance-timestep-auprc", Value: 0.3})
			}
			recs = append(recs, &record.Record{Format: record.Format, Suite: "local", Params: []record.Param{}, Model: m,
				Method: method, Metrics: ms, Warnings: []string{}})
		}
	}
	return recs
}

func TestAreaFigure(t *testing.T) {
	groups, err := Aggregate(areaRecords())
	if err != nil {
		t.Fatal(err)
	}
	f, err := AreaFigure(groups)
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, f)
	if _, err := AreaFigure(nil); err == nil {
		t.Error("no error for no groups")
	}
	for i := range groups {
		groups[i].Metrics = nil
	}
	if _, err := AreaFigure(groups); err == nil {
		t.Error("no error for groups without the metrics")
	}
}

// TestReportAreas checks that a report draws the area figure for a setting
// with per-instance metrics, and only then.
func TestReportAreas(t *testing.T) {
	dir := t.TempDir()
	files, err := WriteReport(dir, areaRecords(), testDecls)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "figures/areas-local.png") {
		t.Errorf("files %v lack figures/areas-local.png", files)
	}
	idx, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	if !strings.Contains(string(idx), "Threshold-free metrics: local") {
		t.Errorf("index.md does not show the area figure:\n%s", idx)
	}
	recs := areaRecords()
	for _, r := range recs {
		r.Metrics = r.Metrics[:1]
	}
	files, err = WriteReport(t.TempDir(), recs, testDecls)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.Contains(f, "areas-") {
			t.Errorf("an area figure (%s) without per-instance metrics", f)
		}
	}
}
