// Package safefile reads the files tempora is given (data, targets, masks,
// names, hierarchies, scores, attributions, and the files of run and
// problem directories), which it does not control, without letting their
// contents crash or hang it: a file is opened without blocking (a named
// pipe opens at once instead of waiting for a writer), must be a regular
// file (a symbolic link to one is followed), and is read up to a limit
// suited to its kind (a data file: its size when opened), so a link to
// /dev/zero, a pipe, a device, a socket, a directory or a huge (possibly
// sparse) file each give one clear error naming the user's path.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Limits on the size of the files tempora reads. They are far above what
// tempora writes (a record of a 1000-feature × 100-timestep explanation is
// a few MB) or a user writes by hand, and low enough that reading one file
// never exhausts a machine's memory. Data files have none but their size.
const (
	// RecordLimit bounds a record file (record.Read).
	RecordLimit = 256 << 20
	// ManifestLimit bounds a run's manifest.json.
	ManifestLimit = 1 << 20
	// IndexLimit bounds a problem directory's index.json, which lists
	// every (setting, model) of a suite.
	IndexLimit = 64 << 20
	// JSONLimit bounds a problem's small JSON files (problem.json,
	// model.json, truth.json).
	JSONLimit = 64 << 20
	// NamesLimit bounds a file of feature or output names (text or
	// JSON): a million names of 64 bytes.
	NamesLimit = 64 << 20
	// HierarchyLimit bounds TIME's hierarchy file (-hierarchy).
	HierarchyLimit = 64 << 20
	// LineLimit bounds one line of a text file read line by line (names,
	// targets, long-format CSV).
	LineLimit = 1 << 20
	// FileSize as a limit reads a data file (a tensor, targets, a mask,
	// attributions: .npy or CSV) up to its size when opened: data may be
	// as large as memory allows, which the readers check against what
	// the file announces; being a regular file is what bounds it.
	FileSize = -1
)

// ErrNotRegular is the cause of an error about a file that is not a regular
// file; ErrTooLarge of one about a file over its limit.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("file too large")
)

// Open opens path for reading without blocking and returns it if it is a
// regular file. Any other file (directory, named pipe, device, socket) is
// closed again and reported as "open PATH: is a named pipe, not a regular
// file", an error wrapping ErrNotRegular.
func Open(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|nonblock, 0)
	if err != nil {
		// A socket cannot be opened at all ("no such device or
		// address"): say what it is.
		if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, &fs.PathError{Op: "open", Path: path, Err: notRegular{fi.Mode()}}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: notRegular{fi.Mode()}}
	}
	return f, nil
}

// notRegular says what a file is instead of a regular file.
type notRegular struct{ mode fs.FileMode }

func (e notRegular) Error() string {
	return "is " + Kind(e.mode) + ", not a regular file"
}

func (e notRegular) Unwrap() error { return ErrNotRegular }

// Kind names the type of a file mode: "a directory", "a named pipe (FIFO)",
// "a character device", "a block device", "a socket", "a symbolic link",
// "an irregular file" or "a regular file".
func Kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file"
}

// ReadFile returns the content of the regular file path (see Open), or an
// error if it holds more than limit bytes: "read PATH: 1073741824 bytes,
// more than the 256 MiB a record may have" (what names the kind of file),
// wrapping ErrTooLarge. The size is checked before reading and again while
// reading, so a file that grows meanwhile is still cut off at the limit.
func ReadFile(path string, limit int64, what string) ([]byte, error) {
	r, err := OpenLimited(path, limit, what)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b := make([]byte, 0, r.size+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Reader reads a regular file up to a limit; see OpenLimited.
type Reader struct {
	f          *os.File
	path, what string
	size       int64 // when opened
	limit, n   int64 // bytes allowed, bytes read
	sized      bool  // limit is the size when opened (FileSize)
}

// OpenLimited opens the regular file path as Open does and returns a
// reader of at most limit bytes of it: a file larger than limit is refused
// at once, and one that grows past it while being read fails there, with
// the error ReadFile gives. A limit of FileSize reads the file up to its
// size when opened, and fails if it grows meanwhile.
func OpenLimited(path string, limit int64, what string) (*Reader, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	r := &Reader{f: f, path: path, what: what, size: fi.Size(), limit: limit}
	if limit == FileSize {
		r.limit, r.sized = fi.Size(), true
	} else if fi.Size() > limit {
		f.Close()
		return nil, r.tooLarge(fi.Size(), "")
	}
	return r, nil
}

func (r *Reader) tooLarge(n int64, more string) error {
	msg := fmt.Sprintf("%d%s bytes, more than the %s %s may have", n, more, Size(r.limit), r.what)
	if r.sized {
		msg = fmt.Sprintf("%s grew past its %d bytes while being read", r.what, r.size)
	}
	return &fs.PathError{Op: "read", Path: r.path, Err: tooLargeError{msg}}
}

// Read reads from the file, failing with ErrTooLarge once it has more than
// the limit.
func (r *Reader) Read(b []byte) (int, error) {
	if r.n > r.limit {
		return 0, r.tooLarge(r.limit, " or more")
	}
	if room := r.limit - r.n + 1; int64(len(b)) > room {
		b = b[:room]
	}
	n, err := r.f.Read(b)
	r.n += int64(n)
	if r.n > r.limit {
		return n - int(r.n-r.limit), r.tooLarge(r.limit, " or more")
	}
	return n, err
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

type tooLargeError struct{ msg string }

func (e tooLargeError) Error() string { return e.msg }
func (e tooLargeError) Unwrap() error { return ErrTooLarge }

// Size formats a byte count in binary units: "256 MiB", "1 KiB", "100 bytes".
func Size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
