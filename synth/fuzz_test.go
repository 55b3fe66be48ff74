package synth

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/errmsg"
)

// Fuzz targets of the JSON files of a saved problem. Seeds are in
// testdata/fuzz/<target> (the files of a problem written by Save) and
// below. Run one with
//
//	go test ./synth/ -run '^$' -fuzz '^FuzzLoad$' -fuzztime 1m

// fuzzProblem returns the files of a small saved problem, by name.
func fuzzProblem(tb testing.TB) map[string][]byte {
	tb.Helper()
	p, err := Generate(Config{Instances: 6, Features: 3, Timesteps: 4, FractionRelevant: 0.5, Task: tempora.Classification, Noise: AutoNoise}, 7)
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	if err := p.Save(dir); err != nil {
		tb.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range []string{DataFile, TargetsFile, ModelFile, TruthFile, ProblemFile} {
		if files[name], err = os.ReadFile(filepath.Join(dir, name)); err != nil {
			tb.Fatal(err)
		}
	}
	return files
}

// fastTempDir returns a temporary directory removed at the end of the
// test, in memory (/dev/shm) where there is such a file system: Save syncs
// every file it writes, which on a busy disk can take longer than the rest
// of a fuzz call together.
func fastTempDir(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("/dev/shm", "tempora-fuzz-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// jsonFiles are the files FuzzLoad replaces, indexed by its which argument.
var jsonFiles = []string{ProblemFile, ModelFile, TruthFile}

// checkSynthError fails unless err is one line with synth's prefix once.
func checkSynthError(t *testing.T, err error) {
	t.Helper()
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "synth: "); !ok || errmsg.Trim(rest) != rest {
		t.Fatalf("error %q does not carry exactly one prefix, synth's", msg)
	}
	if strings.ContainsAny(msg, "\n\r") {
		t.Fatalf("error is not one line: %q", msg)
	}
}

// FuzzLoad replaces one JSON file of a valid saved problem (problem.json,
// model.json or truth.json, chosen by which) with arbitrary bytes and loads
// it. Properties: no panic; a one-line error with synth's prefix once;
// on success, Save writes files that Load reads back, and saving the
// reloaded problem gives byte-identical files (Save∘Load is a fixed point),
// so an accepted file always round-trips.
func FuzzLoad(f *testing.F) {
	base := fuzzProblem(f)
	for k, name := range jsonFiles {
		f.Add(uint8(k), base[name])
	}
	f.Add(uint8(0), []byte(`{"format": "tempora-synth-problem/1", "config": {"instances": 1}}`))
	f.Add(uint8(1), []byte(`{"format": "tempora-synth-model/9"}`))
	f.Add(uint8(2), []byte(`[]`))
	f.Add(uint8(2), append(append([]byte{}, base[TruthFile]...), " {}"...))
	f.Fuzz(func(t *testing.T, which uint8, content []byte) {
		dir := fastTempDir(t)
		for name, b := range base {
			if name == jsonFiles[int(which)%len(jsonFiles)] {
				b = content
			}
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p, err := Load(dir)
		if err != nil {
			checkSynthError(t, err)
			return
		}
		saved := [2]string{filepath.Join(dir, "saved1"), filepath.Join(dir, "saved2")}
		if err := p.Save(saved[0]); err != nil {
			t.Fatalf("Save of a loaded problem: %v", err)
		}
		q, err := Load(saved[0])
		if err != nil {
			t.Fatalf("Load of a saved loaded problem: %v", err)
		}
		if err := q.Save(saved[1]); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{DataFile, TargetsFile, ModelFile, TruthFile, ProblemFile} {
			a, _ := os.ReadFile(filepath.Join(saved[0], name))
			b, _ := os.ReadFile(filepath.Join(saved[1], name))
			if !bytes.Equal(a, b) {
				t.Fatalf("%s differs between two saves of the same problem:\n%s\n%s", name, a, b)
			}
		}
	})
}

// FuzzModelJSON feeds Model.UnmarshalJSON arbitrary bytes. Properties: no
// panic; a one-line error with synth's prefix once; on success, the model
// marshals to JSON that unmarshals to a model with the same JSON, and both
// models predict the same (bit for bit) on random data of their shape.
func FuzzModelJSON(f *testing.F) {
	base := fuzzProblem(f)
	f.Add(base[ModelFile])
	f.Add([]byte(`{"format": "tempora-synth-model/1", "num_features": 0}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"format": "tempora-synth-model/1"} {}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var m Model
		if err := strictUnmarshal(in, &m); err != nil {
			checkSynthError(t, errmsg.Wrap(err, "synth"))
			return
		}
		if m.feats == nil && m.d == 0 { // JSON null leaves the model untouched
			return
		}
		b, err := json.Marshal(&m)
		if err != nil {
			t.Fatalf("Marshal of an unmarshalled model: %v", err)
		}
		var m2 Model
		if err := strictUnmarshal(b, &m2); err != nil {
			t.Fatalf("Unmarshal of a marshalled model: %v\n%s", err, b)
		}
		b2, _ := json.Marshal(&m2)
		if !bytes.Equal(b, b2) {
			t.Fatalf("JSON round trip:\n%s\n%s", b, b2)
		}
		if m.d*m.l > 1<<16 {
			return // too large to evaluate quickly
		}
		x := tempora.NewTensor(3, m.d, m.l)
		rng := tempora.NewRand(1, "fuzz-model")
		for k := range x.Data {
			x.Data[k] = rng.NormFloat64()
		}
		y1, y2 := make([]float64, 3), make([]float64, 3)
		err1, err2 := m.Targets(y1, x), m2.Targets(y2, x)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("Targets: %v, after the round trip %v", err1, err2)
		}
		for i := range y1 {
			if math.Float64bits(y1[i]) != math.Float64bits(y2[i]) {
				t.Fatalf("instance %d: %v, after the round trip %v", i, y1[i], y2[i])
			}
		}
	})
}
