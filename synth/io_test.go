package synth

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
	"github.com/tempora-dev/tempora/internal/errmsg"
)

func TestSaveLoadRoundTrip(t *testing.T) {
	for _, cfg := range testConfigs() {
		p, err := Generate(cfg, 21)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{p.Data.X.M, 37} { // the whole problem and a head
			q, err := p.Head(n)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := q.Save(dir); err != nil {
				t.Fatal(err)
			}
			r, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if r.Config != q.Config || r.Seed != q.Seed {
				t.Errorf("config/seed %+v %d, want %+v %d", r.Config, r.Seed, q.Config, q.Seed)
			}
			if !reflect.DeepEqual(r.Truth, q.Truth) {
				t.Errorf("truth differs after round trip:\n%+v\n%+v", r.Truth, q.Truth)
			}
			if !reflect.DeepEqual(r.Generators, q.Generators) {
				t.Error("generators differ after round trip")
			}
			if !reflect.DeepEqual(r.Data, q.Data) {
				t.Error("dataset differs after round trip")
			}
			if !reflect.DeepEqual(r.Model, q.Model) {
				t.Error("model differs after round trip")
			}
			a, b := make([]float64, n), make([]float64, n)
			q.Model.Predict(a, q.Data.X)
			r.Model.Predict(b, r.Data.X)
			if !reflect.DeepEqual(a, b) {
				t.Error("predictions differ after round trip")
			}
			// Saving the loaded problem gives the same bytes.
			if x, y := saveFiles(t, q), saveFiles(t, r); !reflect.DeepEqual(x, y) {
				t.Error("re-saving a loaded problem changes its files")
			}
		}
	}
}

