package dataio

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/safefile"
)

// Targets of a model with several outputs
//
// A model with several outputs per instance (tempora.Outputs) has, for
// class outputs, one class label per instance, read as the targets of a
// model of one output are (0..K−1 instead of 0/1); for horizons and
// output steps, K targets per instance, any of which may be missing (NaN:
// no target, such as the steps after a short sequence's end):
//
//   - a .npy file of shape (M, K), or (M,) for K = 1, NaN where a target
//     is missing (ReadOutputTargets);
//   - a wide CSV (.csv or .txt) file: one line per instance of K
//     comma-separated values, an empty, NA or NaN value being missing,
//     after an optional header line naming the outputs;
//   - a long CSV file: a header naming the three columns instance, output
//     and value (in any order), then one line per target, for example
//
//     instance,output,value
//     0,h+1,21.5
//     0,h+2,22
//     …
//
//     instance is a 0-based integer and M one more than the largest;
//     output is an output name or a 0-based index, by the rule of the
//     feature column of a long data file (ReadTensorCSV); a target
//     without a line, or whose value is empty, NA or NaN, is missing.
//
// ReadFiles reads them with Files.Outputs; K is the file's unless Outputs
// gives it, and must then agree.

// ReadOutputTargets reads the targets of a model with several outputs
// (not classes: their targets are labels, read as one output's) from a
// .npy or CSV file in one of the layouts above, choosing the reader from
// the file's extension. names, if not nil, are the output names given
// apart, which a CSV file naming its outputs must use. It returns the
// M·K targets instance-major (NaN where missing), K, and the output names
// the file gives (names, or those of the file's header or output column;
// nil when neither names them). It returns an error naming the file, and
// the line where it applies, for an infinite or non-numeric value, a line
// of another number of values, a target given twice, or names that
// disagree.
func ReadOutputTargets(path string, names []string) ([]float64, int, []string, error) {
	read, err := outputTargetsReader(path)
	if err != nil {
		return nil, 0, nil, err
	}
	return read(path, names)
}

// readOutputTargetsNPY reads targets of shape (M, K), or (M,) for K = 1,
// from a .npy file: NaN is a missing target, an infinity an error naming
// the instance and output.
func readOutputTargetsNPY(path string, names []string) ([]float64, int, []string, error) {
	if err := checkOutputNames(names); err != nil {
		return nil, 0, nil, fmt.Errorf("dataio: %s: %w", path, err)
	}
	a, err := readNPY(path)
	if err != nil {
		return nil, 0, nil, err
	}
	k := 1
	switch {
	case len(a.Shape) == 2:
		k = a.Shape[1]
	case len(a.Shape) != 1:
		return nil, 0, nil, fmt.Errorf("dataio: %s: %w", path, tempora.NewDataError(tempora.KindTargets,
			fmt.Errorf("targets of several outputs must have shape instances × outputs, got shape %v", a.Shape)))
	}
	if len(a.Data) == 0 {
		return nil, 0, nil, fmt.Errorf("dataio: %s: %w", path, tempora.NewDataError(tempora.KindTargets,
			fmt.Errorf("targets have empty shape %v", a.Shape)))
	}
	if n := slices.IndexFunc(a.Data, func(v float64) bool { return math.IsInf(v, 0) }); n >= 0 {
		de := tempora.NewDataError(tempora.KindTarget,
			fmt.Errorf("target of instance %d, output %s is %v (a missing target is NaN; infinities are errors)", n/k, outputName(names, n%k), a.Data[n]))
		return nil, 0, nil, fmt.Errorf("dataio: %s: %w", path, de.At(n/k, -1, -1).WithValue(a.Data[n]).WithCount(tempora.CountInf(a.Data)))
	}
	return a.Data, k, names, nil
}

// checkOutputNames checks output names given apart: valid (checkName)
// and distinct.
func checkOutputNames(names []string) error {
	if names != nil && len(names) == 0 {
		return errors.New("empty list of output names")
	}
	seen := make(map[string]int, len(names))
	for c, s := range names {
		if err := checkNameOf(s, "output"); err != nil {
			return fmt.Errorf("given output name %d: %w", c, err)
		}
		if p, ok := seen[s]; ok {
			return fmt.Errorf("given output names %d and %d are both %q", p, c, s)
		}
		seen[s] = c
	}
	return nil
}

// outputName names output c in messages: its name, or its index.
func outputName(names []string, c int) string {
	if names != nil && c < len(names) {
		return strconv.Quote(names[c])
	}
	return strconv.Itoa(c)
}

// targetColumns are the columns of long targets.
var targetColumns = [3]string{"instance", "output", "value"}

// readOutputTargetsCSV reads targets of several outputs from a wide or
// long CSV file (see above): long when its header names the columns of
// targetColumns.
func readOutputTargetsCSV(path string, names []string) ([]float64, int, []string, error) {
	var (
		y []float64
		k int
	)
	err := readFile(path, safefile.FileSize, dataFile, func(r io.Reader) (err error) {
		y, k, names, err = readOutputTargetsFrom(r, names)
		return err
	})
	if err != nil {
		return nil, 0, nil, err
	}
	return y, k, names, nil
}

func readOutputTargetsFrom(r io.Reader, names []string) ([]float64, int, []string, error) {
	if err := checkOutputNames(names); err != nil {
		return nil, 0, nil, err
	}
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	first, err := cr.Read()
	if err == io.EOF {
		return nil, 0, nil, errors.New("file is empty (want one line of targets per instance, or a header instance,output,value)")
	}
	if err != nil {
		return nil, 0, nil, targetsCSVError(err)
	}
	first[0] = strings.TrimPrefix(first[0], "\ufeff")
	if col, ok := longTargetsHeader(first); ok {
		return readLongTargets(cr, col, names)
	}
	return readWideTargets(cr, first, names)
}

