package experiments

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/tempora-dev/tempora/record"
)

// checksumField matches a record's checksum, which covers its runtime.
var checksumField = regexp.MustCompile(`"checksum": "[^"]*"`)

// TestHostileRunDirectory puts at one record's path what an operator's
// mistake or a hostile user can (issue 24): each must give a clear outcome
// within seconds, never a hang or an unbounded read. A resumed run moves the
// file aside to damaged/ and reruns its item; reading the records (as report
// does) and merging the directory fail with a message naming the path and
// what is wrong.
func TestHostileRunDirectory(t *testing.T) {
	const key = "testsize-regression/instances=200/model=1/method=SOLO.json"
	cases := []struct {
		name string
		// make replaces the file at p; it may skip the case.
		make func(t *testing.T, p string)
		why  string // in the progress line and the read errors
	}{
		{"symlink to /dev/zero", func(t *testing.T, p string) {
			if _, err := os.Stat("/dev/zero"); err != nil {
				t.Skip("no /dev/zero")
			}
			os.Remove(p)
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, "is a character device, not a regular file"},
		{"FIFO", func(t *testing.T, p string) {
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, "is a named pipe (FIFO), not a regular file"},
		{"directory", func(t *testing.T, p string) {
			os.Remove(p)
			if err := os.MkdirAll(filepath.Join(p, "inside"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "is a directory, not a regular file"},
		{"1 GB sparse record", func(t *testing.T, p string) {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(1 << 30); err != nil {
				t.Skip("cannot make a sparse 1 GB file:", err)
			}
		}, "1073741824 bytes, more than the 256 MiB a record may have"},
		{"altered metric", func(t *testing.T, p string) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			re := regexp.MustCompile(`("name": "feature-power",\s*"value": )[^\n}]*`)
			if !re.Match(b) {
				t.Fatalf("no feature-power in %s", b)
			}
			if err := os.WriteFile(p, re.ReplaceAll(b, []byte("${1}0.123")), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "checksum mismatch: the record was changed after it was written"},
	}
	ref := t.TempDir()
	if err := Run(context.Background(), fakeOptions(ref, nil, nil)); err != nil {
		t.Fatal(err)
	}
	want := readRecordFiles(t, ref)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			if err := Run(context.Background(), fakeOptions(out, nil, nil)); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(out, "records", filepath.FromSlash(key))
			c.make(t, p)
			quick := func(what string, f func() error) error {
				t.Helper()
				start := time.Now()
				done := make(chan error, 1)
				go func() { done <- f() }()
				select {
				case err := <-done:
					if d := time.Since(start); d > 5*time.Second {
						t.Errorf("%s took %v", what, d)
					}
					return err
				case <-time.After(20 * time.Second):
					t.Fatalf("%s still running after 20 s", what)
					return nil
				}
			}

			// Reading (report) and merging fail, naming the file.
			err := quick("reading the records", func() error { _, err := ReadRecords(out); return err })
			if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.why) {
				t.Errorf("reading the records: error %v, want one naming %s and saying %q", err, p, c.why)
			}
			err = quick("merging", func() error { return Merge(filepath.Join(t.TempDir(), "merged"), []string{out}) })
			if err == nil || !strings.Contains(err.Error(), c.why) {
				t.Errorf("merging: error %v, want one saying %q", err, c.why)
			}

			// A resumed run moves the file aside and reruns its item.
			var calls atomic.Int64
			o := fakeOptions(out, &calls, nil)
			prog := &progressLog{suite: o.Suite}
			o.Progress = prog
			if err := quick("resuming", func() error { return Run(context.Background(), o) }); err != nil {
				t.Fatalf("resuming: %v\n%s", err, prog.String())
			}
			line := "damaged record records/" + key + " (" + c.why
			if !strings.Contains(prog.String(), line) || !strings.Contains(prog.String(), "moved to damaged/"+key+"; its item runs again") {
				t.Errorf("progress does not say %q … moved to damaged/%s:\n%s", line, key, prog.String())
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("resumed run explained %d problems, want 1", n)
			}
			if _, err := os.Lstat(filepath.Join(out, DamagedDir, filepath.FromSlash(key))); err != nil {
				t.Errorf("not moved aside: %v", err)
			}
			sameFiles(t, "resumed over "+c.name, readRecordFiles(t, out), want)
		})
	}
}

// TestRecordRehash edits a record on purpose: Read refuses it until
// record.Rehash, after which it is read with the edit.
func TestRecordRehash(t *testing.T) {
	out := t.TempDir()
	if err := Run(context.Background(), fakeOptions(out, nil, nil)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(out, "records", "testsize-regression", "instances=100", "model=0", "method=SOLO.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(b, []byte(`"warnings": []`), []byte(`"warnings": ["checked by hand"]`), 1)
	if bytes.Equal(edited, b) {
		t.Fatal("no warnings field to edit")
	}
	if err := os.WriteFile(p, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := record.Read(p); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
		t.Fatalf("edited record read with error %v, want a checksum mismatch", err)
	}
	if changed, err := record.Rehash(p); err != nil || !changed {
		t.Fatalf("Rehash: %v, %v", changed, err)
	}
	r, err := record.Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Warnings) != 1 || r.Warnings[0] != "checked by hand" {
		t.Errorf("warnings after rehash %q", r.Warnings)
	}
	if changed, err := record.Rehash(p); err != nil || changed {
		t.Errorf("second Rehash: %v, %v; want no change", changed, err)
	}
}

// TestMergeErrorsNameNoTemp: a merge that cannot build its output names
// the output, not the temporary directory it builds it in.
func TestMergeErrorsNameNoTemp(t *testing.T) {
	cause := errors.New("x")
	got := hideTemp(fmt.Errorf("rename /a/.o.merge-1/records /a/o/records: %w", cause), "/a/.o.merge-1", "/a/o")
	if got.Error() != "rename /a/o/records /a/o/records: x" || !errors.Is(got, cause) {
		t.Errorf("hideTemp: %v", got)
	}
	if os.Geteuid() == 0 {
		t.Skip("root may write into a read-only directory")
	}
	in := t.TempDir()
	if err := Run(context.Background(), fakeOptions(in, nil, nil)); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(ro, "merged")
	err := Merge(out, []string{in})
	if err == nil || strings.Contains(err.Error(), ".merge-") || !strings.Contains(err.Error(), "merge output "+out+": ") {
		t.Errorf("merge into a read-only directory: error %v, want one naming %s and no temporary directory", err, out)
	}
}

// TestHostileManifest puts a named pipe, a link to /dev/zero, a directory
// and a 2 MiB file at a run's manifest.json: resuming and merging fail at
// once, saying what the file is.
func TestHostileManifest(t *testing.T) {
	cases := []struct {
		name string
		make func(p string) error
		why  string
	}{
		{"FIFO", func(p string) error { return syscall.Mkfifo(p, 0o644) }, "is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "is a character device, not a regular file"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o755) }, "is a directory, not a regular file"},
		{"2 MiB", func(p string) error { return os.WriteFile(p, make([]byte, 2<<20), 0o644) }, "2097152 bytes, more than the 1 MiB a manifest may have"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := t.TempDir()
			if err := Run(context.Background(), fakeOptions(out, nil, nil)); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(out, "manifest.json")
			os.Remove(p)
			if err := c.make(p); err != nil {
				t.Skip(err)
			}
			for what, f := range map[string]func() error{
				"resuming": func() error { return Run(context.Background(), fakeOptions(out, nil, nil)) },
				"merging":  func() error { return Merge(filepath.Join(t.TempDir(), "m"), []string{out}) },
			} {
				done := make(chan error, 1)
				go func() { done <- f() }()
				select {
				case err := <-done:
					if err == nil || !strings.Contains(err.Error(), p+": "+c.why) {
						t.Errorf("%s: error %v, want one saying %q", what, err, p+": "+c.why)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s: still running after 10 s", what)
				}
			}
		})
	}
}
