package cli

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tempora-dev/tempora/internal/safefile"
)

// hostileLimit is how soon a command given a named pipe or a device must
// fail (issue 33: "within a second").
const hostileLimit = time.Second

// hostileFile is a kind of file where a regular one belongs: make puts
// one at a path, and kind is what tempora says it is.
type hostileFile struct {
	name, kind string
	make       func(string) error
}

// hostileFiles returns the hostile files this system can make: a named
// pipe that no process writes, and a link to /dev/zero (endless).
func hostileFiles(t *testing.T) []hostileFile {
	t.Helper()
	var kinds []hostileFile
	if err := mkfifo(filepath.Join(t.TempDir(), "probe")); err == nil {
		kinds = append(kinds, hostileFile{"fifo", "is a named pipe (FIFO), not a regular file", mkfifo})
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		kinds = append(kinds, hostileFile{"zero", "is a character device, not a regular file", func(p string) error { return os.Symlink("/dev/zero", p) }})
	}
	if len(kinds) == 0 {
		t.Skip("neither named pipes nor /dev/zero here")
	}
	return kinds
}

// runWithin runs the command line in-process and returns its error, or
// fails the test if it has not finished within limit (it is then left
// running: a read blocked on a pipe cannot be stopped).
func runWithin(t *testing.T, limit time.Duration, args ...string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, _, err := runCmd(t, args...); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Errorf("tempora %s: still running after %v", strings.Join(args, " "), limit)
		return nil
	}
}

// TestHostileInputs gives every file flag of every command a named pipe
// and a link to /dev/zero: each fails within a second, saying what the
// file is (issue 33: -data and -targets blocked on a pipe, -feature-names
// on /dev/zero said "bufio.Scanner: token too long", -hierarchy on
// /dev/zero ran out of memory).
func TestHostileInputs(t *testing.T) {
	root := t.TempDir()
	prob := filepath.Join(root, "p")
	mustRun(t, "synth", "-out", prob, "-instances", "40", "-features", "2", "-timesteps", "4", "-seed", "1")
	x, y := filepath.Join(prob, "data.npy"), filepath.Join(prob, "targets.npy")
	data := []string{"-targets", y, "-task", "regression", "-model-cmd", "false"}
	explainData := func(flag string) func(string) []string {
		return func(h string) []string { return append([]string{"explain", "-data", x, flag, h}, data...) }
	}
	cases := []struct {
		file string
		args func(h string) []string
	}{
		{"x.npy", func(h string) []string { return append([]string{"explain", "-data", h}, data...) }},
		{"x.csv", func(h string) []string { return append([]string{"explain", "-data", h}, data...) }},
		{"y.npy", func(h string) []string {
			return []string{"explain", "-data", x, "-targets", h, "-task", "regression", "-model-cmd", "false"}
		}},
		{"y.csv", func(h string) []string {
			return []string{"explain", "-data", x, "-targets", h, "-task", "regression", "-model-cmd", "false"}
		}},
		{"names.txt", explainData("-feature-names")},
		{"names.json", explainData("-feature-names")},
		{"mask.npy", explainData("-mask")},
		{"outputs.txt", func(h string) []string { return append(explainData("-output-names")(h), "-outputs", "horizons:2") }},
		{"outputs.json", func(h string) []string { return append(explainData("-output-names")(h), "-outputs", "horizons:2") }},
		{"h.json", func(h string) []string { return []string{"explain", "-problem", prob, "-hierarchy", h} }},
		{"d.npy", func(h string) []string { return []string{"describe", "-data", h} }},
		{"d.csv", func(h string) []string { return []string{"describe", "-data", h} }},
		{"dnames.txt", func(h string) []string { return []string{"describe", "-data", x, "-feature-names", h} }},
		{"dmask.npy", func(h string) []string { return []string{"describe", "-data", x, "-mask", h} }},
		{"scores.json", func(h string) []string { return []string{"evaluate", "-problem", prob, "-scores", h} }},
		{"scores.csv", func(h string) []string { return []string{"rank", "-scores", h} }},
		{"attr.npy", func(h string) []string { return []string{"evaluate", "-problem", prob, "-attributions", h} }},
	}
	for _, k := range hostileFiles(t) {
		dir := filepath.Join(root, k.name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			h := filepath.Join(dir, c.file)
			if err := k.make(h); err != nil {
				t.Fatal(err)
			}
			args := c.args(h)
			err := runWithin(t, hostileLimit, args...)
			if want := h + ": " + k.kind; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("tempora %s: error %v, want one saying %q", strings.Join(args, " "), err, want)
			}
		}
	}
}

