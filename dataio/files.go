package dataio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/tempora-dev/tempora/internal/safefile"
)

// Every file dataio reads goes through readFile (text) or readNPY (.npy):
// it is opened without blocking and must be a regular file, so a named
// pipe, a device or a directory is refused at once, saying what it is; a
// text file is read up to its limit (safefile: a data file up to its size
// when opened, a names file up to safefile.NamesLimit) and a line up to
// safefile.LineLimit.

// readFile opens path as a regular file of at most limit bytes and calls
// read on its content. An error opening or reading the file is returned as
// "dataio: open PATH: …" ("read PATH: …" for one too large); any other
// error of read as "dataio: PATH: …".
func readFile(path string, limit int64, what string, read func(io.Reader) error) error {
	r, err := safefile.OpenLimited(path, limit, what)
	if err != nil {
		return fmt.Errorf("dataio: %w", err)
	}
	defer r.Close()
	if err := read(&lineLimited{r: r, line: 1}); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && pe.Path == path {
			return fmt.Errorf("dataio: %w", pe)
		}
		return fmt.Errorf("dataio: %s: %w", path, err)
	}
	return nil
}

// dataFile names a data file in the errors of safefile.OpenLimited.
const dataFile = "a data file"

// lineLimited reads r and fails once a line is longer than
// safefile.LineLimit bytes, so that a file without line breaks (a sparse
// file, a wrong file) fails early instead of being read whole as one
// line.
type lineLimited struct {
	r    io.Reader
	line int   // the line being read, from 1
	n    int64 // its bytes so far
}

func (l *lineLimited) Read(b []byte) (int, error) {
	n, err := l.r.Read(b)
	for rest := b[:n]; ; {
		k := bytes.IndexByte(rest, '\n')
		if k < 0 {
			l.n += int64(len(rest))
		} else {
			l.n += int64(k)
		}
		if l.n > safefile.LineLimit {
			return 0, fmt.Errorf("line %d is longer than %s", l.line, safefile.Size(safefile.LineLimit))
		}
		if k < 0 {
			break
		}
		l.line++
		l.n = 0
		rest = rest[k+1:]
	}
	return n, err
}
