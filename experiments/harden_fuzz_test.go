package experiments

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadManifest reads arbitrary manifest files, then merges the run
// directory they describe (no records): neither may panic, run out of
// memory or hang whatever the manifest claims (issue 24), and a manifest
// that reads reads back the same after being written again.
func FuzzReadManifest(f *testing.F) {
	f.Add([]byte(`{"format": "tempora-manifest/1", "suite": "grid", "grid": "instances=60;features=3;timesteps=6", "quick": true, "seed": 7, "models": 2, "methods": ["TIME", "TIME-n"], "shard": {"I": 0, "N": 0}}`))
	f.Add([]byte(`{"format": "tempora-manifest/1", "suite": "table1", "quick": true, "seed": 1, "models": 1000000000, "methods": ["TIME"], "shard": {"I": 0, "N": 0}}`))
	f.Add([]byte(`{"format": "tempora-manifest/1", "suite": "testsize-regression", "models": 3, "methods": ["X"], "shard": {"I": 5, "N": 2}}`))
	f.Add([]byte(`{"format": "tempora-manifest/1", "suite": "grid", "grid": "noise=0,0.5,1,2;gamma=0.9,0.95", "models": -1, "methods": []}`))
	f.Add([]byte(`{"format": "tempora-manifest/2"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		in := filepath.Join(dir, "in")
		if err := os.Mkdir(in, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(in, "manifest.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := ReadManifest(in)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "experiments: ") {
				t.Errorf("error without the package prefix: %v", err)
			}
			return
		}
		if m.Format != ManifestFormat || m.Models < 0 || m.Models > MaxRecords || m.Shard.validate() != nil {
			t.Fatalf("ReadManifest accepted %+v", m)
		}
		again := filepath.Join(dir, "again")
		if err := os.Mkdir(again, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := writeManifest(again, m); err != nil {
			t.Fatal(err)
		}
		m2, err := ReadManifest(again)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("manifest %+v read back as %+v, %v", m, m2, err)
		}
		// Merging the (empty) run lists the records it lacks, at most
		// MaxRecords of them.
		err = Merge(filepath.Join(dir, "out"), []string{in})
		if err != nil && !strings.HasPrefix(err.Error(), "experiments: ") {
			t.Errorf("merge error without the package prefix: %v", err)
		}
	})
}

// FuzzReadIndex reads arbitrary problem indexes: no panic, and every
// problem directory of an index that reads lies inside the index's
// directory.
func FuzzReadIndex(f *testing.F) {
	f.Add([]byte(`{"format": "tempora-problems/1", "suite": "grid", "grid": "instances=60", "quick": true, "seed": 7, "models": 1, "problems": [{"dir": "grid/instances=60/model=0", "params": [{"key": "instances", "value": "60"}], "model": 0, "seed": 3, "instances": 60, "features": 10, "timesteps": 20, "task": "classification"}]}`))
	f.Add([]byte(`{"format": "tempora-problems/1", "problems": [{"dir": "../x"}]}`))
	f.Add([]byte(`{"format": "tempora-problems/1", "problems": [{"dir": "a/../../x"}]}`))
	f.Add([]byte(`{"format": "tempora-problems/1", "problems": [{"dir": "/etc"}]}`))
	f.Add([]byte(`{"format": "tempora-problems/1", "problems": [{"dir": "."}, {"dir": "a\\..\\..\\b"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, IndexFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
		idx, err := ReadIndex(dir)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "experiments: ") {
				t.Errorf("error without the package prefix: %v", err)
			}
			return
		}
		if idx.Format != IndexFormat {
			t.Fatalf("format %q accepted", idx.Format)
		}
		for _, e := range idx.Problems {
			p := filepath.Join(dir, filepath.FromSlash(e.Dir))
			rel, err := filepath.Rel(dir, p)
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(e.Dir) {
				t.Fatalf("problem directory %q lies outside the index's directory (%s)", e.Dir, p)
			}
		}
		if _, err := json.Marshal(idx); err != nil {
			t.Fatal(err)
		}
	})
}