// TestLongLine gives -feature-names, -targets and -data a regular file of
// one line longer than the readers' line limit (a sparse file of zeros, as
// a wrong file can be): each fails at once naming the line, without the
// internal "bufio.Scanner: token too long" or reading the file whole.
func TestLongLine(t *testing.T) {
	root := t.TempDir()
	prob := filepath.Join(root, "p")
	mustRun(t, "synth", "-out", prob, "-instances", "40", "-features", "2", "-timesteps", "4", "-seed", "1")
	x, y := filepath.Join(prob, "data.npy"), filepath.Join(prob, "targets.npy")
	for _, c := range []struct {
		ext, flag string
		size      int64
	}{{".txt", "-feature-names", 2 << 20}, {".csv", "-targets", 1 << 30}, {".csv", "-data", 1 << 30}} {
		p := filepath.Join(root, "long"+c.flag+c.ext)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(c.size); err != nil { // sparse: no disk used
			t.Fatal(err)
		}
		f.Close()
		files := map[string]string{"-data": x, "-targets": y, c.flag: p}
		args := []string{"explain", "-task", "regression", "-model-cmd", "false"}
		for _, flag := range []string{"-data", "-targets", "-feature-names"} {
			if f, ok := files[flag]; ok {
				args = append(args, flag, f)
			}
		}
		err = runWithin(t, 5*time.Second, args...)
		if want := p + ": line 1 is longer than 1 MiB"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s a line of %d bytes: error %v, want one containing %q", c.flag, c.size, err, want)
		}
	}
}

