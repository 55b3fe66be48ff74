// Package record defines the results records, tempora's public data: one
// record per (suite, setting, model, method), saved as a JSON file below a
// run directory's records/, and rendered as one line of the Go benchmark
// format so that benchstat can compare runs and commits. Package experiments
// writes them (runs, merges, outside tools' scores), package results reads
// them; docs/records.md specifies the files, their format field (Format)
// and how versions change, so that any program can read and write them.
//
// A record names its method by its canonical name and its problem by suite,
// setting (Params), model index and problem seed; records of one method are
// aggregated over models, and records of different methods on the same
// problems are compared.
//
// A benchmark line looks like
//
//	BenchmarkTable1/features=10/model=17/method=TIME  1  0.95 feature-power  0.04 feature-fdr  0.61 sec/op
//
// (see golang.org/design/14313-benchmark-format). Metric names become units,
// so they must not contain spaces.
package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/atomicfile"
	"github.com/tempora-dev/tempora/internal/errmsg"
	"github.com/tempora-dev/tempora/internal/safefile"
)

// Format is the value of the "format" field of every record tempora writes:
// the record kind and its version. Within a version fields are only added;
// Read accepts this version and FormatV1 and rejects any other value.
// Version 2 added the checksum.
const Format = "tempora-record/2"

// Param is one key=value part of an experimental setting, e.g.
// {"instances", "400"}. Params keep the order in which the suite lists them.
type Param struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Metric is one named measurement, e.g. {"feature-power", 0.9}.
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
}

// Truth is the ground truth a record was scored against, kept so that
// reports (heat maps) can be drawn from saved records alone.
type Truth struct {
	Relevant                []bool           `json:"relevant"`
	Windows                 []tempora.Window `json:"windows"`
	EffectSize              []float64        `json:"effect_size"`
	OrderingImportant       []bool           `json:"ordering_important"`
	WindowOrderingImportant []bool           `json:"window_ordering_important"`
	// WindowLists, when set (the windows world, suite windows), lists
	// each feature's true windows in time order; Windows then holds their
	// hull, and a timestep is true when it lies in one of the listed
	// windows (InWindow). Omitted when nil, so that records of the other
	// suites and of older versions read and hash as before.
	WindowLists [][]tempora.Window `json:"window_lists,omitempty"`
	// Outputs, when set (problems whose model has several outputs,
	// suite outputs), holds each output's truth; the fields above are
	// then the whole model's. Omitted when nil, so that records of
	// models with one output read and hash as before.
	Outputs []OutputTruth `json:"outputs,omitempty"`
}

// OutputTruth is the truth of one output of a model with several
// outputs: which features its loss depends on and over which window, in
// absolute timesteps and in lag coordinates from the output's anchor.
type OutputTruth struct {
	// Relevant and Windows have one entry per feature; the window of a
	// feature that is not relevant is meaningless.
	Relevant []bool           `json:"relevant"`
	Windows  []tempora.Window `json:"windows"`
	// Lags holds each window in lag coordinates (tempora.Outputs.Lag),
	// nil for outputs without an anchor (classes). A lag is negative
	// after the anchor, so lags are written as [start, end] pairs of any
	// sign.
	Lags []tempora.Window `json:"-"`
}

// jsonOutputTruth is the JSON form of an OutputTruth.
type jsonOutputTruth struct {
	Relevant []bool           `json:"relevant"`
	Windows  []tempora.Window `json:"windows"`
	Lags     [][2]int         `json:"lags,omitempty"`
}

// MarshalJSON implements json.Marshaler.
func (o OutputTruth) MarshalJSON() ([]byte, error) {
	j := jsonOutputTruth{Relevant: o.Relevant, Windows: o.Windows}
	for _, w := range o.Lags {
		j.Lags = append(j.Lags, [2]int{w.Start, w.End})
	}
	return json.Marshal(j)
}

