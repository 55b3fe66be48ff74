package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/tempora-dev/tempora/experiments"
	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/record/report"
	"github.com/tempora-dev/tempora/results"
)

const reportHelp = `
Report renders the records of a benchmark run (IN/records, one JSON file per
suite, setting, model and method) into OUT:

  index.md                 a summary linking everything below
  tables/table1.md, .csv   the paper's Table 1 and Table S1 (suite table1) and
  tables/table-s1.*        Table S2 (suite table-s2), mean (SD) over models
  tables/table-s2.*        with the paper's numbers beside ours
  tables/suite-<s>.*       every suite: one row per setting and method, every
                           metric (the CSV adds n and 95% confidence intervals)
  figures/sweep-<s>.*      TIME's power and FDR versus a swept parameter (the
                           test-set-size suites), PNG and SVG
  figures/heatmap-<s>-*    ground truth, TIME and SAGE for one model, PNG and SVG

Several runs (for example one directory per suite) are reported together
with -in DIR1,DIR2,...; a record present in two of them is an error.

Report reads saved records only, so it can rebuild the report of an old run.`

func (p *program) report(_ context.Context, args []string, stdout, _ io.Writer) error {
	fs := newFlagSet("report", reportHelp, stdout)
	in := fs.String("in", "", "run directory, or comma-separated run directories to report together; each one's records/ subdirectory holds the records (required)")
	out := fs.String("out", "", "output directory (default: the first IN/report)")
	if err := parseFlags(fs, args); err != nil {
		return helpOK(err)
	}
	if fs.NArg() != 0 {
		return usageErrorf("report: unexpected arguments %q (see tempora report -h)", fs.Args())
	}
	if *in == "" {
		return usageErrorf("report: -in is required (see tempora report -h)")
	}
	dirs := strings.Split(*in, ",")
	if p.parseOnly {
		return nil
	}
	if *out == "" {
		*out = filepath.Join(dirs[0], "report")
	}
	var recs []*record.Record
	for _, d := range dirs {
		r, err := readRecords(filepath.Join(d, "records"))
		if err != nil {
			return err
		}
		recs = append(recs, r...)
	}
	record.Sort(recs)
	var files []string
	removeStale(*out, "", true) // temporaries of reports killed midway
	err := stageDir(*out, func(dir string) (err error) {
		files, err = results.WriteReport(dir, recs, suiteReports())
		return err
	})
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintf(stdout, "%d records: wrote %d files to %s\n", len(recs), len(files), *out)
	fmt.Fprintln(stdout, filepath.Join(*out, "index.md"))
	return nil
}

// suiteReports returns what each suite declares about its report
// (experiments.Suite.Report), by suite name.
func suiteReports() map[string]report.Suite {
	m := map[string]report.Suite{}
	for _, s := range experiments.Suites {
		m[s.Name] = s.Report
	}
	return m
}

// readRecords loads every record below dir, with errors that name the
// problem: a missing directory, no records, or a corrupt record file.
func readRecords(dir string) ([]*record.Record, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("report: no records directory %s (is -in the directory of a run?)", dir)
	case err != nil:
		return nil, fmt.Errorf("report: %w", err)
	case !fi.IsDir():
		return nil, fmt.Errorf("report: %s is not a directory", dir)
	}
	recs, err := record.ReadAll(dir)
	if err != nil {
		return nil, fmt.Errorf("report: reading records: %w", err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("report: no records (*.json) in %s", dir)
	}
	return recs, nil
}
