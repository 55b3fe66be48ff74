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
	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/internal/safefile"
)

// Data files
//
// Besides NumPy .npy files (io.go), tempora reads user data from plain text:
//
//   - a data tensor in long CSV format (ReadTensorCSV): a header line
//     naming the four columns instance, feature, timestep and value (in any
//     order), then one line per cell, for example
//
//     instance,feature,timestep,value
//     0,heart_rate,0,72.5
//     0,heart_rate,1,73
//     …
//
//     instance and timestep are 0-based integers; M and L are one more than
//     the largest instance and timestep. feature is either a 0-based feature
//     index or a feature name (see ReadTensorCSV for the rule). Every
//     (instance, feature, timestep) cell must appear exactly once, in any
//     order; values must be finite decimal numbers. ReadDataCSV reads the
//     same format for data with missing values (see there): a cell without
//     a line, or whose value is empty, NA or NaN, is missing.
//   - a vector, for example targets, with one value per line and an optional
//     header line (ReadVectorCSV);
//   - feature names, one per line (ReadFeatureNames; names.go).
//
// ReadFiles (dataset.go) reads a whole dataset, choosing each file's
// reader from its extension (readers.go).

// csvColumns are the columns of the long tensor format, in the order
// WriteTensorCSV writes them.
var csvColumns = [4]string{"instance", "feature", "timestep", "value"}

// maxCSVCells bounds the tensor size a CSV file may describe, as for .npy
// files (2^31 values).
const maxCSVCells = 1 << 31

// ReadTensorCSV reads an M × D × L data tensor from a CSV file in the long
// format described above and returns it with the feature names it used.
//
// The feature column is interpreted as follows. If featureNames is non-nil,
// D = len(featureNames) and each feature entry is looked up first as one of
// those names and otherwise parsed as a 0-based index below D; the returned
// names are featureNames. If featureNames is nil and every feature entry is a
// non-negative integer, the entries are indices, D is one more than the
// largest, and the returned names are nil. Otherwise every entry is a name,
// features are numbered in order of first appearance, and the returned names
// list them in that order.
//
// It returns an error naming the file and line for a missing or misnamed
// column, a malformed line, a negative or non-integer index, an unknown
// feature name, a feature name with a control character (such as a line
// break), a non-numeric or non-finite value, a cell given twice, or a cell
// missing; and for given featureNames that are empty, repeated or
// surrounded by white space.
func ReadTensorCSV(path string, featureNames []string) (*tempora.Tensor, []string, error) {
	return readTensorCSVFile(path, featureNames, false)
}

// ReadDataCSV reads a data tensor that may have missing values from a CSV
// file in the long format, as ReadTensorCSV does, with these differences.
// A missing value is NaN in the returned tensor: a cell (instance, feature,
// timestep) that no line gives, and a cell whose value is empty, NA or NaN
// (in any case). An infinite value is an error naming its line. Every
// instance from 0 to M−1 and every feature must have at least one line (an
// instance or feature without any is an error naming it), and the file
// must give at least one line per maxCellsPerLine cells of the tensor its
// largest indices imply, so that a stray index cannot make the reader
// allocate far more than the file holds; a sparser file can write its
// missing cells as lines with an empty value.
//
// The timestep column is aligned time: it is the timestep of the tensor,
// and of the explanation's windows, whatever the dataset's alignment. For
// start-aligned data (the default) timestep 0 is each sequence's first
// step; for end-aligned data (tempora.AlignEnd) timestep L−1 is each
// sequence's last step, so a shorter sequence's lines start at a later
// timestep: a file of "hours before discharge" h writes timestep L−1−h.
func ReadDataCSV(path string, featureNames []string) (*tempora.Tensor, []string, error) {
	return readTensorCSVFile(path, featureNames, true)
}

// maxCellsPerLine is the sparsest tensor ReadDataCSV reads: cells per line
// of the file.
const maxCellsPerLine = 64

