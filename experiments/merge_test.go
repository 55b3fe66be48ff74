package experiments

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/record"
)

// treeFiles returns every file below dir (relative path -> content), or
// nil if dir does not exist.
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// noMergeLeftovers fails if a temporary merge directory is left in dir.
func noMergeLeftovers(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".merge-") {
			t.Errorf("temporary merge directory %s left behind", e.Name())
		}
	}
}

// TestMergeAllOrNothing checks that a merge that fails on an input (an
// invalid record, two different records of one key) leaves its output as it
// was, absent or a previous merge (issue 12, defect 4: a failed merge left
// the records copied so far in OUT/records), that an incomplete merge
// still writes every input record, and the rule for an existing output.
func TestMergeAllOrNothing(t *testing.T) {
	root := t.TempDir()
	const n = 3
	var shards []string
	for i := range n {
		d := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		o := fakeOptions(d, nil, nil)
		o.Shard = Shard{I: i, N: n}
		if err := Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, d)
	}
	// A damaged copy of shard 2: one record truncated (a full disk).
	damaged := filepath.Join(root, "damaged")
	copyTree(t, shards[2], damaged)
	var victim string
	for rel := range treeFiles(t, filepath.Join(damaged, "records")) {
		if victim == "" || rel > victim { // the last in order: copied after others
			victim = rel
		}
	}
	vpath := filepath.Join(damaged, "records", filepath.FromSlash(victim))
	b, _ := os.ReadFile(vpath)
	os.WriteFile(vpath, b[:len(b)/2], 0o644)
	// A conflicting copy of shard 2: one record with another runtime.
	conflict := filepath.Join(root, "conflict")
	copyTree(t, shards[2], conflict)
	cpath := filepath.Join(conflict, "records", filepath.FromSlash(victim))
	b, _ = os.ReadFile(cpath)
	os.WriteFile(cpath, []byte(runtimeField.ReplaceAllString(string(b), `"runtime_seconds": 12345`)), 0o644)
	if _, err := record.Rehash(cpath); err != nil { // a valid record, not a damaged one
		t.Fatal(err)
	}
	// It claims to be an unsharded run, so that it is not refused as a
	// second copy of shard 2.
	cm, err := ReadManifest(conflict)
	if err != nil {
		t.Fatal(err)
	}
	cm.Shard = Shard{}
	if err := writeManifest(conflict, cm); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name   string
		inputs []string
		want   string
	}{
		{"invalid record", []string{shards[0], shards[1], damaged}, "experiments: merge input " + damaged + ": " + vpath + ": "},
		{"conflicting records", []string{shards[0], shards[1], shards[2], conflict}, "differs between merge inputs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Into a new directory: nothing is created.
			out := filepath.Join(root, "new-"+strings.ReplaceAll(c.name, " ", "-"))
			err := Merge(out, c.inputs)
			if err == nil {
				t.Fatal("merge: no error")
			}
			if files := treeFiles(t, out); files != nil {
				t.Errorf("a failed merge created %s with %d files", out, len(files))
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("merge: error %v, want one containing %q", err, c.want)
			}
			noMergeLeftovers(t, root)

			// Into a previous merge of the same problems: it is left
			// exactly as it was.
			prev := filepath.Join(root, "prev-"+strings.ReplaceAll(c.name, " ", "-"))
			var inc *IncompleteError
			if err := Merge(prev, shards[:1]); !errors.As(err, &inc) {
				t.Fatalf("merging one shard of three: %v, want an IncompleteError", err)
			}
			os.MkdirAll(filepath.Join(prev, "report"), 0o755)
			os.WriteFile(filepath.Join(prev, "report", "index.md"), []byte("# report\n"), 0o644)
			before := treeFiles(t, prev)
			if err := Merge(prev, c.inputs[1:]); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("merge into a previous merge: error %v, want one containing %q", err, c.want)
			}
			after := treeFiles(t, prev)
			if len(after) != len(before) {
				t.Errorf("a failed merge changed %s: %d files, had %d", prev, len(after), len(before))
			}
			for k, v := range before {
				if after[k] != v {
					t.Errorf("a failed merge changed %s/%s", prev, k)
				}
			}
			noMergeLeftovers(t, root)
		})
	}

	// An incomplete merge writes every input record; merging the missing
	// shard into it completes it and keeps what else it holds.
	ref := filepath.Join(root, "ref")
	if err := Run(context.Background(), fakeOptions(ref, nil, nil)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "merged")
	var inc *IncompleteError
	if err := Merge(out, shards[:2]); !errors.As(err, &inc) {
		t.Fatalf("merging 2 of 3 shards: %v, want an IncompleteError", err)
	}
	if got, want := len(readRecordFiles(t, out)), len(readRecordFiles(t, shards[0]))+len(readRecordFiles(t, shards[1])); got != want {
		t.Errorf("incomplete merge holds %d records, want %d", got, want)
	}
	os.MkdirAll(filepath.Join(out, "report"), 0o755)
	os.WriteFile(filepath.Join(out, "report", "index.md"), []byte("# report\n"), 0o644)
	if err := Merge(out, shards[2:]); err != nil {
		t.Fatalf("completing the merge: %v", err)
	}
	sameFiles(t, "completed merge", readRecordFiles(t, out), readRecordFiles(t, ref))
	if _, err := os.Stat(filepath.Join(out, "report", "index.md")); err != nil {
		t.Errorf("merging into %s lost its report: %v", out, err)
	}
	noMergeLeftovers(t, root)

	// An empty directory is a fine output; a non-empty one that holds no
	// run is refused and left alone.
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o755)
	if err := Merge(empty, shards); err != nil {
		t.Errorf("merge into an empty directory: %v", err)
	}
	if fi, err := os.Stat(empty); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("merge output mode %v, %v", fi.Mode(), err)
	}
	other := filepath.Join(root, "other")
	os.Mkdir(other, 0o755)
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine\n"), 0o644)
	if err := Merge(other, shards); err == nil || !strings.Contains(err.Error(), "is not empty and holds no run") {
		t.Errorf("merge into a directory of other files: error %v", err)
	}
	if files := treeFiles(t, other); len(files) != 1 {
		t.Errorf("a refused merge changed %s: %v", other, files)
	}
	// A new directory is created with the usual mode.
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("merge output mode %v, %v", fi.Mode(), err)
	}
}

// copyTree copies the files below src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	for rel, content := range treeFiles(t, src) {
		p := filepath.Join(dst, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
