package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/record"
)

// IncompleteError reports records that a merge expected but did not find.
type IncompleteError struct {
	// Missing are the keys of the missing records, sorted.
	Missing []string
}

func (e *IncompleteError) Error() string {
	const show = 5
	s := fmt.Sprintf("experiments: merged output is incomplete: %d records missing", len(e.Missing))
	if len(e.Missing) > 0 {
		s += " (" + strings.Join(e.Missing[:min(show, len(e.Missing))], ", ")
		if len(e.Missing) > show {
			s += ", …"
		}
		s += ")"
	}
	return s
}

// Merge combines run directories of one suite's problems into out: the
// shards of a run (Run with Options.Shard), and runs of other methods on the
// same problems (Run, or EvaluateProblems for an outside tool's scores).
// It checks that their manifests describe the same suite, grid, scale, seed
// and number of models, and that no two inputs of the same methods are the
// same shard; copies every record (byte for byte; a key present in two
// inputs must have identical files); writes out/manifest.json (without a
// shard, listing the methods of every input) and out/bench.txt; and finally
// checks that every record of those methods on the suite's problems is
// present, returning an *IncompleteError naming what is missing. Merge
// needs no method table: records are data.
func Merge(out string, dirs []string) error {
	if out == "" {
		return fmt.Errorf("experiments: no output directory")
	}
	if len(dirs) == 0 {
		return fmt.Errorf("experiments: nothing to merge")
	}
	var first *Manifest
	var methods []string
	seen := map[string]string{} // methods and shard -> input dir
	for _, d := range dirs {
		m, err := ReadManifest(d)
		if err != nil {
			return fmt.Errorf("experiments: merge input %s: %w", d, err)
		}
		if first == nil {
			first = m
		} else if !m.sameProblems(first) || m.Models != first.Models {
			return fmt.Errorf("experiments: merge inputs %s and %s hold different problems (suite, grid, scale, seed or models differ)", dirs[0], d)
		}
		for _, name := range m.Methods {
			if !slices.Contains(methods, name) {
				methods = append(methods, name)
			}
		}
		if m.Shard.N > 0 {
			k := strings.Join(m.Methods, ",") + " " + m.Shard.String()
			if prev, ok := seen[k]; ok {
				return fmt.Errorf("experiments: merge inputs %s and %s are both shard %s of the same methods", prev, d, m.Shard)
			}
			seen[k] = d
		}
	}
	if abs, err := filepath.Abs(out); err == nil {
		for _, d := range dirs {
			if ad, err := filepath.Abs(d); err == nil && ad == abs {
				return fmt.Errorf("experiments: merge output %s is also an input", out)
			}
		}
	}
	if old, err := ReadManifest(out); err == nil {
		if !old.sameProblems(first) {
			return fmt.Errorf("experiments: %s holds a run of suite %s with other settings", out, old.Suite)
		}
		for _, name := range old.Methods {
			if !slices.Contains(methods, name) {
				methods = append(methods, name)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}

	outRec := filepath.Join(out, "records")
	from := map[string]string{} // relative path -> input dir
	for _, d := range dirs {
		src := filepath.Join(d, "records")
		err := filepath.WalkDir(src, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, os.ErrNotExist) && p == src {
					return fs.SkipDir
				}
				return err
			}
			if de.IsDir() || strings.HasPrefix(de.Name(), ".") || !strings.HasSuffix(de.Name(), ".json") {
				return nil
			}
			rel, _ := filepath.Rel(src, p)
			if _, err := record.Read(p); err != nil {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			dst := filepath.Join(outRec, rel)
			if prev, ok := from[rel]; ok {
				old, err := os.ReadFile(dst)
				if err != nil {
					return err
				}
				if !bytes.Equal(old, b) {
					return fmt.Errorf("experiments: record %s differs between merge inputs %s and %s", filepath.ToSlash(rel), prev, d)
				}
				return nil
			}
			from[rel] = d
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			return atomicfile.WriteBytes(dst, b)
		})
		if err != nil {
			return err
		}
	}
	m := *first
	m.Shard = Shard{}
	m.Methods = methods
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeManifest(out, &m); err != nil {
		return err
	}
	if err := WriteBench(out); err != nil {
		return err
	}
	keys, err := m.keys()
	if err != nil {
		return err
	}
	var missing []string
	for _, k := range keys {
		if _, err := os.Stat(filepath.Join(outRec, filepath.FromSlash(k)+".json")); err != nil {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return &IncompleteError{Missing: missing}
	}
	return nil
}

// keys returns the keys of every record of the manifest's methods on its
// problems.
func (m *Manifest) keys() ([]string, error) {
	s, err := LookupSuite(m.Suite)
	if err != nil {
		return nil, err
	}
	settings, err := s.Settings(m.Quick, m.Grid)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, st := range settings {
		for k := range m.Models {
			for _, name := range m.Methods {
				r := record.Record{Suite: s.Name, Params: st.Params, Model: k, Method: name}
				keys = append(keys, r.Key())
			}
		}
	}
	return keys, nil
}
