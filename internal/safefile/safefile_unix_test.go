//go:build unix

package safefile

import (
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadFile reads each kind of file a hostile directory can hold: only
// regular files within the limit are read, nothing blocks, and every error
// names the path and says what is wrong.
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	os.WriteFile(small, []byte("hello"), 0o644)
	big := filepath.Join(dir, "big")
	os.WriteFile(big, make([]byte, 1025), 0o644)
	exact := filepath.Join(dir, "exact")
	os.WriteFile(exact, make([]byte, 1024), 0o644)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", zero)
	link := filepath.Join(dir, "link")
	os.Symlink(small, link)
	sock := filepath.Join(dir, "sock")
	if l, err := net.Listen("unix", sock); err == nil {
		defer l.Close()
	} else {
		sock = ""
	}
	cases := []struct {
		path, want string
		is         error
	}{
		{small, "", nil},
		{link, "", nil},
		{exact, "", nil},
		{big, "read " + big + ": 1025 bytes, more than the 1 KiB a test file may have", ErrTooLarge},
		{fifo, "open " + fifo + ": is a named pipe (FIFO), not a regular file", ErrNotRegular},
		{zero, "open " + zero + ": is a character device, not a regular file", ErrNotRegular},
		{dir, "open " + dir + ": is a directory, not a regular file", ErrNotRegular},
		{filepath.Join(dir, "missing"), "open " + filepath.Join(dir, "missing") + ": no such file or directory", os.ErrNotExist},
	}
	if sock != "" {
		cases = append(cases, struct {
			path, want string
			is         error
		}{sock, "open " + sock + ": is a socket, not a regular file", ErrNotRegular})
	}
	for _, c := range cases {
		start := time.Now()
		b, err := ReadFile(c.path, 1024, "a test file")
		if d := time.Since(start); d > time.Second {
			t.Errorf("%s: took %v", c.path, d)
		}
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.path, err)
			}
			if c.path == small && string(b) != "hello" {
				t.Errorf("%s: read %q", c.path, b)
			}
			continue
		}
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: error %v, want %q", c.path, err, c.want)
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: error %v is not %v", c.path, err, c.is)
		}
	}
	if !strings.Contains(Size(256<<20), "256 MiB") || Size(1000) != "1000 bytes" {
		t.Errorf("Size: %s, %s", Size(256<<20), Size(1000))
	}
}

// TestOpenLimitedFileSize reads a data file (limit FileSize): up to its
// size when opened, failing if it grows meanwhile; and a pipe or device is
// refused at once, as by ReadFile.
func TestOpenLimitedFileSize(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "data")
	os.WriteFile(p, []byte("0123456789"), 0o644)
	r, err := OpenLimited(p, FileSize, "a data file")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(b) != "0123456789" {
		t.Errorf("read %q, %v", b, err)
	}
	r, err = OpenLimited(p, FileSize, "a data file")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte("more"))
	f.Close()
	b, err = io.ReadAll(r)
	r.Close()
	if want := "read " + p + ": a data file grew past its 10 bytes while being read"; err == nil || err.Error() != want || !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file grown while read: %q, %v; want %q", b, err, want)
	}
	zero := filepath.Join(dir, "zero")
	os.Symlink("/dev/zero", zero)
	if _, err := OpenLimited(zero, FileSize, "a data file"); !errors.Is(err, ErrNotRegular) {
		t.Errorf("OpenLimited(link to /dev/zero): %v", err)
	}
}