// editJSON rewrites a JSON file through a generic map.
func editJSON(t *testing.T, path string, edit func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	edit(v)
	if b, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func feature(v map[string]any, j int) map[string]any {
	return v["features"].([]any)[j].(map[string]any)
}

func TestLoadErrors(t *testing.T) {
	p, err := Generate(Config{Instances: 60, Features: 5, Timesteps: 8, Task: tempora.Classification, Noise: AutoNoise}, 5)
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	if err := p.Save(src); err != nil {
		t.Fatal(err)
	}
	// A weighted-sum feature and a relevant feature to corrupt.
	wj, rj := -1, p.Model.Relevant()[0]
	for j := range 5 {
		if p.Model.Feature(j).Aggregator.OrderingSensitive() {
			wj = j
		}
	}
	if wj < 0 {
		t.Fatal("test problem has no weighted-sum feature; pick another seed")
	}
	writeData := func(dir string, x *tempora.Tensor) {
		if err := dataio.WriteTensorNPY(filepath.Join(dir, DataFile), x); err != nil {
			t.Fatal(err)
		}
	}
	writeTargets := func(dir string, y []float64) {
		if err := dataio.WriteVectorNPY(filepath.Join(dir, TargetsFile), y); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name    string
		corrupt func(dir string)
		want    string
	}{
		{"missing data", func(d string) { os.Remove(filepath.Join(d, DataFile)) }, "data.npy"},
		{"missing targets", func(d string) { os.Remove(filepath.Join(d, TargetsFile)) }, "targets.npy"},
		{"missing model", func(d string) { os.Remove(filepath.Join(d, ModelFile)) }, "model.json"},
		{"missing truth", func(d string) { os.Remove(filepath.Join(d, TruthFile)) }, "truth.json"},
		{"missing problem", func(d string) { os.Remove(filepath.Join(d, ProblemFile)) }, "problem.json"},
		{"garbage model", func(d string) { os.WriteFile(filepath.Join(d, ModelFile), []byte("{not json"), 0o644) }, "model.json"},
		{"garbage data", func(d string) { os.WriteFile(filepath.Join(d, DataFile), []byte("\x93NUMPY junk"), 0o644) }, "data.npy"},
		{"model format", func(d string) {
			editJSON(t, filepath.Join(d, ModelFile), func(v map[string]any) { v["format"] = "tempora-synth-model/9" })
		}, `model format "tempora-synth-model/9"`},
		{"model unknown field", func(d string) {
			editJSON(t, filepath.Join(d, ModelFile), func(v map[string]any) { v["bogus"] = 1 })
		}, "unknown field"},
		{"model missing sd", func(d string) {
			editJSON(t, filepath.Join(d, ModelFile), func(v map[string]any) { delete(feature(v, 0), "sd") })
		}, "feature 0 lacks"},
		{"model zero sd", func(d string) {
			editJSON(t, filepath.Join(d, ModelFile), func(v map[string]any) { feature(v, 1)["sd"] = 0 })
		}, "feature 1: standardisation SD 0"},
		{"model weights", func(d string) {
			editJSON(t, filepath.Join(d, ModelFile), func(v map[string]any) { feature(v, wj)["weights"] = []float64{1} })
		}, "1 weights for a window"},
		{"model aggregator", func(d string) {
			editJSON(t, filepath.Join(d, ModelFile), func(v map[string]any) { feature(v, 0)["aggregator"] = "median" })
		}, `unknown aggregator "median"`},
		{"model D", func(d string) {
			editJSON(t, filepath.Join(d, ModelFile), func(v map[string]any) { v["num_features"] = 6 })
		}, "model has 5 features, announces 6"},
		{"model huge L", func(d string) { // found by FuzzModelJSON: a division by zero
			editJSON(t, filepath.Join(d, ModelFile), func(v map[string]any) { v["num_timesteps"] = 1 << 61 })
		}, "more than 2147483648 values per instance"},
		{"model L", func(d string) {
			editJSON(t, filepath.Join(d, ModelFile), func(v map[string]any) { v["num_timesteps"] = 9 })
		}, "problem.json says"},
		{"model relevance", func(d string) {
			editJSON(t, filepath.Join(d, ModelFile), func(v map[string]any) { feature(v, rj)["relevant"] = false })
		}, "relevant features"},
		{"model coefficient", func(d string) {
			editJSON(t, filepath.Join(d, ModelFile), func(v map[string]any) { feature(v, rj)["coefficient"] = 3.5 })
		}, "disagrees with the model"},
		{"truth format", func(d string) {
			editJSON(t, filepath.Join(d, TruthFile), func(v map[string]any) { v["format"] = "x" })
		}, `format "x"`},
		{"truth count", func(d string) {
			editJSON(t, filepath.Join(d, TruthFile), func(v map[string]any) { v["features"] = v["features"].([]any)[:4] })
		}, "truth of 4 features"},
		{"truth window", func(d string) {
			editJSON(t, filepath.Join(d, TruthFile), func(v map[string]any) { feature(v, 2)["window"] = []int{0, 1} })
		}, "feature 2 (relevant"},
		{"truth relevance", func(d string) {
			editJSON(t, filepath.Join(d, TruthFile), func(v map[string]any) { feature(v, rj)["relevant"] = false })
		}, "disagrees with the model"},
		{"truth ordering", func(d string) {
			editJSON(t, filepath.Join(d, TruthFile), func(v map[string]any) {
				f := feature(v, rj)
				f["window_ordering_important"] = !f["window_ordering_important"].(bool)
			})
		}, "ordering flags"},
		{"truth effect", func(d string) {
			editJSON(t, filepath.Join(d, TruthFile), func(v map[string]any) { feature(v, rj)["effect_size"] = -1 })
		}, "effect size -1"},
		{"problem format", func(d string) {
			editJSON(t, filepath.Join(d, ProblemFile), func(v map[string]any) { v["format"] = "y" })
		}, `format "y"`},
		{"problem config", func(d string) {
			editJSON(t, filepath.Join(d, ProblemFile), func(v map[string]any) { v["config"].(map[string]any)["timesteps"] = 1 })
		}, "sequence length 1"},
		{"problem noise", func(d string) {
			editJSON(t, filepath.Join(d, ProblemFile), func(v map[string]any) { v["config"].(map[string]any)["noise"] = "0.25" })
		}, "noise multiplier"},
		{"generators count", func(d string) {
			editJSON(t, filepath.Join(d, ProblemFile), func(v map[string]any) { v["generators"] = v["generators"].([]any)[:3] })
		}, "3 generators for 5 features"},
		{"generator window", func(d string) {
			editJSON(t, filepath.Join(d, ProblemFile), func(v map[string]any) {
				v["generators"].([]any)[1].(map[string]any)["window"] = []int{0, 1}
			})
		}, "generator 1 has window"},
		{"data D", func(d string) { writeData(d, tempora.NewTensor(60, 6, 8)) }, "data has 6 features × 8 timesteps"},
		{"data M", func(d string) { writeData(d, tempora.NewTensor(61, 5, 8)) }, "61 instances, more than the 60 generated"},
		{"data values", func(d string) {
			// Saturate a relevant feature's window: every label becomes the
			// same, so about half of them disagree with targets.npy.
			x := p.Data.X.Clone()
			f := p.Model.Feature(rj)
			for i := range x.M {
				for tt := f.Window.Start; tt <= f.Window.End; tt++ {
					x.Set(i, rj, tt, 100)
				}
			}
			writeData(d, x)
		}, "disagrees with the model"},
		{"targets length", func(d string) { writeTargets(d, p.Data.Y[:59]) }, "59 targets for 60 instances"},
		{"targets value", func(d string) {
			y := append([]float64(nil), p.Data.Y...)
			y[7] = 1 - y[7]
			writeTargets(d, y)
		}, "target"},
		{"data trailing bytes", func(d string) {
			f, _ := os.OpenFile(filepath.Join(d, DataFile), os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte{0})
			f.Close()
		}, "data.npy: 1 unexpected byte after"},
		{"config instances", func(d string) {
			editJSON(t, filepath.Join(d, ProblemFile), func(v map[string]any) { v["config"].(map[string]any)["instances"] = 1 })
		}, "problem.json: 1 instances, need at least 2"},
	} {
		dir := t.TempDir()
		for _, name := range []string{DataFile, TargetsFile, ModelFile, TruthFile, ProblemFile} {
			b, err := os.ReadFile(filepath.Join(src, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c.corrupt(dir)
		_, err := Load(dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Load error %v, want one containing %q", c.name, err, c.want)
			continue
		}
		// Issue 12, defect 10: one package prefix, synth's, at the start
		// (no "synth: dataio: …", "problem.json: synth: …" or
		// "synth: …: synth: model …").
		if rest, ok := strings.CutPrefix(err.Error(), "synth: "); !ok || errmsg.Trim(rest) != rest {
			t.Errorf("%s: Load error %q does not carry exactly one prefix, synth's", c.name, err)
		}
	}
}

// TestSaveContextCancelled checks that a cancelled save says so (its error
// wraps ctx's) and writes no data file.
func TestSaveContextCancelled(t *testing.T) {
	p, err := Generate(testConfigs()[0], 21)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := t.TempDir()
	err = p.SaveContext(ctx, dir)
	if !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "synth: saving the problem: ") {
		t.Fatalf("error %v, want a synth error wrapping context.Canceled", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left in the directory: %v", entries)
	}
}
