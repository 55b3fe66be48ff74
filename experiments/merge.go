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

// Merge combines the outputs of sharded runs (directories written by Run)
// into out: it checks that their manifests describe the same run, copies
// every record (byte for byte; a key present in two inputs must have
// identical files), writes out/manifest.json (without a shard) and
// out/bench.txt, and finally checks the merged records against the suite's
// item list, returning an *IncompleteError naming what is missing. extra
// must list the Extra methods of the runs, if any.
func Merge(out string, dirs []string, extra []Method) error {
	if out == "" {
		return fmt.Errorf("experiments: no output directory")
	}
	if len(dirs) == 0 {
		return fmt.Errorf("experiments: nothing to merge")
	}
	var first *Manifest
	seen := map[int]string{}
	for _, d := range dirs {
		m, err := ReadManifest(d)
		if err != nil {
			return fmt.Errorf("experiments: merge input %s: %w", d, err)
		}
		if first == nil {
			first = m
		} else if !m.sameProblems(first) || m.Models != first.Models || !slices.Equal(m.Methods, first.Methods) || m.Shard.N != first.Shard.N {
			return fmt.Errorf("experiments: merge inputs %s and %s describe different runs (suite, grid, scale, seed, models, methods or shard count differ)", dirs[0], d)
		}
		if m.Shard.N > 0 {
			if prev, ok := seen[m.Shard.I]; ok {
				return fmt.Errorf("experiments: merge inputs %s and %s are both shard %s", prev, d, m.Shard)
			}
			seen[m.Shard.I] = d
		}
	}
	if abs, err := filepath.Abs(out); err == nil {
		for _, d := range dirs {
			if ad, err := filepath.Abs(d); err == nil && ad == abs {
				return fmt.Errorf("experiments: merge output %s is also an input", out)
			}
		}
	}
	if old, err := ReadManifest(out); err == nil && !old.sameProblems(first) {
		return fmt.Errorf("experiments: %s holds a run of suite %s with other settings", out, old.Suite)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
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
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	if err := writeManifest(out, &m); err != nil {
		return err
	}
	if err := WriteBench(out); err != nil {
		return err
	}
	o := m.options()
	o.Extra = extra
	p, err := newPlan(&o)
	if err != nil {
		return err
	}
	var missing []string
	for _, it := range p.items() {
		for _, k := range it.Keys(p.suite.Name) {
			if _, err := os.Stat(filepath.Join(outRec, filepath.FromSlash(k)+".json")); err != nil {
				missing = append(missing, k)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return &IncompleteError{Missing: missing}
	}
	return nil
}
