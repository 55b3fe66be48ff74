package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/method"
)

// localRun returns the per-instance attributions the table's method name
// gives on the problem in dir with the given parameters and seed 0, run in
// process (the expectation of "tempora explain -attributions"), and the
// number of outputs they are of.
func localRun(t *testing.T, dir, name string, given map[string]string) (*tempora.Tensor, int) {
	t.Helper()
	p, err := newProgram(nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := p.table.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	prob, err := loadProblem(dir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := m.Values(given, false)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := m.Explainer(method.Config{Data: prob.data, Values: vals})
	if err != nil {
		t.Fatal(err)
	}
	e, local, err := method.MeasureLocal(context.Background(), ex.(method.LocalExplainer), prob.model, prob.data)
	if err != nil {
		t.Fatal(err)
	}
	return local, method.ExplainedOutputs(e, prob.data)
}

// readAttributions reads an -attributions file and its raw shape.
func readAttributionsFile(t *testing.T, path string) (*tempora.Tensor, int) {
	t.Helper()
	local, k, err := dataio.ReadAttributionsNPY(path)
	if err != nil {
		t.Fatal(err)
	}
	return local, k
}

// evaluateJSON runs "tempora evaluate -problem dir -attributions file
// -json" and returns its metrics.
func evaluateJSON(t *testing.T, dir, file string) map[string]float64 {
	t.Helper()
	out := mustRun(t, "evaluate", "-problem", dir, "-attributions", file, "-json")
	var m map[string]float64
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	return m
}

// TestExplainAttributions checks "tempora explain -attributions": the
// file holds the local method's per-instance attributions as the method
// gives them in process, in the layout "tempora evaluate -attributions"
// reads (the round trip scores them per instance: the same attributions
// with each instance given its neighbour's score worse), and the
// explanation is the same with and without the file.
func TestExplainAttributions(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "p")
	mustRun(t, "synth", "-out", dir, "-instances", "60", "-features", "4", "-timesteps", "8", "-aggregator", "max", "-seed", "3")
	cases := []struct {
		method    string
		params    []string
		instances int
	}{
		{"OCC", nil, 60},
		{"TimeSHAP", []string{"-instances-explained", "7", "-coalitions", "300"}, 7},
		{"LIME", []string{"-samples", "300", "-instances-explained", "9"}, 9},
	}
	for _, c := range cases {
		t.Run(c.method, func(t *testing.T) {
			file := filepath.Join(tmp, c.method+".npy")
			withFile := filepath.Join(tmp, c.method+".json")
			args := append([]string{"explain", "-problem", dir, "-method", c.method, "-quiet", "-attributions", file, "-json", withFile}, c.params...)
			_, errOut, err := runCmd(t, args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			if want := "wrote " + file + " (" + c.method + " attributions of "; !strings.Contains(errOut, want) {
				t.Errorf("stderr lacks %q:\n%s", want, errOut)
			}
			got, k := readAttributionsFile(t, file)
			given := map[string]string{}
			for i := 0; i < len(c.params); i += 2 {
				given[strings.TrimPrefix(c.params[i], "-")] = c.params[i+1]
			}
			want, wk := localRun(t, dir, c.method, given)
			if k != 1 || wk != 1 || got.M != c.instances || got.D != 4 || got.L != 8 {
				t.Fatalf("file of %d outputs, %d × %d × %d; want 1 output, %d × 4 × 8", k, got.M, got.D, got.L, c.instances)
			}
			if !slices.Equal(got.Data, want.Data) {
				t.Errorf("the file's attributions differ from %s's in process", c.method)
			}

			// The explanation is the same without -attributions.
			without := filepath.Join(tmp, c.method+"-without.json")
			mustRun(t, append([]string{"explain", "-problem", dir, "-method", c.method, "-quiet", "-json", without}, c.params...)...)
			if a, b := cellsOf(t, withFile), cellsOf(t, without); !slices.Equal(a, b) {
				t.Errorf("cells with -attributions %v, without %v", a, b)
			}

			// Round trip: evaluate reads the file, instance by instance.
			m := evaluateJSON(t, dir, file)
			auroc, ok := m["instance-timestep-auroc"]
			if !ok {
				t.Fatalf("evaluate of the file: no instance-timestep-auroc in %v", m)
			}
			shifted := got.Clone()
			p := got.D * got.L
			for i := range got.M { // instance i gets instance i+1's attributions
				copy(shifted.Data[i*p:(i+1)*p], got.Data[((i+1)%got.M)*p:])
			}
			sf := filepath.Join(tmp, c.method+"-shifted.npy")
			if err := dataio.WriteAttributionsNPY(sf, shifted, 1); err != nil {
				t.Fatal(err)
			}
			if s := evaluateJSON(t, dir, sf)["instance-timestep-auroc"]; !(auroc > s) {
				t.Errorf("instance-timestep-auroc %v of the file, %v with instances shifted: want the file's higher", auroc, s)
			}
		})
	}
}

// cellsOf returns the cells of an explanation written by -json.
func cellsOf(t *testing.T, path string) []float64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Cells [][]float64 }
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return slices.Concat(e.Cells...)
}