// UnmarshalJSON implements json.Unmarshaler; it rejects a lag window
// whose end precedes its start.
func (o *OutputTruth) UnmarshalJSON(b []byte) error {
	var j jsonOutputTruth
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*o = OutputTruth{Relevant: j.Relevant, Windows: j.Windows}
	for _, w := range j.Lags {
		if w[1] < w[0] {
			return fmt.Errorf("record: lag window %v ends before it starts", w)
		}
		o.Lags = append(o.Lags, tempora.Window{Start: w[0], End: w[1]})
	}
	return nil
}

// InWindow reports whether timestep t lies in a true window of feature j:
// in one of WindowLists[j] when the truth has window lists, else in
// Windows[j]. It does not look at Relevant.
func (t *Truth) InWindow(j, s int) bool {
	if t.WindowLists != nil {
		for _, w := range t.WindowLists[j] {
			if w.Contains(s) {
				return true
			}
		}
		return false
	}
	return t.Windows[j].Contains(s)
}

// Record is the outcome of one method on one problem.
type Record struct {
	Format string  `json:"format"`
	Suite  string  `json:"suite"`
	Params []Param `json:"params"`
	// Model is the index of the problem within its setting; Seed is the seed
	// the problem was generated with.
	Model int    `json:"model"`
	Seed  uint64 `json:"seed"`
	// Alignment is the problem's alignment (tempora.Alignment): which end
	// of the time axis its sequences of different lengths share, and so
	// what the timesteps of windows mean. Written only for end-aligned
	// data ("end"); absent means start, as in every record written before
	// it existed. A record's explanation, when kept, has the same.
	Alignment tempora.Alignment `json:"alignment,omitempty"`
	// Method names the explainer (or its evaluation variant, e.g. TIME-n).
	Method string `json:"method"`
	// Metrics are in a fixed order chosen by the writer.
	Metrics []Metric `json:"metrics"`
	// Cost of the explanation.
	RuntimeSeconds float64  `json:"runtime_seconds"`
	ModelCalls     int64    `json:"model_calls"`
	InstanceEvals  int64    `json:"instance_evals"`
	Incomplete     bool     `json:"incomplete"`
	Warnings       []string `json:"warnings"`
	// Explanation and Truth are optional (kept for heat maps and
	// re-scoring).
	Explanation *tempora.Explanation `json:"explanation,omitempty"`
	Truth       *Truth               `json:"truth,omitempty"`
	// Checksum makes the record tamper-evident: "sha256:" and the digest
	// of the record's canonical JSON without this field (see Checksum).
	// Write sets it, Read verifies it; records of FormatV1 have none.
	Checksum string `json:"checksum,omitempty"`
}

// Get returns the value of the named metric.
func (r *Record) Get(name string) (float64, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m.Value, true
		}
	}
	return 0, false
}

// Param returns the value of the named parameter.
func (r *Record) Param(key string) (string, bool) {
	for _, p := range r.Params {
		if p.Key == key {
			return p.Value, true
		}
	}
	return "", false
}

// Validate checks that a record is complete and encodable: its suite,
// method and parameters are names (see CheckName) that make one line of the
// benchmark format and a path inside a records directory, and its metrics
// are named (no white space or control characters) and finite.
func (r *Record) Validate() error {
	if r.Format != Format && r.Format != FormatV1 {
		return fmt.Errorf("record: format %q, want %q (or the older %q)", r.Format, Format, FormatV1)
	}
	if r.Suite == "" || r.Method == "" {
		return fmt.Errorf("record: suite and method must be set")
	}
	if r.Suite == "." || r.Suite == ".." {
		return fmt.Errorf("record: suite %q names a directory, not a suite", r.Suite)
	}
	for _, s := range append([]string{r.Suite, r.Method}, paramStrings(r.Params)...) {
		if err := CheckName(s); err != nil {
			return fmt.Errorf("record: %w", err)
		}
	}
	for _, e := range strings.Split(r.Key(), "/") {
		if len(e) > MaxKeyElement {
			return fmt.Errorf("record: key element %.40q… is %d bytes, longer than %d (a file or directory name)", e, len(e), MaxKeyElement)
		}
	}
	if r.Alignment != tempora.AlignStart && r.Alignment != tempora.AlignEnd {
		return fmt.Errorf("record: invalid alignment %d", int(r.Alignment))
	}
	if r.Explanation != nil && r.Explanation.Alignment != r.Alignment {
		return fmt.Errorf("record: alignment %v, but its explanation's is %v", r.Alignment, r.Explanation.Alignment)
	}
	for _, m := range r.Metrics {
		if m.Name == "" || strings.IndexFunc(m.Name, badUnitRune) >= 0 {
			return fmt.Errorf("record: bad metric name %q", m.Name)
		}
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			return fmt.Errorf("record: metric %s is %v", m.Name, m.Value)
		}
	}
	return nil
}