func readTensorCSVFile(path string, featureNames []string, missing bool) (*tempora.Tensor, []string, error) {
	var (
		x     *tempora.Tensor
		names []string
	)
	err := readFile(path, safefile.FileSize, dataFile, func(r io.Reader) (err error) {
		x, names, err = readTensorCSV(r, featureNames, missing)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return x, names, nil
}

// csvCell is one parsed line of a long-format file.
type csvCell struct {
	inst, ts int
	feat     string
	value    float64
	line     int
}

// readTensorCSV reads the long format; missing says whether cells may be
// missing (ReadDataCSV) or every cell must be given (ReadTensorCSV).
func readTensorCSV(r io.Reader, featureNames []string, missing bool) (*tempora.Tensor, []string, error) {
	cr := csv.NewReader(bufio.NewReaderSize(r, 1<<16))
	cr.FieldsPerRecord = len(csvColumns)
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	hdr, err := cr.Read()
	if err == io.EOF {
		return nil, nil, errors.New("file is empty (want a header line instance,feature,timestep,value)")
	}
	if err != nil {
		return nil, nil, csvError(err)
	}
	var col [4]int // col[k] is the field holding csvColumns[k]
	for k, name := range csvColumns {
		col[k] = slices.IndexFunc(hdr, func(h string) bool {
			return strings.EqualFold(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")), name)
		})
		if col[k] < 0 {
			return nil, nil, fmt.Errorf("header %q lacks the column %q (want instance,feature,timestep,value)", strings.Join(hdr, ","), name)
		}
	}

	var cells []csvCell
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, csvError(err)
		}
		line, _ := cr.FieldPos(0)
		c := csvCell{feat: strings.TrimSpace(rec[col[1]]), line: line}
		if c.inst, err = csvIndex(rec[col[0]], "instance", line); err != nil {
			return nil, nil, err
		}
		if c.ts, err = csvIndex(rec[col[2]], "timestep", line); err != nil {
			return nil, nil, err
		}
		if c.feat == "" {
			return nil, nil, fmt.Errorf("line %d: empty feature", line)
		}
		if c.value, err = csvValue(rec[col[3]], line, missing); err != nil {
			return nil, nil, err
		}
		cells = append(cells, c)
	}
	if len(cells) == 0 {
		return nil, nil, errors.New("no data lines after the header")
	}

	feat, names, err := csvFeatures(cells, featureNames, featureList)
	if err != nil {
		return nil, nil, err
	}
	m, l := 0, 0
	for _, c := range cells {
		m, l = max(m, c.inst+1), max(l, c.ts+1)
	}
	d := len(names)
	if names == nil {
		d = slices.Max(feat) + 1
	}
	if m > maxCSVCells/d || m*d > maxCSVCells/l {
		return nil, nil, fmt.Errorf("largest indices imply a %d×%d×%d tensor, which is too large", m, d, l)
	}

	if missing {
		if err := checkCoverage(cells, feat, m, d, l, names); err != nil {
			return nil, nil, err
		}
	}

	// Sort the flat indices of the cells: adjacent equal indices are
	// duplicates, and the first index k not found at position k is a
	// missing cell. This needs no M×D×L scratch space, so a file with one
	// absurd index fails before anything large is allocated.
	type flat struct{ idx, cell int }
	order := make([]flat, len(cells))
	for k, c := range cells {
		order[k] = flat{(c.inst*d+feat[k])*l + c.ts, k}
	}
	slices.SortFunc(order, func(a, b flat) int {
		if a.idx != b.idx {
			return a.idx - b.idx
		}
		return a.cell - b.cell
	})
	name := func(j int) string {
		if names == nil {
			return strconv.Itoa(j)
		}
		return strconv.Quote(names[j])
	}
	for k := 1; k < len(order); k++ {
		if order[k].idx == order[k-1].idx {
			a, b := cells[order[k-1].cell], cells[order[k].cell]
			return nil, nil, fmt.Errorf("lines %d and %d both give instance %d, feature %s, timestep %d",
				a.line, b.line, b.inst, name(feat[order[k].cell]), b.ts)
		}
	}
	n := m * d * l
	if missing {
		x := tempora.NewTensor(m, d, l)
		for k := range x.Data {
			x.Data[k] = math.NaN()
		}
		for k, c := range cells {
			x.Data[(c.inst*d+feat[k])*l+c.ts] = c.value
		}
		return x, names, nil
	}
	for k := 0; k < n; k++ {
		if k >= len(order) || order[k].idx != k {
			i, r := k/(d*l), k%(d*l)
			return nil, nil, fmt.Errorf("no value for instance %d, feature %s, timestep %d (a %d×%d×%d tensor needs %d lines, found %d)",
				i, name(r/l), r%l, m, d, l, n, len(cells))
		}
	}
	x := tempora.NewTensor(m, d, l)
	for k, c := range cells {
		x.Data[(c.inst*d+feat[k])*l+c.ts] = c.value
	}
	return x, names, nil
}

// csvFeatures resolves the feature entries of cells to indices and returns
// them with the names in use (nil when the entries are plain indices). list
// says what the entries name: features, or the outputs of long targets
// (outputs.go), whose entries are in the same field.
func csvFeatures(cells []csvCell, featureNames []string, list nameList) ([]int, []string, error) {
	feat := make([]int, len(cells))
	if featureNames != nil {
		if len(featureNames) == 0 {
			return nil, nil, fmt.Errorf("empty list of %s names", list.noun)
		}
		byName := make(map[string]int, len(featureNames))
		for j, s := range featureNames {
			if err := checkNameOf(s, list.noun); err != nil {
				return nil, nil, list.err(j, fmt.Errorf("given %s name %d: %w", list.noun, j, err))
			}
			if k, ok := byName[s]; ok {
				return nil, nil, list.err(j, fmt.Errorf("given %s names %d and %d are both %q", list.noun, k, j, s))
			}
			byName[s] = j
		}
		for k, c := range cells {
			j, ok := byName[c.feat]
			if !ok {
				v, err := strconv.Atoi(c.feat)
				if err != nil || v < 0 || v >= len(featureNames) {
					return nil, nil, fmt.Errorf("line %d: %s %q is neither one of the %d %s names nor an index in 0..%d",
						c.line, list.noun, c.feat, len(featureNames), list.noun, len(featureNames)-1)
				}
				j = v
			}
			feat[k] = j
		}
		return feat, featureNames, nil
	}
	indices := true
	for k, c := range cells {
		v, err := strconv.Atoi(c.feat)
		if err != nil || v < 0 {
			indices = false
			break
		}
		feat[k] = v
	}
	if indices {
		return feat, nil, nil
	}
	var names []string
	byName := make(map[string]int)
	for k, c := range cells {
		j, ok := byName[c.feat]
		if !ok {
			if err := checkNameOf(c.feat, list.noun); err != nil {
				return nil, nil, fmt.Errorf("line %d: %w", c.line, err)
			}
			j = len(names)
			byName[c.feat] = j
			names = append(names, c.feat)
		}
		feat[k] = j
	}
	return feat, names, nil
}

func csvIndex(s, what string, line int) (int, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("line %d: %s %q is not a non-negative integer", line, what, s)
	}
	if v >= maxCSVCells {
		return 0, fmt.Errorf("line %d: %s %d is too large", line, what, v)
	}
	return v, nil
}

