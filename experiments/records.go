package experiments

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tempora-dev/tempora/record"
)

// DamagedDir is the subdirectory of a run directory to which Run moves
// record files that fail its checks, at their path below records/ (with
// ".1", ".2", … before ".json" if that path is taken), so that nothing is
// deleted and the run can redo their items.
const DamagedDir = "damaged"

// checkRecords checks every record file below out/records: it must pass
// record.Read, lie at its own key's path, and, if its key is one of the
// items', carry that item's problem seed. It moves every file that fails to
// out/DamagedDir and returns one line per file moved, saying why and where.
func checkRecords(out, suite string, items []Item) ([]string, error) {
	recDir := filepath.Join(out, "records")
	seeds := map[string]uint64{}
	for i := range items {
		for _, k := range items[i].keys(suite) {
			seeds[k] = items[i].ProblemSeed
		}
	}
	var moved []string
	err := filepath.WalkDir(recDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == recDir {
				return fs.SkipDir
			}
			return err
		}
		if !record.IsRecordFile(d) {
			return nil
		}
		rel, err := filepath.Rel(recDir, p)
		if err != nil {
			return err
		}
		slash := filepath.ToSlash(rel)
		var why string
		r, err := record.Read(p)
		switch {
		case err != nil:
			why = strings.TrimPrefix(strings.TrimPrefix(err.Error(), "record: "), p+": ")
		case r.Key()+".json" != slash:
			why = "it holds the record " + r.Key()
		default:
			if seed, ok := seeds[r.Key()]; ok && seed != r.Seed {
				why = fmt.Sprintf("its problem seed is %d, the run's is %d", r.Seed, seed)
			}
		}
		if why == "" {
			return nil
		}
		dst, err := moveAside(filepath.Join(out, DamagedDir), rel, p)
		if err != nil {
			return fmt.Errorf("experiments: moving the damaged record %s aside: %w", p, err)
		}
		shown, _ := filepath.Rel(out, dst)
		moved = append(moved, fmt.Sprintf("damaged record records/%s (%s) moved to %s; its item runs again", slash, why, filepath.ToSlash(shown)))
		if d.IsDir() {
			return fs.SkipDir // moved away
		}
		return nil
	})
	if err != nil && !strings.HasPrefix(err.Error(), "experiments: ") {
		err = fmt.Errorf("experiments: checking the records of %s: %w", out, err)
	}
	return moved, err
}

// moveAside renames file to rel below dir, or, if that exists, to rel with
// ".1", ".2", … before its extension, and returns the new path.
func moveAside(dir, rel, file string) (string, error) {
	dst := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	base := strings.TrimSuffix(dst, ".json")
	for n := 1; ; n++ {
		if _, err := os.Lstat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dst = fmt.Sprintf("%s.%d.json", base, n)
	}
	return dst, os.Rename(file, dst)
}

func (it *Item) done(recDir, suite string) bool {
	for _, k := range it.keys(suite) {
		if _, err := os.Stat(filepath.Join(recDir, filepath.FromSlash(k)+".json")); err != nil {
			return false
		}
	}
	return true
}

// ReadRecords returns every record below out/records (a directory written
// by Run, Merge or EvaluateProblems), sorted by key.
func ReadRecords(out string) ([]*record.Record, error) {
	return record.ReadAll(filepath.Join(out, "records"))
}
