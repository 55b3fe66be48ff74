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
	"github.com/tempora-dev/tempora/internal/errmsg"
	"github.com/tempora-dev/tempora/internal/safefile"
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
// same shard; copies every record (byte for byte, after checking it with
// record.Read; a key present in two inputs must have identical files);
// writes out/manifest.json (without a shard, listing the methods of every
// input) and out/bench.txt; and finally checks that every record of those
// methods on the suite's problems is present, returning an
// *IncompleteError naming what is missing. Merge needs no method table:
// records are data.
//
// Merge is all or nothing. It builds the merged records, manifest and
// bench.txt in a temporary directory beside out (".<name>.merge-*", removed
// afterwards), and only when every input has been read and checked moves
// them into place by renames. An error in any input (a missing or different
// manifest, an invalid record, two different records of one key) leaves out
// exactly as it was. An incomplete merge is not such an error: out then
// holds every record of the inputs, and the *IncompleteError says what is
// missing, so that a report can show the records so far and a later merge
// with the missing shards can complete them.
//
// out may be a new directory, an empty one, or a run or merge directory of
// the same problems (same suite, grid, scale and seed): its records then
// count as one more input (so merging in another method's run adds to it),
// and its records/, manifest.json and bench.txt are replaced together;
// anything else in it (a report/ subdirectory) is kept. Any other non-empty
// out is refused.
func Merge(out string, dirs []string) (err error) {
	if out == "" {
		return fmt.Errorf("experiments: no output directory")
	}
	if len(dirs) == 0 {
		return fmt.Errorf("experiments: nothing to merge")
	}
	first, methods, err := mergeInputs(dirs)
	if err != nil {
		return err
	}
	sources, methods, outExists, err := mergeOutput(out, dirs, first, methods)
	if err != nil {
		return err
	}
	m := *first
	m.Shard = Shard{}
	m.Methods = methods

	// Build the merge beside out, so that the final renames stay on one
	// file system.
	clean := filepath.Clean(out)
	parent := filepath.Dir(clean)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("experiments: merge output: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(clean)+".merge-*")
	if err != nil {
		return fmt.Errorf("experiments: merge output %s: creating a directory in %s: %w", out, parent, errors.Unwrap(err))
	}
	defer os.RemoveAll(tmp)
	defer func() { err = hideTemp(err, tmp, clean) }()
	missing, err := buildMerge(tmp, sources, &m)
	if err != nil {
		return err
	}
	if err := publish(tmp, clean, outExists); err != nil {
		return fmt.Errorf("experiments: merge output %s: %w", out, err)
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return &IncompleteError{Missing: missing}
	}
	return nil
}

// mergeInputs reads the manifests of the merge inputs, which must hold the
// same problems and no shard twice, and returns the first one and the
// methods of all, in order of first appearance.
func mergeInputs(dirs []string) (*Manifest, []string, error) {
	var first *Manifest
	var methods []string
	seen := map[string]string{} // methods and shard -> input dir
	for _, d := range dirs {
		m, err := ReadManifest(d)
		if err != nil {
			return nil, nil, errmsg.Wrap(err, "experiments: merge input %s", d)
		}
		if first == nil {
			first = m
		} else if !m.sameProblems(first) || m.Models != first.Models {
			return nil, nil, fmt.Errorf("experiments: merge inputs %s and %s hold different problems (suite, grid, scale, seed or models differ)", dirs[0], d)
		}
		for _, name := range m.Methods {
			if !slices.Contains(methods, name) {
				methods = append(methods, name)
			}
		}
		if m.Shard.N > 0 {
			k := strings.Join(m.Methods, ",") + " " + m.Shard.String()
			if prev, ok := seen[k]; ok {
				return nil, nil, fmt.Errorf("experiments: merge inputs %s and %s are both shard %s of the same methods", prev, d, m.Shard)
			}
			seen[k] = d
		}
	}
	return first, methods, nil
}

// mergeOutput checks the merge output out: not an input, and either absent,
// an empty directory, or a run of the same problems, whose records and
// methods then join the merge. It returns the directories to take records
// from, the methods, and whether out exists.
func mergeOutput(out string, dirs []string, first *Manifest, methods []string) ([]string, []string, bool, error) {
	if abs, err := filepath.Abs(out); err == nil {
		for _, d := range dirs {
			if ad, err := filepath.Abs(d); err == nil && ad == abs {
				return nil, nil, false, fmt.Errorf("experiments: merge output %s is also an input", out)
			}
		}
	}
	old, err := ReadManifest(out)
	if err == nil {
		if !old.sameProblems(first) {
			return nil, nil, false, fmt.Errorf("experiments: merge output %s holds a run of suite %s with other settings; merge into a new directory", out, old.Suite)
		}
		for _, name := range old.Methods {
			if !slices.Contains(methods, name) {
				methods = append(methods, name)
			}
		}
		return append([]string{out}, dirs...), methods, true, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, false, errmsg.Wrap(err, "experiments: merge output %s", out)
	}
	entries, err := os.ReadDir(out)
	switch {
	case err == nil && len(entries) > 0:
		return nil, nil, false, fmt.Errorf("experiments: merge output %s is not empty and holds no run (no manifest.json); merge into a new directory", out)
	case err == nil:
		return dirs, methods, true, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, nil, false, fmt.Errorf("experiments: merge output: %w", err)
	}
	return dirs, methods, false, nil
}

// buildMerge writes the merged run into the empty directory tmp: the
// records of sources, the manifest m and bench.txt. It returns the keys of
// m's records that none of the sources holds.
func buildMerge(tmp string, sources []string, m *Manifest) ([]string, error) {
	if err := os.Chmod(tmp, 0o755); err != nil {
		return nil, fmt.Errorf("experiments: merge output: %w", err)
	}
	tmpRec := filepath.Join(tmp, "records")
	if err := os.Mkdir(tmpRec, 0o755); err != nil {
		return nil, fmt.Errorf("experiments: merge output: %w", err)
	}
	if err := copyRecords(tmpRec, sources); err != nil {
		return nil, err
	}
	if err := writeManifest(tmp, m); err != nil {
		return nil, fmt.Errorf("experiments: merge output: %w", err)
	}
	if err := WriteBench(tmp); err != nil {
		return nil, errmsg.Wrap(err, "experiments: merge output")
	}
	keys, err := m.keys()
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, k := range keys {
		if _, err := os.Stat(filepath.Join(tmpRec, filepath.FromSlash(k)+".json")); err != nil {
			missing = append(missing, k)
		}
	}
	return missing, nil
}

// copyRecords copies every record file below the records/ directory of
// each source into dst, checking each with record.Read and that a key found
// in two sources has identical files.
func copyRecords(dst string, sources []string) error {
	from := map[string]string{} // relative path -> source dir
	for _, d := range sources {
		src := filepath.Join(d, "records")
		err := filepath.WalkDir(src, func(p string, de fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, os.ErrNotExist) && p == src {
					return fs.SkipDir
				}
				return err
			}
			if !record.IsRecordFile(de) {
				return nil
			}
			rel, _ := filepath.Rel(src, p)
			r, err := record.Read(p)
			if err != nil {
				return errmsg.Wrap(err, "experiments: merge input %s", d)
			}
			if want := filepath.ToSlash(rel); want != r.Key()+".json" {
				return fmt.Errorf("experiments: merge input %s: record file %s holds the record %s", d, want, r.Key())
			}
			b, err := safefile.ReadFile(p, safefile.RecordLimit, "a record")
			if err != nil {
				return err
			}
			target := filepath.Join(dst, rel)
			if prev, ok := from[rel]; ok {
				old, err := safefile.ReadFile(target, safefile.RecordLimit, "a record")
				if err != nil {
					return err
				}
				if !bytes.Equal(old, b) {
					return fmt.Errorf("experiments: record %s differs between merge inputs %s and %s", filepath.ToSlash(rel), prev, d)
				}
				return nil
			}
			from[rel] = d
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			return atomicfile.WriteBytes(target, b)
		})
		if err != nil {
			if strings.HasPrefix(err.Error(), "experiments: ") {
				return err
			}
			return fmt.Errorf("experiments: merge input %s: %w", d, err)
		}
	}
	return nil
}

// publish moves a merge built in tmp into out: the whole directory if out
// does not exist, else its records/, manifest.json and bench.txt, each by
// a rename (the old records/ goes into tmp, which the caller removes).
func publish(tmp, out string, outExists bool) error {
	if !outExists {
		return os.Rename(tmp, out)
	}
	for _, f := range []string{"manifest.json", "bench.txt"} {
		if err := atomicfile.Replaceable(filepath.Join(out, f)); err != nil {
			return err
		}
	}
	outRec, tmpRec := filepath.Join(out, "records"), filepath.Join(tmp, "records")
	oldRec := filepath.Join(tmp, "records.old")
	hadRecords := true
	if err := os.Rename(outRec, oldRec); errors.Is(err, os.ErrNotExist) {
		hadRecords = false
	} else if err != nil {
		return err
	}
	if err := os.Rename(tmpRec, outRec); err != nil {
		if hadRecords {
			os.Rename(oldRec, outRec) // put the old records back
		}
		return err
	}
	for _, f := range []string{"manifest.json", "bench.txt"} {
		if err := os.Rename(filepath.Join(tmp, f), filepath.Join(out, f)); err != nil {
			return err
		}
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
	if err := m.checkCount(len(settings)); err != nil {
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
