//go:build unix

package atomicfile

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
		{sub, "write " + sub + ": is a directory: tempora writes only regular files, character devices and named pipes"},
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

// TestNonRegular writes to each kind of file that is not a regular file
// (issue 33: as root, a device or a named pipe was replaced by a regular
// file): a character device and a named pipe with a reader are written
// through and stay what they were, a link is followed and stays, a pipe
// without a reader is refused at once, a socket is refused, and Replaceable
// accepts only nothing or a regular file.
func TestNonRegular(t *testing.T) {
	dir := t.TempDir()
	null := filepath.Join(dir, "null")
	if err := os.Symlink("/dev/null", null); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(null, []byte("x")); err != nil {
		t.Errorf("writing to a link to /dev/null: %v", err)
	}
	if l, err := os.Readlink(null); err != nil || l != "/dev/null" {
		t.Errorf("the link to /dev/null is now %q, %v", l, err)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/null is no longer a character device: %v", err)
	}
	if _, err := os.Stat("/dev/full"); err == nil {
		full := filepath.Join(dir, "full")
		os.Symlink("/dev/full", full)
		if err := WriteBytes(full, []byte("x")); err == nil || err.Error() != "write "+full+": no space left on device" {
			t.Errorf("writing to a link to /dev/full: %v", err)
		}
	}

	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err := WriteBytes(fifo, []byte("x"))
	if want := "open " + fifo + ": is a named pipe (FIFO) that no process reads"; err == nil || err.Error() != want {
		t.Errorf("writing to a pipe without a reader: %v, want %q", err, want)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("writing to a pipe without a reader took %v", d)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	// More than a pipe holds: the write waits for the reader.
	content := bytes.Repeat([]byte("0123456789abcdef"), 1<<14)
	got := make(chan []byte)
	go func() {
		var b []byte
		buf := make([]byte, 1<<16)
		for len(b) < len(content) {
			n, _ := r.Read(buf)
			b = append(b, buf[:n]...)
			if n == 0 {
				time.Sleep(time.Millisecond)
			}
		}
		got <- b
	}()
	if err := WriteBytes(fifo, content); err != nil {
		t.Errorf("writing to a pipe with a reader: %v", err)
	}
	if b := <-got; !bytes.Equal(b, content) {
		t.Errorf("the reader got %d bytes, want the %d written", len(b), len(content))
	}
	r.Close()
	for _, p := range []string{fifo, null} {
		if fi, err := os.Lstat(p); err != nil || fi.Mode().IsRegular() {
			t.Errorf("%s is now a regular file (%v)", p, err)
		}
	}

	sock := filepath.Join(dir, "sock")
	if l, err := net.Listen("unix", sock); err == nil {
		defer l.Close()
		want := "write " + sock + ": is a socket: tempora writes only regular files, character devices and named pipes"
		if err := WriteBytes(sock, []byte("x")); err == nil || err.Error() != want {
			t.Errorf("writing to a socket: %v, want %q", err, want)
		}
	}

	// A link to a regular file: the file is replaced, the link stays.
	plain, link := filepath.Join(dir, "plain"), filepath.Join(dir, "link")
	os.WriteFile(plain, []byte("old"), 0o644)
	os.Symlink("plain", link)
	if err := WriteBytes(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(plain); string(b) != "new" {
		t.Errorf("the linked file holds %q, want new", b)
	}
	if l, err := os.Readlink(link); err != nil || l != "plain" {
		t.Errorf("the link is now %q, %v", l, err)
	}
	// A dangling link: the file it names is created.
	dangling := filepath.Join(dir, "dangling")
	os.Symlink("made", dangling)
	if err := WriteBytes(dangling, []byte("m")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "made")); string(b) != "m" {
		t.Errorf("the dangling link's file holds %q", b)
	}

	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "new"), ""},
		{plain, ""},
		{fifo, "rename " + fifo + ": is a named pipe (FIFO), not a regular file: tempora replaces only regular files"},
		{null, "rename " + null + ": is a symbolic link, not a regular file: tempora replaces only regular files"},
	} {
		err := Replaceable(c.path)
		if c.want == "" && err != nil || c.want != "" && (err == nil || err.Error() != c.want) {
			t.Errorf("Replaceable(%s): %v, want %q", c.path, err, c.want)
		}
	}
}
