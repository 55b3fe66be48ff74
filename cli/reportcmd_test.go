package cli

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/record"
)

// writeReportRecords writes a small hand-made run below dir/records: suite
// table1 (TIME, TIME-n and SAGE on two models, with truth and
// explanations) and testsize-regression (TIME at two test-set sizes).
func writeReportRecords(t *testing.T, dir string) {
	t.Helper()
	const d, l = 3, 5
	truth := &record.Truth{
		Relevant:                []bool{true, false, true},
		Windows:                 []tempora.Window{{Start: 1, End: 2}, {}, {Start: 0, End: 4}},
		EffectSize:              []float64{1, 0, 0.5},
		OrderingImportant:       []bool{true, false, false},
		WindowOrderingImportant: []bool{true, false, false},
	}
	expl := func(method string, model int) *tempora.Explanation {
		e := &tempora.Explanation{Method: method, D: d, L: l, Cells: make([]float64, d*l)}
		for j := range d {
			f := tempora.NewFeatureResult(j, "f"+strconv.Itoa(j))
			for tt := range l {
				if truth.Relevant[j] && truth.Windows[j].Contains(tt) {
					e.Cells[j*l+tt] = truth.EffectSize[j] + 0.1*float64(model+tt)
				}
			}
			if method == "TIME" && truth.Relevant[j] {
				w := truth.Windows[j]
				f.Important, f.Window, f.WindowOrderingImportant = true, &w, truth.WindowOrderingImportant[j]
			}
			e.Features = append(e.Features, f)
		}
		return e
	}
	var recs []*record.Record
	add := func(suite string, params []record.Param, model int, method string, v float64) *record.Record {
		r := &record.Record{Format: record.Format, Suite: suite, Params: params, Model: model, Method: method,
			RuntimeSeconds: 1 + float64(model)}
		for _, name := range []string{"feature-power", "feature-fdr", "timestep-power", "timestep-fdr",
			"ordering-power", "ordering-fdr", "window-ordering-power", "window-ordering-fdr", "avg-window-power", "avg-window-fdr"} {
			val := v + 0.01*float64(model)
			if strings.HasSuffix(name, "fdr") {
				val = 1 - val
			}
			r.Metrics = append(r.Metrics, record.Metric{Name: name, Value: val})
		}
		recs = append(recs, r)
		return r
	}
	for model := range 2 {
		tr := add("table1", nil, model, "TIME", 0.9)
		tr.Truth, tr.Explanation = truth, expl("TIME", model)
		add("table1", nil, model, "TIME-n", 0.85)
		add("table1", nil, model, "SAGE", 0.8).Explanation = expl("SAGE", model)
		for _, n := range []string{"100", "400"} {
			add("testsize-regression", []record.Param{{Key: "instances", Value: n}}, model, "TIME", 0.5+float64(len(n))/10)
		}
	}
	for _, r := range recs {
		if err := record.Write(filepath.Join(dir, "records"), r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReport(t *testing.T) {
	run := t.TempDir()
	writeReportRecords(t, run)
	out := filepath.Join(t.TempDir(), "report")
	stdout := mustRun(t, "report", "-in", run, "-out", out)
	golden(t, "report.stdout", strings.ReplaceAll(stdout, out, "$OUT"))

	index, err := os.ReadFile(filepath.Join(out, "index.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Paper tables", "### Table 1: table1", "figures/sweep-testsize-regression.png",
		"figures/heatmap-table1-model0.png"} {
		if !strings.Contains(string(index), want) {
			t.Errorf("index.md lacks %q", want)
		}
	}
	for _, f := range []string{"figures/sweep-testsize-regression.png", "figures/heatmap-table1-model0.png"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(bytes.NewReader(b)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, "tables", "table1.md"))
	if err != nil {
		t.Fatal(err)
	}
	// TIME's feature power over the two models: 0.9 and 0.91.
	if !strings.Contains(string(md), "| TIME | 0.905 (0.007) | 0.930 |") {
		t.Errorf("table1.md:\n%s", md)
	}

	// -out defaults to IN/report.
	mustRun(t, "report", "-in", run)
	if _, err := os.Stat(filepath.Join(run, "report", "index.md")); err != nil {
		t.Errorf("default output: %v", err)
	}
}

func TestReportErrors(t *testing.T) {
	empty := t.TempDir()
	if err := os.MkdirAll(filepath.Join(empty, "records"), 0o755); err != nil {
		t.Fatal(err)
	}
	corrupt := t.TempDir()
	writeReportRecords(t, corrupt)
	bad := filepath.Join(corrupt, "records", "table1", "model=0", "method=TIME.json")
	if err := os.WriteFile(bad, []byte(`{"format": "tempora-record/1", "suite": `), 0o644); err != nil {
		t.Fatal(err)
	}
	notDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(notDir, "records"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "nothing")
	for _, tc := range []struct {
		name  string
		args  []string
		want  string
		usage bool
	}{
		{"no -in", []string{"report"}, "report: -in is required", true},
		{"bad flag", []string{"report", "-bogus"}, "report: flag provided but not defined: -bogus", true},
		{"arguments", []string{"report", "-in", empty, "x"}, `report: unexpected arguments ["x"]`, true},
		{"missing", []string{"report", "-in", missing}, "report: no records directory " + filepath.Join(missing, "records"), false},
		{"not a directory", []string{"report", "-in", notDir}, "is not a directory", false},
		{"empty", []string{"report", "-in", empty}, "report: no records (*.json) in " + filepath.Join(empty, "records"), false},
		{"corrupt", []string{"report", "-in", corrupt}, "report: reading records: " + bad + ": unexpected end of JSON input", false},
	} {
		_, _, err := runCmd(t, tc.args...)
		var u usageError
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.As(err, &u) != tc.usage {
			t.Errorf("%s: error %v (usage %v), want %q (usage %v)", tc.name, err, errors.As(err, &u), tc.want, tc.usage)
		}
	}
}

func TestReportHelp(t *testing.T) {
	out, errOut, err := runCmd(t, "report", "-h")
	if err != nil || errOut != "" {
		t.Fatalf("tempora report -h: error %v, stderr %q", err, errOut)
	}
	golden(t, "report-help.stdout", out)
}
