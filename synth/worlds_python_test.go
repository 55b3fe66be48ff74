package synth

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/npy"
)

// worldsPythonCheck compares the Python package's SynthModel (and its
// torch module when PyTorch is installed) read from DIR/model.json with
// the Go model's predictions DIR/predictions.npy on DIR/data.npy, with the
// tolerance of python/tests/test_synthmodel.py.
const worldsPythonCheck = `
import os, sys, numpy as np, tempora
try:
    import torch
except ImportError:
    torch = None
for d in sys.argv[1:]:
    m = tempora.SynthModel.read(d)
    x, want = np.load(os.path.join(d, "data.npy")), np.load(os.path.join(d, "predictions.npy"))
    got = {"numpy": m(x)}
    if torch is not None:
        got["torch"] = m.torch()(torch.as_tensor(x)).detach().numpy()
    for k, g in got.items():
        err = float(np.max(np.abs(g - want) / (1 + np.abs(want))))
        if g.shape != want.shape or not err <= 1e-9:
            sys.exit("%s (%s): shape %s, error %g" % (os.path.basename(d), k, g.shape, err))
    print(os.path.basename(d), " ".join(sorted(got)))
`

// TestWorldModelsInPython checks that the models of the worlds that have
// no saved problem (tempora problems refuses their suites: the windows
// world, with and without slopes, and the correlated world's two black
// boxes) are described completely by the model JSON the Python package
// reads: SynthModel evaluates each to the Go model's predictions within
// 1e-9. It needs /usr/bin/python3 with NumPy.
func TestWorldModelsInPython(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skipf("needs %s with NumPy: %v", python, err)
	}
	pkg, err := filepath.Abs(filepath.Join("..", "python"))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PYTHONPATH", pkg)
	worlds := map[string]func() (*Model, *tempora.Tensor, error){
		"windows": func() (*Model, *tempora.Tensor, error) {
			p, err := GenerateWindows(WindowsConfig{Instances: 40, Features: 4, Timesteps: 24, Relevant: 2, Windows: 3, NoiseScale: 0.1}, 5)
			if err != nil {
				return nil, nil, err
			}
			return p.Model, p.Data.X, nil
		},
		"windows-slope": func() (*Model, *tempora.Tensor, error) {
			p, err := GenerateWindows(WindowsConfig{Instances: 40, Features: 3, Timesteps: 16, Relevant: 2, Windows: 1, Slope: true}, 6)
			if err != nil {
				return nil, nil, err
			}
			return p.Model, p.Data.X, nil
		},
	}
	for _, spread := range []bool{false, true} {
		name := "correlated"
		if spread {
			name += "-spread"
		}
		worlds[name] = func() (*Model, *tempora.Tensor, error) {
			p, err := Correlated(CorrelatedConfig{Instances: 40, Rho: 0.9, Spread: spread}, 7)
			if err != nil {
				return nil, nil, err
			}
			return p.Model.(correlatedModel).m, p.Data.X, nil
		}
	}
	root := t.TempDir()
	var dirs []string
	for name, world := range worlds {
		m, x, err := world()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		pred := make([]float64, x.M)
		if err := m.Predict(pred, x); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, ModelFile), b)
		writeNPY(t, filepath.Join(dir, DataFile), []int{x.M, x.D, x.L}, x.Data)
		writeNPY(t, filepath.Join(dir, "predictions.npy"), []int{x.M}, pred)
		dirs = append(dirs, dir)
	}
	out, err := exec.Command(python, append([]string{"-c", worldsPythonCheck}, dirs...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("checked:\n%s", out)
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeNPY(t *testing.T, path string, shape []int, data []float64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := npy.Write(f, shape, data); err != nil {
		t.Fatal(err)
	}
}
