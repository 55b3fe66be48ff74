// Package atomicfile writes files atomically: the content goes to a
// temporary file in the same directory, which is synced and renamed over the
// destination only when complete, so readers and interrupted runs never see
// a partial file.
//
// A new file gets the permissions careful Unix tools give one, 0666 less
// the process's umask (0644 under the usual umask 022, 0600 under 077).
// Errors name the destination, never the temporary file.
package atomicfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
)

// seq numbers the temporary files of this process.
var seq atomic.Uint64

// create creates a new temporary file for path in dir, named
// ".BASE.tmpPID-N" (readers skip names starting with "."), with mode 0666
// less the umask.
func create(dir, base string) (*os.File, error) {
	for {
		name := filepath.Join(dir, "."+base+".tmp"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(seq.Add(1), 10))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue // left by an earlier process with this pid
		}
		return f, err
	}
}

// pathError is err about path: the error of a system call on the temporary
// file, or of the rename, told as one on the destination.
func pathError(op, path string, err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// Write creates or replaces path with what fill writes. If fill or any step
// fails, path is left untouched and the temporary file is removed. path
// must not be a directory.
func Write(path string, fill func(w io.Writer) error) error {
	return WriteContext(context.Background(), path, fill)
}

// WriteContext is Write that stops once ctx is done: every write fill
// makes after that fails with ctx's error (a buffered fill notices at its
// next flush, so a large file stops within one buffer), and a ctx done when
// fill returns skips the sync and the rename. path is then left untouched
// and the temporary file removed.
func WriteContext(ctx context.Context, path string, fill func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return &fs.PathError{Op: "write", Path: path, Err: errors.New("is a directory")}
	}
	f, err := create(dir, base)
	if err != nil {
		return pathError("create", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	var w io.Writer = f
	if ctx.Done() != nil {
		w = ctxWriter{ctx, f}
	}
	if err = fill(w); err == nil {
		err = ctx.Err()
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == tmp {
			return pathError("write", path, err)
		}
		return err
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", path, pathError("sync", path, err).(*fs.PathError).Err)
	}
	if err = f.Close(); err != nil {
		return pathError("close", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return pathError("write", path, err)
	}
	return nil
}

// ctxWriter writes to w until ctx is done, then fails with ctx's error.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(b []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(b)
}

// WriteBytes creates or replaces path with b atomically.
func WriteBytes(path string, b []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}