// checkCoverage checks, for a file that may leave cells out, that every
// instance and feature has a line and that the tensor is not much larger
// than the file (see ReadDataCSV).
func checkCoverage(cells []csvCell, feat []int, m, d, l int, names []string) error {
	if m*d*l/maxCellsPerLine > len(cells) {
		return fmt.Errorf("largest indices imply a %d×%d×%d tensor of %d cells but the file has only %d lines; tempora reads files that give at least one cell in %d (write missing cells as lines with an empty value to give a sparser tensor)",
			m, d, l, m*d*l, len(cells), maxCellsPerLine)
	}
	inst := make([]bool, m)
	fs := make([]bool, d)
	for k, c := range cells {
		inst[c.inst] = true
		fs[feat[k]] = true
	}
	if i := slices.Index(inst, false); i >= 0 {
		return fmt.Errorf("instance %d has no line (instances are numbered from 0 to %d; an instance with nothing observed cannot be explained)", i, m-1)
	}
	if j := slices.Index(fs, false); j >= 0 {
		if names != nil {
			return fmt.Errorf("feature %q has no line (a feature never observed cannot be explained)", names[j])
		}
		return fmt.Errorf("feature %d has no line (features are numbered from 0 to %d; a feature never observed cannot be explained)", j, d-1)
	}
	return nil
}

// csvValue parses a value; with missing, an empty value, NA and NaN (in
// any case) are a missing value, NaN.
func csvValue(s string, line int, missing bool) (float64, error) {
	s = strings.TrimSpace(s)
	if missing && (s == "" || strings.EqualFold(s, "NA") || strings.EqualFold(s, "NaN")) {
		return math.NaN(), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if s == "" {
			return 0, fmt.Errorf("line %d: empty value", line)
		}
		return 0, fmt.Errorf("line %d: value %q is not a number", line, s)
	}
	if missing && math.IsNaN(v) { // a NaN spelled otherwise, such as "+NaN"
		return math.NaN(), nil
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		if missing {
			return 0, fmt.Errorf("line %d: value %q is infinite (a missing value is empty, NA or NaN)", line, s)
		}
		return 0, fmt.Errorf("line %d: value %q is not finite", line, s)
	}
	return v, nil
}