// TestExplainAttributionsOutputs checks the layout for a model with
// several outputs: instances × outputs × features × timesteps for the
// whole model, instances × features × timesteps for one output (-output),
// each as the method gives it in process.
func TestExplainAttributionsOutputs(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "p")
	mustRun(t, "synth", "-out", dir, "-outputs", "classes:3", "-instances", "30", "-features", "3", "-timesteps", "5", "-seed", "4")
	for _, c := range []struct {
		output string
		k      int
	}{{"", 3}, {"1", 1}} {
		file := filepath.Join(tmp, "a"+c.output+".npy")
		args := []string{"explain", "-problem", dir, "-method", "occ", "-quiet", "-attributions", file}
		given := map[string]string{}
		if c.output != "" {
			args = append(args, "-output", c.output)
			given["output"] = c.output
		}
		mustRun(t, args...)
		got, k := readAttributionsFile(t, file)
		want, wk := localRun(t, dir, "OCC", given)
		if k != c.k || wk != c.k || got.M != 30*c.k || !slices.Equal(got.Data, want.Data) {
			t.Errorf("-output %q: file of %d outputs and %d rows, want %d outputs of 30 instances as OCC gives them", c.output, k, got.M, c.k)
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		shape := "(30, 3, 3, 5)"
		if c.k == 1 {
			shape = "(30, 3, 5)"
		}
		if !strings.Contains(string(raw[:128]), "'shape': "+shape) {
			t.Errorf("-output %q: header %q, want shape %s", c.output, raw[:128], shape)
		}
	}
}

// TestExplainAttributionsErrors checks that -attributions with a method
// without per-instance attributions is a usage error naming the methods
// with them, and that the file may not be another output or an input.
func TestExplainAttributionsErrors(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "p")
	mustRun(t, "synth", "-out", dir, "-instances", "20", "-features", "2", "-timesteps", "4")
	file := filepath.Join(tmp, "a.npy")
	for _, m := range []string{"TIME", "PERM", "SAGE", "TIME-n"} {
		_, _, err := runCmd(t, "explain", "-problem", dir, "-method", m, "-attributions", file)
		if exitStatus(err) != 2 || !strings.Contains(err.Error(), "gives no per-instance attributions") ||
			!strings.Contains(err.Error(), "the methods that do: LIME, OCC, TimeSHAP") {
			t.Errorf("-method %s -attributions: %v, want a usage error naming LIME, OCC, TimeSHAP", m, err)
		}
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a refused -attributions left a file: %v", err)
	}
	_, _, err := runCmd(t, "explain", "-problem", dir, "-method", "OCC", "-attributions", file, "-json", file)
	if err == nil || !strings.Contains(err.Error(), "name the same file") {
		t.Errorf("-attributions and -json the same file: %v", err)
	}
	_, _, err = runCmd(t, "explain", "-problem", dir, "-method", "OCC", "-attributions", filepath.Join(dir, "data.npy"))
	if err == nil || !strings.Contains(err.Error(), "does not overwrite its input") {
		t.Errorf("-attributions the problem's data: %v", err)
	}
}
