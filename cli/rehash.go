package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/tempora-dev/tempora/experiments"
	"github.com/tempora-dev/tempora/record"
)

const rehashHelp = `
Rehash is how you say that you changed records on purpose. Every record
carries a checksum of its content (docs/records.md, "Checksum"), so that
run, report and merge catch a record changed after it was written: a resumed
run moves it to damaged/ and runs its item again, report and merge refuse it.
After editing records by hand, or writing them with your own program, run

	tempora rehash RUN_DIR...

to give every record below RUN_DIR/records a checksum of its present
content (upgrading records of format tempora-record/1), after checking
everything else a reader checks; RUN_DIR/bench.txt is then rewritten from
the records. Arguments may also be single record files.`

func (p *program) rehash(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("rehash", rehashHelp, stdout)
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() == 0 {
		return usageErrorf("rehash: no run directories or record files given (see tempora rehash -h)")
	}
	if p.parseOnly {
		return nil
	}
	for _, arg := range fs.Args() {
		if err := rehashPath(arg, stdout); err != nil {
			return err
		}
	}
	return nil
}

// rehashPath rehashes one record file, or every record of a run directory.
func rehashPath(arg string, stdout io.Writer) error {
	fi, err := os.Stat(arg)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		changed, err := record.Rehash(arg)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %s\n", arg, map[bool]string{true: "rehashed", false: "unchanged"}[changed])
		return nil
	}
	recDir := filepath.Join(arg, "records")
	var n, changed int
	err = filepath.WalkDir(recDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !record.IsRecordFile(d) {
			return nil
		}
		c, err := record.Rehash(p)
		if err != nil {
			return err
		}
		n++
		if c {
			changed++
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("rehash: %s has no records directory", arg)
	}
	if err != nil {
		return err
	}
	if changed > 0 {
		if _, err := os.Stat(filepath.Join(arg, "manifest.json")); err == nil {
			if err := experiments.WriteBench(arg); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(stdout, "%s: rehashed %d of %d records\n", arg, changed, n)
	return nil
}