// csvError rewords the errors of encoding/csv, which carry the line.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return fmt.Errorf("line %d: want 4 comma-separated fields (instance,feature,timestep,value)", pe.Line)
		}
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	return err
}

// WriteTensorCSV writes x to path in the long CSV format read by
// ReadTensorCSV, atomically: a header line, then one line per cell in
// row-major order. The feature column holds featureNames[j] if featureNames
// is non-nil (it must then have x.D entries) and the index j otherwise.
// Values are written with the fewest digits that read back exactly.
func WriteTensorCSV(path string, x *tempora.Tensor, featureNames []string) error {
	if featureNames != nil && len(featureNames) != x.D {
		return fmt.Errorf("dataio: %d feature names for %d features", len(featureNames), x.D)
	}
	return atomicfile.Write(path, func(w io.Writer) error { return writeTensorCSV(w, x, featureNames) })
}

func writeTensorCSV(w io.Writer, x *tempora.Tensor, featureNames []string) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	cw := csv.NewWriter(bw)
	if err := cw.Write(csvColumns[:]); err != nil {
		return err
	}
	rec := make([]string, 4)
	for i := 0; i < x.M; i++ {
		rec[0] = strconv.Itoa(i)
		for j := 0; j < x.D; j++ {
			if featureNames != nil {
				rec[1] = featureNames[j]
			} else {
				rec[1] = strconv.Itoa(j)
			}
			for t, v := range x.Series(i, j) {
				rec[2] = strconv.Itoa(t)
				rec[3] = strconv.FormatFloat(v, 'g', -1, 64)
				if err := cw.Write(rec); err != nil {
					return err
				}
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// ReadVectorCSV reads a vector, for example targets, from a text file with
// one value per line. A first line that is not a number is taken as a header
// and skipped; blank lines at the end are ignored. It returns an error naming
// the file and line for a blank line inside the data, a line with more than
// one field, a non-numeric or non-finite value, or a file without values.
func ReadVectorCSV(path string) ([]float64, error) {
	var v []float64
	err := readFile(path, safefile.FileSize, dataFile, func(r io.Reader) (err error) {
		v, err = readVectorCSV(r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return v, nil
}

func readVectorCSV(r io.Reader) ([]float64, error) {
	lines, err := readLines(r)
	if err != nil {
		return nil, err
	}
	var v []float64
	for k, s := range lines {
		line := k + 1
		if s == "" {
			return nil, fmt.Errorf("line %d is blank", line)
		}
		if strings.ContainsAny(s, ",;\t") {
			return nil, fmt.Errorf("line %d: %q has several fields, want one value per line", line, s)
		}
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			if k == 0 {
				continue // header
			}
			return nil, fmt.Errorf("line %d: value %q is not a number", line, s)
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("line %d: value %q is not finite", line, s)
		}
		v = append(v, x)
	}
	if len(v) == 0 {
		return nil, errors.New("no values")
	}
	return v, nil
}

// WriteVectorCSV writes v to path, one value per line without a header,
// atomically, with the fewest digits that read back exactly.
func WriteVectorCSV(path string, v []float64) error {
	return atomicfile.Write(path, func(w io.Writer) error { return writeVectorCSV(w, v) })
}

func writeVectorCSV(w io.Writer, v []float64) error {
	bw := bufio.NewWriter(w)
	var b []byte
	for _, x := range v {
		b = strconv.AppendFloat(b[:0], x, 'g', -1, 64)
		b = append(b, '\n')
		bw.Write(b)
	}
	return bw.Flush()
}

// readLines returns the lines of r with surrounding white space (and any
// byte-order mark) trimmed and trailing blank lines dropped.
func readLines(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<16), safefile.LineLimit)
	var lines []string
	for sc.Scan() {
		s := sc.Text()
		if len(lines) == 0 {
			s = strings.TrimPrefix(s, "\ufeff")
		}
		lines = append(lines, strings.TrimSpace(s))
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("line %d is longer than %s", len(lines)+1, safefile.Size(safefile.LineLimit))
	} else if err != nil {
		return nil, err
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines, nil
}

// checkVector returns an error naming the first non-finite value of v, or
// reporting that v is empty.
func checkVector(v []float64) error {
	if len(v) == 0 {
		return errors.New("no values")
	}
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("value %d is %v", i, x)
		}
	}
	return nil
}
