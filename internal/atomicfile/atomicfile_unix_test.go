//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUmask checks that new files get 0666 less the umask, as careful Unix
// tools create them (they were always 0644).
func TestUmask(t *testing.T) {
	for _, c := range []struct{ umask, want os.FileMode }{{0o022, 0o644}, {0o077, 0o600}, {0o002, 0o664}} {
		old := syscall.Umask(int(c.umask))
		p := filepath.Join(t.TempDir(), "f")
		err := WriteBytes(p, []byte("x"))
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != c.want {
			t.Errorf("umask %03o: mode %03o, want %03o", c.umask, got, c.want)
		}
	}
}

// TestErrorsNameThePath checks that errors name the destination, never the
// temporary file, and leave nothing behind.
func TestErrorsNameThePath(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{
		{sub, "write " + sub + ": is a directory"},
		{filepath.Join(dir, "missing", "f"), "create " + filepath.Join(dir, "missing", "f") + ": no such file or directory"},
	}
	if os.Geteuid() != 0 { // root may write anywhere
		cases = append(cases, struct{ path, want string }{filepath.Join(ro, "f"), "create " + filepath.Join(ro, "f") + ": permission denied"})
	}
	for _, c := range cases {
		err := WriteBytes(c.path, []byte("x"))
		if err == nil || err.Error() != c.want {
			t.Errorf("WriteBytes(%s): error %v, want %q", c.path, err, c.want)
		}
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}
