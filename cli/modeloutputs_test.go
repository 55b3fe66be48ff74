package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/procmodel"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/synth"
)

// Models with several outputs through the command line: -outputs,
// -output-names and -output-anchors, the model program's K, the text
// table by output and the CSV's output column.

// outputsModelEnv makes the test binary serve one of outputsModels (the
// variable's value names it) over the model protocol instead of running
// tests.
const outputsModelEnv = "TEMPORA_CLI_OUTPUTS_MODEL"

// outputsModels are models of three outputs per instance, over data of at
// least 3 features × 12 timesteps, whose arithmetic (additions,
// multiplications and one division, in a fixed order) python/tests'
// outputs_model.py repeats operation for operation, so that both give the
// same bits:
//
//   - horizons: h0 = x[0,2] + x[0,3] + x[0,4]; h1 = x[1,6] − x[1,7];
//     h2 = 2·x[2,9] + x[2,10] + x[0,3] (feature 0 is read by two horizons);
//   - classes: w0 = 1 + a², a = x[0,2] + x[0,3]; w1 = 1 + x[1,6]²; w2 = 1.5;
//     p_c = w_c / ((w0 + w1) + w2);
//   - steps (4 outputs, anchored at 3, 5, 7 and 9 by -output-anchors):
//     output s at anchor a reads x[0,a] + x[1,a−1], and output 3 also
//     x[2,a+1], an input after its own step (Go only);
//   - one: h0 alone, a model of one output.
var outputsModels = map[string]struct {
	k     int
	model tempora.ModelFunc
}{
	"horizons": {3, func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			at := func(j, t int) float64 { return x.Data[(i*x.D+j)*x.L+t] }
			dst[3*i] = at(0, 2) + at(0, 3) + at(0, 4)
			dst[3*i+1] = at(1, 6) - at(1, 7)
			dst[3*i+2] = 2*at(2, 9) + at(2, 10) + at(0, 3)
		}
		return nil
	}},
	"classes": {3, func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			at := func(j, t int) float64 { return x.Data[(i*x.D+j)*x.L+t] }
			a := at(0, 2) + at(0, 3)
			w0, w1, w2 := 1+a*a, 1+at(1, 6)*at(1, 6), 1.5
			s := w0 + w1 + w2
			dst[3*i], dst[3*i+1], dst[3*i+2] = w0/s, w1/s, w2/s
		}
		return nil
	}},
	"steps": {4, func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			at := func(j, t int) float64 { return x.Data[(i*x.D+j)*x.L+t] }
			for s, a := range stepAnchors {
				dst[4*i+s] = at(0, a) + at(1, a-1)
			}
			dst[4*i+3] += at(2, 10)
		}
		return nil
	}},
	"one": {1, func(dst []float64, x *tempora.Tensor) error {
		for i := range x.M {
			at := func(j, t int) float64 { return x.Data[(i*x.D+j)*x.L+t] }
			dst[i] = at(0, 2) + at(0, 3) + at(0, 4)
		}
		return nil
	}},
}

// stepAnchors are the anchors of the steps model.
var stepAnchors = []int{3, 5, 7, 9}