// MaxKeyElement is the longest element of a record's key in bytes (the
// suite, "key=value" of a parameter, "model=N", "method=NAME"). Each
// element is a file or directory name, which file systems limit to 255
// bytes; the record file adds ".json" and an interrupted write's
// temporary name about 20 bytes more.
const MaxKeyElement = 200

// CheckName returns an error (without a package prefix) if s cannot be
// part of a record's key: a suite, a method, or a parameter's key or value.
// Such a name is not empty for a suite or method (Validate checks that) and
// holds no white space, no control character, and none of '/', '=' and
// '\', which separate the parts of a key, a benchmark name and a path.
func CheckName(s string) error {
	if i := strings.IndexFunc(s, badNameRune); i >= 0 {
		c, _ := utf8.DecodeRuneInString(s[i:])
		what := "a space"
		switch {
		case unicode.IsControl(c):
			what = "a control character"
		case c == '/' || c == '=' || c == '\\':
			what = fmt.Sprintf("%q", c)
		case c != ' ':
			what = "white space"
		}
		return fmt.Errorf("%q contains %s (a name must not contain white space, control characters, '/', '=' or '\\')", s, what)
	}
	return nil
}

// badUnitRune reports whether c may not appear in a metric name, which is a
// unit of the benchmark format.
func badUnitRune(c rune) bool {
	return unicode.IsSpace(c) || unicode.IsControl(c) || c == utf8.RuneError
}

// badNameRune reports whether c may not appear in a part of a record key.
func badNameRune(c rune) bool {
	return badUnitRune(c) || c == '/' || c == '=' || c == '\\'
}

func paramStrings(ps []Param) []string {
	var s []string
	for _, p := range ps {
		s = append(s, p.Key, p.Value)
	}
	return s
}

// Key returns the record's identity, "suite/k=v/.../model=N/method=M",
// which is also its file path (plus ".json") below a records directory.
func (r *Record) Key() string {
	var b strings.Builder
	b.WriteString(r.Suite)
	for _, p := range r.Params {
		fmt.Fprintf(&b, "/%s=%s", p.Key, p.Value)
	}
	fmt.Fprintf(&b, "/model=%d/method=%s", r.Model, r.Method)
	return b.String()
}

// BenchName returns the benchmark name of the record: "Benchmark" plus the
// suite in CamelCase, then the params, the model and the method as
// key=value parts.
func (r *Record) BenchName() string {
	var b strings.Builder
	b.WriteString("Benchmark")
	up := true
	for _, c := range r.Suite {
		if !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			up = true
			continue
		}
		if up {
			c = unicode.ToUpper(c)
			up = false
		}
		b.WriteRune(c)
	}
	for _, p := range r.Params {
		fmt.Fprintf(&b, "/%s=%s", p.Key, p.Value)
	}
	fmt.Fprintf(&b, "/model=%d/method=%s", r.Model, r.Method)
	return b.String()
}

// BenchLine returns the record as one line of the Go benchmark format
// (without a trailing newline): the metrics, then sec/op, model-calls/op and
// instance-evals/op.
func (r *Record) BenchLine() string {
	var b strings.Builder
	b.WriteString(r.BenchName())
	b.WriteString(" 1")
	num := func(v float64, unit string) {
		b.WriteString(" ")
		b.WriteString(strconv.FormatFloat(v, 'g', 6, 64))
		b.WriteString(" ")
		b.WriteString(unit)
	}
	for _, m := range r.Metrics {
		num(m.Value, m.Name)
	}
	num(r.RuntimeSeconds, "sec/op")
	num(float64(r.ModelCalls), "model-calls/op")
	num(float64(r.InstanceEvals), "instance-evals/op")
	return b.String()
}