// TestHostileOutputs writes explain's -json and -csv, synth's files, a
// run's manifest and a report's index to a link to /dev/null, a link to
// /dev/full, a named pipe with a reader, one without, and a socket
// (issue 33: as root, -json /dev/full turned the device into a regular
// file). A character device or a pipe is written through and stays what
// it was; a full device says so; a pipe that no process reads and a
// socket are refused at once.
func TestHostileOutputs(t *testing.T) {
	root := t.TempDir()
	prob := filepath.Join(root, "p")
	mustRun(t, "synth", "-out", prob, "-instances", "40", "-features", "2", "-timesteps", "4", "-seed", "1")
	run := filepath.Join(root, "run")
	mustRun(t, append(append([]string{"run"}, tinyProblems...), "-methods", "PERM", "-workers", "1", "-out", run)...)
	type output struct {
		name string                          // of the output in the messages
		path func(dir string) string         // where the output goes, in dir
		args func(dir, path string) []string // the command writing it
	}
	outputs := []output{
		{"-json", func(d string) string { return filepath.Join(d, "e.json") }, func(_, p string) []string {
			return []string{"explain", "-problem", prob, "-method", "perm", "-json", p}
		}},
		{"-csv", func(d string) string { return filepath.Join(d, "e.csv") }, func(_, p string) []string {
			return []string{"explain", "-problem", prob, "-method", "perm", "-csv", p}
		}},
		{"synth", func(d string) string { return filepath.Join(d, "q", "truth.json") }, func(d, _ string) []string {
			return []string{"synth", "-out", filepath.Join(d, "q"), "-instances", "40", "-features", "2", "-timesteps", "4", "-seed", "1"}
		}},
		{"report", func(d string) string { return filepath.Join(d, "r", "index.md") }, func(d, _ string) []string {
			return []string{"report", "-in", run, "-out", filepath.Join(d, "r")}
		}},
	}
	type target struct {
		name string
		make func(t *testing.T, p string) (check func(err error))
	}
	devLink := func(dev string, wantErr string) func(t *testing.T, p string) func(error) {
		return func(t *testing.T, p string) func(error) {
			if _, err := os.Stat(dev); err != nil {
				t.Skip("no " + dev)
			}
			if err := os.Symlink(dev, p); err != nil {
				t.Fatal(err)
			}
			return func(err error) {
				if wantErr == "" && err != nil || wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)) {
					t.Errorf("error %v, want %q", err, wantErr)
				}
				if l, lerr := os.Readlink(p); lerr != nil || l != dev {
					t.Errorf("%s is no longer a link to %s (%q, %v)", p, dev, l, lerr)
				}
				if fi, err := os.Stat(dev); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
					t.Fatalf("%s is no longer a character device: %v", dev, err)
				}
			}
		}
	}
	targets := []target{
		{"null", devLink("/dev/null", "")},
		{"full", devLink("/dev/full", "no space left on device")},
		{"fifo-read", func(t *testing.T, p string) func(error) {
			if err := mkfifo(p); err != nil {
				t.Skip(err)
			}
			// A reader opened without blocking: the pipe keeps what the
			// command writes (less than its 64 KiB) until read below.
			r, err := os.OpenFile(p, os.O_RDONLY|nonblockFlag, 0)
			if err != nil {
				t.Fatal(err)
			}
			return func(err error) {
				if err != nil {
					t.Errorf("error %v", err)
				}
				if b, err := io.ReadAll(r); err != nil || len(b) == 0 {
					t.Errorf("read %d bytes from the pipe (%v), want the output", len(b), err)
				}
				r.Close()
				if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
					t.Errorf("%s is no longer a named pipe (%v)", p, err)
				}
			}
		}},
		{"fifo-alone", func(t *testing.T, p string) func(error) {
			if err := mkfifo(p); err != nil {
				t.Skip(err)
			}
			return func(err error) {
				if want := p + ": is a named pipe (FIFO) that no process reads"; err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want one containing %q", err, want)
				}
				if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
					t.Errorf("%s is no longer a named pipe (%v)", p, err)
				}
			}
		}},
		{"socket", func(t *testing.T, p string) func(error) {
			l, err := net.Listen("unix", p)
			if err != nil {
				t.Skip("no unix sockets here:", err)
			}
			t.Cleanup(func() { l.Close() })
			return func(err error) {
				if want := p + ": is a socket: tempora writes only regular files, character devices and named pipes"; err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error %v, want one containing %q", err, want)
				}
				if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeSocket == 0 {
					t.Errorf("%s is no longer a socket (%v)", p, err)
				}
			}
		}},
	}
	for _, o := range outputs {
		for _, tg := range targets {
			t.Run(o.name+"/"+tg.name, func(t *testing.T) {
				// A short directory: a socket's path is limited to ~100 bytes.
				dir, err := os.MkdirTemp("", "h")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { os.RemoveAll(dir) })
				p := o.path(dir)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				check := tg.make(t, p)
				args := o.args(dir, p)
				start := time.Now()
				err = runWithin(t, 30*time.Second, args...)
				if tg.name != "fifo-read" && tg.name != "null" && time.Since(start) > 10*time.Second {
					t.Errorf("took %v", time.Since(start))
				}
				check(err)
			})
		}
	}
}

// TestFileLimitsDoc checks the limits docs/bad-input.md states for the
// files tempora reads against the constants that decide them.
func TestFileLimitsDoc(t *testing.T) {
	b, err := os.ReadFile(badInputPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	const begin, end = "<!-- file limits: checked by go test ./cli -run TestFileLimitsDoc -->", "<!-- end of file limits -->"
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/bad-input.md lacks the section between %q and %q", begin, end)
	}
	want := []string{
		"| file | at most |",
		"| --- | --- |",
		"| data, targets, mask, attributions (.npy or CSV) | the file's size when opened |",
		"| a line of a text file (names, CSV) | " + safefile.Size(safefile.LineLimit) + " |",
		"| feature or output names | " + safefile.Size(safefile.NamesLimit) + " |",
		"| hierarchy | " + safefile.Size(safefile.HierarchyLimit) + " |",
		"| a problem's JSON files | " + safefile.Size(safefile.JSONLimit) + " |",
		"| problem index | " + safefile.Size(safefile.IndexLimit) + " |",
		"| run manifest | " + safefile.Size(safefile.ManifestLimit) + " |",
		"| record, score file | " + safefile.Size(safefile.RecordLimit) + " |",
	}
	got := strings.Split(strings.TrimSpace(doc[i+len(begin):j]), "\n")
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/bad-input.md's file limits:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