// serveOutputsModel serves the model kind names on standard input and
// output, and exits.
func serveOutputsModel(kind string) {
	m, ok := outputsModels[kind]
	if !ok {
		fmt.Fprintln(os.Stderr, "outputs model: unknown kind", kind)
		os.Exit(2)
	}
	if err := procmodel.ServeOutputs(os.Stdin, os.Stdout, m.model, m.k); err != nil {
		fmt.Fprintln(os.Stderr, "outputs model:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// outputsData returns data of 160 instances × 5 features × 12 timesteps
// and its targets for the model kind: the horizons plus N(0, 0.3²) noise,
// NaN for horizon 2 of every fifth instance (no target); class labels
// drawn from the class probabilities.
func outputsData(t *testing.T, kind string) *tempora.Dataset {
	t.Helper()
	const m, d, l = 160, 5, 12
	x := tempora.NewTensor(m, d, l)
	rng := tempora.NewRand(11, "outputs data")
	for k := range x.Data {
		x.Data[k] = rng.NormFloat64()
	}
	spec := outputsModels[kind]
	pred := make([]float64, m*spec.k)
	if err := spec.model(pred, x); err != nil {
		t.Fatal(err)
	}
	data := &tempora.Dataset{X: x, Task: tempora.Regression}
	switch kind {
	case "horizons":
		data.Outputs = &tempora.Outputs{Kind: tempora.Horizons, K: 3, Names: []string{"h+1", "h+2", "h+3"}}
		data.Y = pred
		for k := range data.Y {
			data.Y[k] += 0.3 * rng.NormFloat64()
			if k%3 == 2 && (k/3)%5 == 0 {
				data.Y[k] = math.NaN()
			}
		}
	case "steps":
		data.Outputs = &tempora.Outputs{Kind: tempora.Steps, K: 4, Anchors: stepAnchors}
		data.Y = pred
		for k := range data.Y {
			data.Y[k] += 0.3 * rng.NormFloat64()
			if k%4 == 0 && (k/4)%3 == 0 {
				data.Y[k] = math.NaN() // a step that some sequences do not have
			}
		}
	case "classes":
		data.Task = tempora.Classification
		data.Outputs = &tempora.Outputs{Kind: tempora.Classes, K: 3, Names: []string{"cat", "dog", "bird"}}
		data.Y = make([]float64, m)
		for i := range m {
			u, c := rng.Float64(), 0
			for c < 2 && u > pred[3*i+c] {
				u -= pred[3*i+c]
				c++
			}
			data.Y[i] = float64(c)
		}
	}
	if err := data.Validate(1); err != nil {
		t.Fatal(err)
	}
	return data
}

// writeOutputsFiles writes data's tensor, its targets (long CSV for
// horizons, labels for classes) and output names into dir.
func writeOutputsFiles(t *testing.T, dir string, data *tempora.Dataset) (x, y, names string) {
	t.Helper()
	x = filepath.Join(dir, "x.npy")
	if err := dataio.WriteTensorNPY(x, data.X); err != nil {
		t.Fatal(err)
	}
	if data.Outputs.Names != nil {
		names = filepath.Join(dir, "outputs.txt")
		if err := os.WriteFile(names, []byte(strings.Join(data.Outputs.Names, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if data.Outputs.Kind == tempora.Classes {
		y = filepath.Join(dir, "y.npy")
		if err := dataio.WriteVectorNPY(y, data.Y); err != nil {
			t.Fatal(err)
		}
		return x, y, names
	}
	y = filepath.Join(dir, "y.csv")
	var b strings.Builder
	k := data.K()
	if data.Outputs.Names == nil { // wide, NA where missing
		for n, v := range data.Y {
			if v != v {
				b.WriteString("NA")
			} else {
				fmt.Fprint(&b, v)
			}
			b.WriteString(map[bool]string{true: "\n", false: ","}[n%k == k-1])
		}
	} else { // long, no line where missing
		b.WriteString("instance,output,value\n")
		for n, v := range data.Y {
			if v == v {
				fmt.Fprintf(&b, "%d,%s,%v\n", n/k, data.Outputs.Names[n%k], v)
			}
		}
	}
	if err := os.WriteFile(y, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return x, y, names
}

// readExplanation reads an explanation written by -json, with its runtime
// and model calls cleared (they depend on the transport), and returns the
// model calls apart.
func readExplanation(t *testing.T, path string) ([]byte, int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e tempora.Explanation
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	calls := e.Accounting.ModelCalls
	e.Accounting.Runtime, e.Accounting.ModelCalls = 0, 0
	out, err := json.Marshal(&e)
	if err != nil {
		t.Fatal(err)
	}
	return out, calls
}

// TestExplainModelOutputs explains a forecaster of three horizons and a
// classifier of three classes served by a model program (-model-cmd, the
// resident path: data sent once, then blocks), with one and two model
// processes and a batch limit, and checks that each explanation is the
// one the same model gives in process, that the text report groups the
// results by output, and that the CSV has an output column.
func TestExplainModelOutputs(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := "'" + strings.ReplaceAll(exe, "'", `'\''`) + "' -test.run=^$"
	for _, kind := range []string{"horizons", "classes", "steps"} {
		t.Run(kind, func(t *testing.T) {
			t.Setenv(outputsModelEnv, kind)
			dir := t.TempDir()
			data := outputsData(t, kind)
			x, y, names := writeOutputsFiles(t, dir, data)
			in, err := explain.TIME{Seed: 3}.Explain(context.Background(), outputsModels[kind].model, data)
			if err != nil {
				t.Fatal(err)
			}
			inCalls := in.Accounting.ModelCalls
			in.Accounting.Runtime, in.Accounting.ModelCalls = 0, 0
			inJSON, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			task := data.Task.String()
			base := []string{"explain", "-data", x, "-targets", y, "-task", task, "-outputs", fmt.Sprintf("%v:%d", data.Outputs.Kind, data.K()),
				"-model-cmd", cmd, "-model-timeout", "1m", "-seed", "3"}
			if names != "" {
				base = append(base, "-output-names", names)
			}
			if kind == "steps" {
				base = append(base, "-output-anchors", "3, 5,7,9")
			}
			for _, extra := range [][]string{nil, {"-model-procs", "2"}, {"-max-batch", "7"}} {
				jsonPath, csvPath := filepath.Join(dir, "e.json"), filepath.Join(dir, "e.csv")
				out, errOut, err := runCmd(t, append(append(base, extra...), "-json", jsonPath, "-csv", csvPath, "-progress", "json")...)
				if err != nil {
					t.Fatalf("%q: %v\n%s", extra, err, errOut)
				}
				got, calls := readExplanation(t, jsonPath)
				if !bytes.Equal(got, inJSON) {
					t.Errorf("%q: the explanation through -model-cmd differs from in process:\n got %s\nwant %s", extra, got, inJSON)
				}
				t.Logf("%s %q: %d model calls through -model-cmd, %d in process; %d instance evaluations", kind, extra, calls, inCalls, in.Accounting.InstanceEvals)
				if extra == nil {
					golden(t, "explain-outputs-"+kind+".stdout", out)
					checkOutputsCSV(t, csvPath, in)
				}
				checkProgress(t, errOut, in.Accounting.InstanceEvals)
			}
		})
	}
}

// checkProgress checks that the last progress line of stderr (-progress
// json) counts the instance evaluations the explanation reports: rows,
// not predictions, for a model of several outputs.
func checkProgress(t *testing.T, stderr string, evals int64) {
	t.Helper()
	var last map[string]progressLine
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, `{"progress"`) {
			if err := json.Unmarshal([]byte(line), &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	if p, ok := last["progress"]; !ok || !p.Done || p.Evals != evals {
		t.Errorf("last progress line %+v, want done with %d instance evaluations", last, evals)
	}
}

// checkOutputsCSV checks the CSV of an explanation with outputs: the
// output column, empty on the whole model's rows, then every output's
// features under its name.
func checkOutputsCSV(t *testing.T, path string, e *tempora.Explanation) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != strings.Join(tempora.OutputsCSVHeader, ",") {
		t.Fatalf("CSV header %q", rows[0])
	}
	d, k := len(e.Features), len(e.Outputs.Outputs)
	if len(rows) != 1+d+k*d {
		t.Fatalf("CSV has %d rows, want 1 + %d + %d·%d", len(rows), d, k, d)
	}
	lags := len(tempora.OutputsCSVHeader) - 4
	for r, row := range rows[1:] {
		want := ""
		if r >= d {
			want = e.Outputs.Names[(r-d)/d]
			f := e.Outputs.Outputs[(r-d)/d].Features[(r-d)%d]
			if wantLag := lagCSV(f); row[lags] != wantLag {
				t.Errorf("CSV row %d has lags %q, want %q", r+1, row[lags], wantLag)
			}
		}
		if row[0] != want {
			t.Errorf("CSV row %d has output %q, want %q", r+1, row[0], want)
		}
	}
}

// lagCSV renders f's lag windows as the CSV's lags column should.
func lagCSV(f tempora.FeatureResult) string {
	var parts []string
	for _, w := range f.Windows {
		if w.Lag != nil {
			p := fmt.Sprintf("%d-%d", w.Lag.Start, w.Lag.End)
			if w.Significant {
				p += "*"
			}
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ";")
}

// TestExplainOutputsMismatch checks the refusals when the data's outputs
// and the model's disagree, and the usage errors of the output flags.
func TestExplainOutputsMismatch(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := "'" + strings.ReplaceAll(exe, "'", `'\''`) + "' -test.run=^$"
	dir := t.TempDir()
	data := outputsData(t, "horizons")
	x, y, names := writeOutputsFiles(t, dir, data)
	y1 := filepath.Join(dir, "y1.npy")
	one := make([]float64, data.X.M)
	for i := range one {
		one[i] = float64(i % 7)
	}
	if err := dataio.WriteVectorNPY(y1, one); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		model string
		args  []string
		want  string
	}{
		{"horizons", []string{"-targets", y1, "-task", "regression"},
			"explain: the model returns 3 outputs per instance (its hello says so), but the data has one: describe them with -outputs KIND:3"},
		{"one", []string{"-targets", y, "-task", "regression", "-outputs", "horizons"},
			"explain: the data has 3 horizons outputs (-outputs), but the model returns one output per instance: its hello announces no K (a Python model program serves with tempora.serve(predict, outputs=3)"},
		{"horizons", []string{"-targets", y, "-task", "regression", "-outputs", "horizons:4"},
			"has 3 targets per instance, for 4 horizons outputs"},
		{"horizons", []string{"-targets", y, "-task", "regression", "-outputs", "steps", "-output-anchors", "1,2", "-output-names", names},
			"2 output anchors for 3 outputs"},
	} {
		t.Run(tc.want[:20], func(t *testing.T) {
			t.Setenv(outputsModelEnv, tc.model)
			_, errOut, err := runCmd(t, append([]string{"explain", "-data", x, "-model-cmd", cmd, "-quiet"}, tc.args...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %q\n%s", err, tc.want, errOut)
			}
		})
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-outputs", "classes"}, "-outputs classes needs the number of classes, -outputs classes:K"},
		{[]string{"-outputs", "classes:2"}, "two classes are one output"},
		{[]string{"-outputs", "trees:3"}, `-outputs "trees:3": want classes:K, horizons[:K] or steps[:K]`},
		{[]string{"-outputs", "horizons:0"}, "K must be an integer from 1 to"},
		{[]string{"-outputs", "classes:3", "-output-anchors", "1,2,3"}, "-output-anchors does not apply to classes"},
		{[]string{"-outputs", "steps:2", "-output-anchors", "1,x"}, `"x" is not an integer timestep`},
		{[]string{"-outputs", "steps:2", "-output-anchors", "1,2,3"}, "-output-anchors gives 3 anchors for -outputs steps:2"},
		{[]string{"-output-names", names}, "-output-names needs -outputs KIND[:K]"},
		{[]string{"-output-anchors", "1"}, "-output-anchors needs -outputs horizons or steps"},
	} {
		_, _, err := runCmd(t, append([]string{"explain", "-data", x, "-targets", y, "-task", "regression", "-model-cmd", "false"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.args, err, tc.want)
		}
	}
	_, _, err = runCmd(t, "explain", "-problem", dir, "-outputs", "horizons")
	if err == nil || !strings.Contains(err.Error(), "-outputs cannot be combined with -problem") {
		t.Errorf("-outputs with -problem: %v", err)
	}
}

// TestExplainOutputsPython explains the models of outputsModels served by
// a Python model program (python/tests/outputs_model.py, tempora.serve
// with outputs=3), alone and holding the data from the start (the model
// side's hello says so, and tempora sends no resident data), with one and
// two processes, and checks each explanation against the Go model in
// process. It needs /usr/bin/python3 with NumPy.
func TestExplainOutputsPython(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skipf("needs %s with NumPy: %v", python, err)
	}
	script, err := filepath.Abs(filepath.Join("..", "python", "tests", "outputs_model.py"))
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := filepath.Abs(filepath.Join("..", "python"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYTHONPATH", pkg)
	for _, kind := range []string{"horizons", "classes"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			data := outputsData(t, kind)
			x, y, names := writeOutputsFiles(t, dir, data)
			in, err := explain.TIME{Seed: 5}.Explain(context.Background(), outputsModels[kind].model, data)
			if err != nil {
				t.Fatal(err)
			}
			in.Accounting.Runtime, in.Accounting.ModelCalls = 0, 0
			inJSON, _ := json.Marshal(in)
			for _, tc := range []struct {
				hold  bool
				procs string
			}{{false, "1"}, {true, "1"}, {true, "2"}} {
				model := fmt.Sprintf("%s %s %s", python, script, kind)
				if tc.hold {
					model += " --hold " + x
				}
				jsonPath := filepath.Join(dir, "e.json")
				_, errOut, err := runCmd(t, "explain", "-data", x, "-targets", y, "-task", data.Task.String(), "-outputs", data.Outputs.Kind.String()+":3",
					"-output-names", names, "-model-cmd", model, "-model-procs", tc.procs, "-model-timeout", "1m", "-seed", "5", "-json", jsonPath)
				if err != nil {
					t.Fatalf("hold %v, %s processes: %v\n%s", tc.hold, tc.procs, err, errOut)
				}
				got, calls := readExplanation(t, jsonPath)
				if !bytes.Equal(got, inJSON) {
					t.Errorf("hold %v, %s processes: the explanation through Python differs from the Go model in process:\n got %s\nwant %s", tc.hold, tc.procs, got, inJSON)
				}
				sent := strings.Count(errOut, "outputs_model: resident data received")
				if tc.hold != (sent == 0) {
					t.Errorf("hold %v: the model programs received resident data %d times", tc.hold, sent)
				}
				t.Logf("%s, hold %v, %s processes: %d model calls", kind, tc.hold, tc.procs, calls)
			}
		})
	}
}

// TestReportOutputs checks that records keeping explanations of a model
// with several outputs (per-output results, a negative lag) go through
// "tempora report" as the same records without them do: the report
// reads them, checks them, and shows the whole model's results.
func TestReportOutputs(t *testing.T) {
	plain, withOutputs := t.TempDir(), t.TempDir()
	writeReportRecords(t, plain)
	writeReportRecords(t, withOutputs)
	path := filepath.Join(withOutputs, "records", "table1", "model=0", "method=TIME.json")
	r, err := record.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	e := r.Explanation
	data := &tempora.Dataset{X: tempora.NewTensor(1, e.D, e.L), Outputs: &tempora.Outputs{Kind: tempora.Steps, K: 2}}
	e.Outputs = tempora.NewOutputResults(data.Outputs, data)
	f := &e.Outputs.Outputs[0].Features[0]
	w := tempora.Window{Start: 1, End: 2}
	f.Tested, f.Important, f.Window, f.WindowSignificant = true, true, &w, true
	f.Windows = []tempora.WindowResult{{Window: w, Significant: true, Lag: &tempora.Window{Start: -2, End: -1}}}
	e.Outputs.CausalChecked, e.Outputs.ReadsFuture, f.ReadsFuture = true, true, true
	if err := record.Write(filepath.Join(withOutputs, "records"), r); err != nil {
		t.Fatal(err)
	}
	if back, err := record.Read(path); err != nil || back.Explanation.Outputs == nil {
		t.Fatalf("record read back: %v", err)
	}
	report := func(run string) string {
		out := filepath.Join(t.TempDir(), "report")
		return strings.ReplaceAll(mustRun(t, "report", "-in", run, "-out", out), out, "$OUT")
	}
	if a, b := report(plain), report(withOutputs); a != b {
		t.Errorf("report of records with outputs differs:\n%s\n---\n%s", b, a)
	}
}

// TestProblemOutputs writes a world with several outputs (tempora synth
// -outputs), explains it (-problem: the data's outputs come from the
// problem, and the explanation is compared with each output's truth),
// serves its model (tempora serve announces K and answers K predictions
// per instance, those of the model in process), and checks the usage
// errors of the synth flags.
func TestProblemOutputs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	out := mustRun(t, "synth", "-out", dir, "-outputs", "classes:3", "-instances", "200", "-features", "4", "-timesteps", "6", "-seed", "4")
	if !strings.Contains(out, "3 outputs (classes)") {
		t.Errorf("synth: %s", out)
	}
	p, err := synth.LoadOutputs(dir)
	if err != nil {
		t.Fatal(err)
	}
	out = mustRun(t, "explain", "-problem", dir, "-seed", "1", "-quiet")
	golden(t, "explain-problem-outputs.stdout", out)
	for _, want := range []string{"per output (classes, 3 outputs)", "ground truth per output:", "relevant (output, feature) pairs"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain -problem lacks %q", want)
		}
	}

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), serveArgsEnv+"=-problem\n"+dir)
	m, err := procmodel.Start(context.Background(), []string{exe, "-test.run=^TestServeHelperProcess$"},
		procmodel.Options{Env: env, Timeout: time.Minute, Stderr: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if m.Outputs() != 3 {
		t.Fatalf("tempora serve announces %d outputs, want 3", m.Outputs())
	}
	x := p.Data.X
	want, got := make([]float64, 3*x.M), make([]float64, 3*x.M)
	if err := p.Model.Predict(want, x); err != nil {
		t.Fatal(err)
	}
	if err := m.Predict(got, x); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("served predictions differ from the model's in process")
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-outputs", "steps:3"}, "steps have one output per timestep"},
		{[]string{"-outputs", "horizons", "-peek"}, "-peek and -period apply to -outputs steps only"},
		{[]string{"-peek"}, "-peek needs -outputs steps"},
		{[]string{"-outputs", "horizons", "-task", "classification"}, "-task does not apply to -outputs"},
		{[]string{"-outputs", "rings"}, `-outputs "rings": want classes[:K], horizons[:K] or steps`},
	} {
		_, _, err := runCmd(t, append([]string{"synth", "-out", dir}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
}