// Path returns the file of the record below dir.
func (r *Record) Path(dir string) string {
	return filepath.Join(dir, filepath.FromSlash(r.Key())+".json")
}

// Exists reports whether the record's file exists below dir.
func (r *Record) Exists(dir string) bool {
	_, err := os.Stat(r.Path(dir))
	return err == nil
}

// Write saves the record below dir atomically (a temporary file renamed into
// place), creating directories as needed. It writes the current Format
// (upgrading a FormatV1 record) and sets r.Checksum. A record left at the
// default alignment (start) that keeps an end-aligned explanation takes the
// explanation's alignment.
func Write(dir string, r *Record) error {
	if r.Alignment == tempora.AlignStart && r.Explanation != nil {
		r.Alignment = r.Explanation.Alignment
	}
	if err := r.Validate(); err != nil {
		return err
	}
	r.Format = Format
	b, err := seal(r)
	if err != nil {
		return fmt.Errorf("record: encoding %s: %w", r.Key(), err)
	}
	p := r.Path(dir)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteBytes(p, b)
}

// Read loads one record file, validates it and verifies its checksum
// (records of FormatV1 have none). The file must be a regular file (a
// symbolic link to one is followed) of at most safefile.RecordLimit bytes;
// opening it never blocks. Every error starts with "record: " once, then
// names the file.
func Read(path string) (*Record, error) {
	b, err := readBytes(path)
	if err != nil {
		return nil, err
	}
	r, err := decode(path, b)
	if err != nil {
		return nil, err
	}
	if err := verify(r, b); err != nil {
		return nil, fmt.Errorf("record: %s: %w", path, err)
	}
	return r, nil
}

// readBytes reads a record file within safefile's rules.
func readBytes(path string) ([]byte, error) {
	b, err := safefile.ReadFile(path, safefile.RecordLimit, "a record")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && (errors.Is(err, safefile.ErrNotRegular) || errors.Is(err, safefile.ErrTooLarge)) {
			return nil, fmt.Errorf("record: %s: %w", path, pe.Err)
		}
		return nil, fmt.Errorf("record: %w", err)
	}
	return b, nil
}

// decode decodes and validates the record file content b read from path.
func decode(path string, b []byte) (*Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		// The explanation's decoder names its package (tempora:).
		return nil, errmsg.Wrap(err, "record: %s", path)
	}
	if err := r.Validate(); err != nil {
		return nil, errmsg.Wrap(err, "record: %s", path)
	}
	return &r, nil
}

// ReadAll loads every record file (*.json) below dir, sorted by Key.
// Temporary files of interrupted writes (".*.tmp*") are ignored.
func ReadAll(dir string) ([]*Record, error) {
	var recs []*Record
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !IsRecordFile(d) {
			return nil
		}
		r, err := Read(p)
		if err != nil {
			return err
		}
		recs = append(recs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	Sort(recs)
	return recs, nil
}

// IsRecordFile reports whether a directory entry below a records directory
// stands for a record: a name ending in ".json" that does not start with
// "." (temporary files of interrupted writes). A directory is one only if
// it is named like a record file, "method=M.json", where a record should
// be: Read then reports what it is, so that it is not mistaken for a
// record nor entered.
func IsRecordFile(d fs.DirEntry) bool {
	name := d.Name()
	if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".json") {
		return false
	}
	return !d.IsDir() || strings.HasPrefix(name, "method=")
}

// Sort orders records by Key.
func Sort(recs []*Record) {
	slices.SortStableFunc(recs, func(a, b *Record) int { return strings.Compare(a.Key(), b.Key()) })
}

// WriteBench writes header lines ("key: value") and then one benchmark line
// per record, in the order given.
func WriteBench(w io.Writer, header []Param, recs []*Record) error {
	for _, h := range header {
		if _, err := fmt.Fprintf(w, "%s: %s\n", h.Key, h.Value); err != nil {
			return err
		}
	}
	for _, r := range recs {
		if _, err := fmt.Fprintln(w, r.BenchLine()); err != nil {
			return err
		}
	}
	return nil
}
