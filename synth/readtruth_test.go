package synth

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestReadTruth reads the truth Save wrote, without the rest of the
// problem, and refuses a file of another format or misnumbered features.
func TestReadTruth(t *testing.T) {
	p, err := Generate(Config{Instances: 60, Features: 5, Timesteps: 8, Task: tempora.Classification, Noise: AutoNoise}, 5)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := p.Save(dir); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{DataFile, TargetsFile, ModelFile, ProblemFile} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	truth, l, err := ReadTruth(dir)
	if err != nil {
		t.Fatal(err)
	}
	if l != 8 || !slices.Equal(truth, p.Truth) {
		t.Errorf("read %d timesteps and %+v, want 8 and %+v", l, truth, p.Truth)
	}
	path := filepath.Join(dir, TruthFile)
	b, _ := os.ReadFile(path)
	for name, edit := range map[string]func(string) string{
		"format":    func(s string) string { return strings.Replace(s, TruthFormat, "tempora-synth-truth/9", 1) },
		"numbering": func(s string) string { return strings.Replace(s, `"index": 1`, `"index": 7`, 1) },
		"JSON":      func(s string) string { return s[:len(s)/2] },
	} {
		if err := os.WriteFile(path, []byte(edit(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ReadTruth(dir); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming %s", name, err, path)
		}
	}
}
