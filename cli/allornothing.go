package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora/internal/atomicfile"
)

// The outputs of one command are all or nothing (issue 33): a command
// that fails writes none of them, and one killed midway leaves only
// temporaries of recognisable names, which the next command writing there
// removes.
//
//   - A command writing several files (explain's -json and -csv) writes
//     each atomically (package atomicfile) and, when a later one fails,
//     puts the earlier ones back as they were (fileSet).
//   - A command writing a directory (synth, report) writes it into a
//     temporary directory beside it and moves the files into place once
//     all are written (stageDir).
//   - Temporaries are named ".BASE.tmpPID-…" after the process that made
//     them (atomicfile's files, stageDir's directories, fileSet's saved
//     copies): removeStale removes those of processes no longer running.

// fileSet is the files a command has written so far, with what each
// replaced, so that a failure can undo them.
type fileSet struct{ done []setFile }

type setFile struct {
	path string
	// saved is a hard link to the file path replaced ("" when it replaced
	// none, or one that cannot be put back: not a regular file).
	saved   string
	existed bool
}

// write writes path with fill (atomicfile.Write), saving the regular file
// it replaces first.
func (s *fileSet) write(path string, fill func(io.Writer) error) error {
	removeStale(filepath.Dir(path), filepath.Base(path), false)
	f := setFile{path: path}
	if fi, err := os.Lstat(path); err == nil {
		f.existed = true
		if fi.Mode().IsRegular() {
			f.saved = tempName(path, "old")
			if os.Link(path, f.saved) != nil {
				f.saved = ""
			}
		}
	}
	if err := atomicfile.Write(path, fill); err != nil {
		if f.saved != "" {
			os.Remove(f.saved)
		}
		return err
	}
	s.done = append(s.done, f)
	return nil
}

// undo puts back what the files written replaced, newest first: a saved
// file in place of the new one, and no file where there was none.
func (s *fileSet) undo() {
	for i := len(s.done) - 1; i >= 0; i-- {
		f := s.done[i]
		switch {
		case f.saved != "":
			os.Rename(f.saved, f.path)
		case !f.existed:
			os.Remove(f.path)
		}
	}
	s.done = nil
}

// commit drops the saved copies: the files written stay.
func (s *fileSet) commit() {
	for _, f := range s.done {
		if f.saved != "" {
			os.Remove(f.saved)
		}
	}
	s.done = nil
}

// tempName returns a temporary name beside path: ".BASE.tmpPID-KIND".
func tempName(path, kind string) string {
	dir, base := filepath.Split(path)
	return filepath.Join(dir, "."+base+".tmp"+strconv.Itoa(os.Getpid())+"-"+kind)
}

// stageDir has write fill a temporary directory beside dir and then moves
// its files into dir (creating it): when write fails, dir is left as it
// was and the temporary directory removed. Errors name dir, not the
// temporary directory.
func stageDir(dir string, write func(tmp string) error) error {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	made := missingDirs(parent)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	failed := true
	defer func() {
		for _, d := range made {
			if failed {
				os.Remove(d) // only if empty
			}
		}
	}()
	removeStale(parent, filepath.Base(dir), false)
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	var tmp string
	for k := 0; ; k++ {
		// 0755 less the umask, as os.MkdirAll makes the directory.
		tmp = tempName(dir, "dir"+strconv.Itoa(k))
		err := os.Mkdir(tmp, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	defer os.RemoveAll(tmp)
	if err := write(tmp); err != nil {
		os.RemoveAll(tmp)
		return renamedError(err, tmp, dir)
	}
	if err := os.Rename(tmp, dir); err != nil {
		err = moveInto(tmp, dir)
		if err != nil {
			return renamedError(err, tmp, dir)
		}
	}
	failed = false
	return nil
}

// missingDirs returns the directories of path (itself first, then its
// parents) that do not exist yet.
func missingDirs(path string) []string {
	var out []string
	for p := path; ; p = filepath.Dir(p) {
		if _, err := os.Lstat(p); err == nil || filepath.Dir(p) == p {
			return out
		}
		out = append(out, p)
	}
}

// moveInto moves the files below tmp into dir, at the same relative
// paths, after checking that every one may be placed there
// (atomicfile.Placeable: a regular file is replaced, a character device
// or named pipe written through, anything else refused).
func moveInto(tmp, dir string) error {
	var rels []string
	err := filepath.WalkDir(tmp, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tmp, p)
		if err := atomicfile.Placeable(filepath.Join(dir, rel)); err != nil {
			return err
		}
		rels = append(rels, rel)
		return nil
	})
	if err != nil {
		return err
	}
	for _, rel := range rels {
		to := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		if err := atomicfile.Place(filepath.Join(tmp, rel), to); err != nil {
			return err
		}
	}
	return nil
}

// renamedError is err with the temporary directory tmp named as dir.
func renamedError(err error, tmp, dir string) error {
	if err == nil || !strings.Contains(err.Error(), tmp) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), tmp, dir))
}

// staleName matches a temporary's name: ".BASE.tmpPID-…".
var staleName = regexp.MustCompile(`^\.(.+)\.tmp(\d+)-`)

// removeStale removes the temporaries in dir (and, with deep, below it)
// of files named base ("" for any) that processes no longer running left
// behind, and returns how many: a temporary of a running process, or of
// another user, is left alone.
func removeStale(dir, base string, deep bool) int {
	n := 0
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		m := staleName.FindStringSubmatch(e.Name())
		if m == nil {
			if deep && e.IsDir() && e.Type()&fs.ModeSymlink == 0 {
				n += removeStale(p, base, true)
			}
			continue
		}
		pid, err := strconv.Atoi(m[2])
		if err != nil || (base != "" && m[1] != base) || processRunning(pid) || !ownFile(p) {
			continue
		}
		if os.RemoveAll(p) == nil {
			n++
		}
	}
	return n
}