// longTargetsHeader reports whether hdr names the columns of long targets,
// and where each is.
func longTargetsHeader(hdr []string) ([3]int, bool) {
	var col [3]int
	if len(hdr) != len(targetColumns) {
		return col, false
	}
	for k, name := range targetColumns {
		col[k] = slices.IndexFunc(hdr, func(h string) bool { return strings.EqualFold(strings.TrimSpace(h), name) })
		if col[k] < 0 {
			return col, false
		}
	}
	return col, true
}

// readWideTargets reads wide targets whose first line is first: a header
// when one of its fields is not a number, empty, NA or NaN.
func readWideTargets(cr *csv.Reader, first, names []string) ([]float64, int, []string, error) {
	k := len(first)
	var y []float64
	header := slices.ContainsFunc(first, func(s string) bool {
		s = strings.TrimSpace(s)
		_, err := strconv.ParseFloat(s, 64)
		return err != nil && s != "" && !strings.EqualFold(s, "NA") && !strings.EqualFold(s, "NaN")
	})
	if header {
		fileNames := make([]string, k)
		seen := make(map[string]int, k)
		for c, s := range first {
			s = strings.TrimSpace(s)
			if err := checkNameOf(s, "output"); err != nil {
				return nil, 0, nil, fmt.Errorf("line 1 (the header): %w", err)
			}
			if p, ok := seen[s]; ok {
				return nil, 0, nil, fmt.Errorf("line 1 (the header): columns %d and %d both name %q", p+1, c+1, s)
			}
			seen[s] = c
			fileNames[c] = s
		}
		if names != nil && !slices.Equal(names, fileNames) {
			return nil, 0, nil, fmt.Errorf("the header names the outputs %q, the output names given are %q", fileNames, names)
		}
		names = fileNames
	} else {
		line, _ := cr.FieldPos(0)
		var err error
		if y, err = appendTargets(nil, first, line); err != nil {
			return nil, 0, nil, err
		}
	}
	if names != nil && len(names) != k {
		return nil, 0, nil, fmt.Errorf("%d values per line (one per output) but %d output names", k, len(names))
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, nil, targetsCSVError(err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != k {
			return nil, 0, nil, fmt.Errorf("line %d has %d values, line 1 %d (one per output)", line, len(rec), k)
		}
		if y, err = appendTargets(y, rec, line); err != nil {
			return nil, 0, nil, err
		}
	}
	if len(y) == 0 {
		return nil, 0, nil, errors.New("no targets after the header")
	}
	if len(y)/k > maxCSVCells/k {
		return nil, 0, nil, fmt.Errorf("%d lines of %d targets, too many", len(y)/k, k)
	}
	return y, k, names, nil
}

// appendTargets appends the targets of one line of wide targets to y: a
// number, or NaN for an empty, NA or NaN value.
func appendTargets(y []float64, rec []string, line int) ([]float64, error) {
	for _, s := range rec {
		v, err := csvValue(s, line, true)
		if err != nil {
			return nil, err
		}
		y = append(y, v)
	}
	return y, nil
}

// readLongTargets reads long targets after their header, whose columns
// are at col.
func readLongTargets(cr *csv.Reader, col [3]int, names []string) ([]float64, int, []string, error) {
	cr.FieldsPerRecord = len(targetColumns)
	var cells []csvCell
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, nil, targetsCSVError(err)
		}
		line, _ := cr.FieldPos(0)
		c := csvCell{feat: strings.TrimSpace(rec[col[1]]), line: line}
		if c.inst, err = csvIndex(rec[col[0]], "instance", line); err != nil {
			return nil, 0, nil, err
		}
		if c.feat == "" {
			return nil, 0, nil, fmt.Errorf("line %d: empty output", line)
		}
		if c.value, err = csvValue(rec[col[2]], line, true); err != nil {
			return nil, 0, nil, err
		}
		cells = append(cells, c)
	}
	if len(cells) == 0 {
		return nil, 0, nil, errors.New("no targets after the header")
	}
	out, names, err := csvFeatures(cells, names, outputList)
	if err != nil {
		return nil, 0, nil, err
	}
	k := len(names)
	if names == nil {
		k = slices.Max(out) + 1
	}
	m := 0
	for _, c := range cells {
		m = max(m, c.inst+1)
	}
	if m > maxCSVCells/k || m*k/maxCellsPerLine > len(cells) {
		return nil, 0, nil, fmt.Errorf("largest indices imply %d instances × %d outputs but the file has only %d lines; tempora reads files that give at least one target in %d (write missing targets as lines with an empty value)",
			m, k, len(cells), maxCellsPerLine)
	}
	y := make([]float64, m*k)
	at := make([]int, m*k) // the line of each target, 0 for none
	for i := range y {
		y[i] = math.NaN()
	}
	for n, c := range cells {
		idx := c.inst*k + out[n]
		if at[idx] != 0 {
			return nil, 0, nil, fmt.Errorf("lines %d and %d both give instance %d, output %s", at[idx], c.line, c.inst, outputName(names, out[n]))
		}
		at[idx] = c.line
		y[idx] = c.value
	}
	return y, k, names, nil
}

// targetsCSVError rewords the errors of encoding/csv, which carry the
// line.
func targetsCSVError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return fmt.Errorf("line %d: want 3 comma-separated fields (instance,output,value)", pe.Line)
		}
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	return err
}
