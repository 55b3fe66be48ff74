// Package atomicfile writes files atomically: the content goes to a
// temporary file in the same directory, which is synced and renamed over the
// destination only when complete, so readers and interrupted runs never see
// a partial file.
//
// A new file gets the permissions careful Unix tools give one, 0666 less
// the process's umask (0644 under the usual umask 022, 0600 under 077).
// Errors name the destination, never the temporary file.
//
// Only a regular file is ever replaced. A destination that is a character
// device or a named pipe (-json /dev/null, -csv /dev/stdout, a pipe of
// the shell's <(…) or >(…)) is written through, as a shell's redirection
// would: opened without creating or renaming anything, without blocking
// (a pipe that no process reads is refused at once), and written in
// place, so a failure may leave part of the content written. Any other
// destination (a directory, a block device, a socket) is refused, saying
// what it is. A symbolic link is followed: the file it names is replaced
// or written through, and the link stays.
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

	"github.com/tempora-dev/tempora/internal/safefile"
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
	target, mode, err := destination(path)
	if err != nil {
		return err
	}
	if mode&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0 {
		return writeThrough(ctx, path, mode&fs.ModeNamedPipe != 0, fill)
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
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
	if err = os.Rename(tmp, target); err != nil {
		return pathError("write", path, err)
	}
	return nil
}

// destination returns the file a write to path replaces (path, or the file
// a symbolic link path names) and its mode (0 if it does not exist, with
// ModeNamedPipe or ModeCharDevice if it is written in place), or an error
// if it is any other kind of file.
func destination(path string) (target string, mode fs.FileMode, err error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return path, 0, nil
	}
	if err != nil {
		return "", 0, pathError("write", path, err)
	}
	target = path
	if fi.Mode()&fs.ModeSymlink != 0 {
		if target, err = filepath.EvalSymlinks(path); errors.Is(err, fs.ErrNotExist) {
			// A dangling link: write the file it names, as a shell would.
			if target, err = os.Readlink(path); err == nil && !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(path), target)
			}
			if err == nil {
				if _, err = os.Lstat(target); errors.Is(err, fs.ErrNotExist) {
					return target, 0, nil
				}
				err = errors.New("is a symbolic link to a symbolic link to no file")
			}
		}
		if err != nil {
			return "", 0, pathError("write", path, err)
		}
		if fi, err = os.Stat(target); err != nil {
			return "", 0, pathError("write", path, err)
		}
	}
	switch m := fi.Mode(); {
	case m.IsRegular(), m&fs.ModeNamedPipe != 0, m&fs.ModeCharDevice != 0:
		return target, m, nil
	}
	return "", 0, &fs.PathError{Op: "write", Path: path, Err: notWritable{fi.Mode()}}
}

// Replaceable returns nil if a rename may put a file at path: nothing is
// there, or a regular file (not a link to one). Otherwise it returns an
// error saying what is there ("rename PATH: is a character device: …"),
// for callers that build files elsewhere and rename them into place.
func Replaceable(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return pathError("rename", path, err)
	case !fi.Mode().IsRegular():
		return &fs.PathError{Op: "rename", Path: path, Err: notReplaceable{fi.Mode()}}
	}
	return nil
}

// notReplaceable says what a file is that a rename would replace.
type notReplaceable struct{ mode fs.FileMode }

func (e notReplaceable) Error() string {
	return "is " + safefile.Kind(e.mode) + ", not a regular file: tempora replaces only regular files"
}

// notWritable says what a destination is that is neither replaced nor
// written through.
type notWritable struct{ mode fs.FileMode }

func (e notWritable) Error() string {
	return "is " + safefile.Kind(e.mode) + ": tempora writes only regular files, character devices and named pipes"
}

// writeThrough writes fill's content into the character device or named
// pipe path, opened without blocking: a pipe without a reader is refused
// ("no process reads it").
func writeThrough(ctx context.Context, path string, pipe bool, fill func(w io.Writer) error) (err error) {
	f, err := openThrough(path, pipe)
	if err != nil {
		return pathError("open", path, err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = pathError("close", path, cerr)
		}
	}()
	var w io.Writer = f
	if ctx.Done() != nil {
		w = ctxWriter{ctx, f}
	}
	if err = fill(w); err == nil {
		err = ctx.Err()
	}
	return err
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

// Placeable returns nil if Place may put a file at path: nothing is
// there, a regular file, a character device or a named pipe (or a
// symbolic link to one of these); otherwise the error Write would return.
func Placeable(path string) error {
	_, _, err := destination(path)
	return err
}

// Place puts the finished file from, built elsewhere on the same file
// system, at path, as Write would have written it there: a rename over
// path (or the file a link at path names) when it is absent or a regular
// file; its content written through when path is a character device or a
// named pipe, from then removed; otherwise Write's error. Callers that
// write several files all or nothing build them first and Place them at
// the end.
func Place(from, path string) error {
	target, mode, err := destination(path)
	if err != nil {
		return err
	}
	if mode&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0 {
		f, err := os.Open(from)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := writeThrough(context.Background(), path, mode&fs.ModeNamedPipe != 0, func(w io.Writer) error {
			_, err := io.Copy(w, f)
			return err
		}); err != nil {
			return err
		}
		return os.Remove(from)
	}
	if err := os.Rename(from, target); err != nil {
		return pathError("write", path, err)
	}
	return nil
}
