// Command reportdiff checks that two benchmark runs agree in everything but
// wall time: make test-slurm runs it on a run sharded through Slurm and an
// unsharded local run of the same suite.
//
// Usage:
//
//	go run ./internal/tools/reportdiff RUN_A RUN_B
//
// Each RUN is a directory written by "tempora run" (or "tempora merge") with
// its report rendered by "tempora report" into RUN/report. reportdiff
// compares
//
//   - RUN/records: the same record files, each equal as JSON once its
//     runtime_seconds field, that of its explanation's accounting and its
//     checksum (which covers them) are removed (every other field, metrics
//     and explanation cells included, must match exactly);
//   - RUN/report: the same files, byte for byte, except that in markdown
//     tables the cells of "Runtime (s)" columns, and in CSV files the
//     columns whose name starts with "runtime_", are blanked first.
//
// It prints every difference (up to a limit) and exits with status 1 if
// there is any, 2 on bad usage or an unreadable directory.
package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxShown bounds the differences printed.
const maxShown = 20

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: reportdiff RUN_A RUN_B")
		os.Exit(2)
	}
	diffs, err := compareRuns(os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "reportdiff:", err)
		os.Exit(2)
	}
	for i, d := range diffs {
		if i == maxShown {
			fmt.Printf("... and %d more\n", len(diffs)-maxShown)
			break
		}
		fmt.Println(d)
	}
	if len(diffs) > 0 {
		fmt.Printf("reportdiff: %s and %s differ in %d places besides runtimes\n", os.Args[1], os.Args[2], len(diffs))
		os.Exit(1)
	}
	fmt.Printf("reportdiff: %s and %s agree apart from runtimes\n", os.Args[1], os.Args[2])
}

// compareRuns returns the differences between runs a and b.
func compareRuns(a, b string) ([]string, error) {
	recs, err := compareTrees(filepath.Join(a, "records"), filepath.Join(b, "records"), normaliseRecord)
	if err != nil {
		return nil, err
	}
	reps, err := compareTrees(filepath.Join(a, "report"), filepath.Join(b, "report"), normaliseReportFile)
	if err != nil {
		return nil, err
	}
	return append(recs, reps...), nil
}

// compareTrees compares every regular file below directories a and b after
// passing its content through normalise.
func compareTrees(a, b string, normalise func(name string, b []byte) ([]byte, error)) ([]string, error) {
	fa, err := files(a)
	if err != nil {
		return nil, err
	}
	fb, err := files(b)
	if err != nil {
		return nil, err
	}
	if len(fa) == 0 {
		return nil, fmt.Errorf("%s holds no files", a)
	}
	var diffs []string
	for _, name := range fa {
		if _, found := slices.BinarySearch(fb, name); !found {
			diffs = append(diffs, fmt.Sprintf("%s: only in %s", name, a))
		}
	}
	for _, name := range fb {
		if _, found := slices.BinarySearch(fa, name); !found {
			diffs = append(diffs, fmt.Sprintf("%s: only in %s", name, b))
		}
	}
	for _, name := range fa {
		if _, found := slices.BinarySearch(fb, name); !found {
			continue
		}
		ca, err := readNormalised(filepath.Join(a, name), normalise)
		if err != nil {
			return nil, err
		}
		cb, err := readNormalised(filepath.Join(b, name), normalise)
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(ca, cb) {
			diffs = append(diffs, describe(filepath.Join(filepath.Base(a), name), ca, cb))
		}
	}
	return diffs, nil
}

// files returns the paths of the regular files below dir, relative and
// sorted.
func files(dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		names = append(names, rel)
		return err
	})
	slices.Sort(names)
	return names, err
}

func readNormalised(path string, normalise func(string, []byte) ([]byte, error)) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	n, err := normalise(path, b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// describe names the first differing line of two normalised files.
func describe(name string, a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range max(len(la), len(lb)) {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			return fmt.Sprintf("%s: line %d differs:\n  < %s\n  > %s", name, i+1, clip(x), clip(y))
		}
	}
	return name + ": differs" // binary files without line breaks
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// normaliseRecord removes the wall times from a record (its
// runtime_seconds and, if it holds an explanation, the explanation's
// accounting.runtime_seconds) and its checksum, which covers them, and
// re-encodes it with sorted keys.
func normaliseRecord(path string, b []byte) ([]byte, error) {
	if filepath.Ext(path) != ".json" {
		return b, nil
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // keep every digit: numbers compare as written
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	if _, ok := m["runtime_seconds"]; !ok {
		return nil, fmt.Errorf("no runtime_seconds field: not a record?")
	}
	delete(m, "runtime_seconds")
	delete(m, "checksum")
	if e, ok := m["explanation"].(map[string]any); ok {
		if a, ok := e["accounting"].(map[string]any); ok {
			delete(a, "runtime_seconds")
		}
	}
	return json.MarshalIndent(m, "", " ")
}

// normaliseReportFile blanks the runtime columns of markdown tables and CSV
// files; other files are compared as they are.
func normaliseReportFile(path string, b []byte) ([]byte, error) {
	switch filepath.Ext(path) {
	case ".md":
		return blankMarkdownRuntimes(b), nil
	case ".csv":
		return blankCSVRuntimes(b)
	}
	return b, nil
}

// blankMarkdownRuntimes empties, in every markdown table, the cells of the
// columns headed "Runtime (s)".
func blankMarkdownRuntimes(b []byte) []byte {
	lines := strings.Split(string(b), "\n")
	var runtimeCols []int // of the current table
	for i, line := range lines {
		if !strings.HasPrefix(line, "|") {
			runtimeCols = nil
			continue
		}
		cells := strings.Split(line, "|")
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "| ---") {
			runtimeCols = nil // a header row
			for j, c := range cells {
				if strings.TrimSpace(c) == "Runtime (s)" {
					runtimeCols = append(runtimeCols, j)
				}
			}
			continue
		}
		for _, j := range runtimeCols {
			if j < len(cells) {
				cells[j] = " "
			}
		}
		lines[i] = strings.Join(cells, "|")
	}
	return []byte(strings.Join(lines, "\n"))
}

// blankCSVRuntimes empties the columns whose header starts with "runtime_".
func blankCSVRuntimes(b []byte) ([]byte, error) {
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return b, nil
	}
	var cols []int
	for j, h := range rows[0] {
		if strings.HasPrefix(h, "runtime_") {
			cols = append(cols, j)
		}
	}
	for _, row := range rows[1:] {
		for _, j := range cols {
			if j < len(row) {
				row[j] = ""
			}
		}
	}
	var out bytes.Buffer
	w := csv.NewWriter(&out)
	if err := w.WriteAll(rows); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
