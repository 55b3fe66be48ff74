package cli

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/dataio"
)

// irregularFixtures writes, into the current directory, a small data set
// with missing values: 6 instances × 2 features × 5 timesteps, instances
// 4 and 5 of length 3 (start-aligned), feature "bp" missing at instance 0,
// timestep 1; as x.npy, as a long CSV x.csv that leaves the missing cells
// out, and its targets y.npy; plus a mask of the wrong shape and one that
// leaves instance 2 nothing observed.
func irregularFixtures(t *testing.T) {
	t.Helper()
	x := tempora.NewTensor(6, 2, 5)
	for k := range x.Data {
		x.Data[k] = float64(k%7) - 2.5
	}
	for i := 4; i < 6; i++ {
		for j := range 2 {
			s := x.Series(i, j)
			s[3], s[4] = math.NaN(), math.NaN()
		}
	}
	x.Series(0, 1)[1] = math.NaN()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(dataio.WriteTensorNPY("x.npy", x))
	must(dataio.WriteVectorNPY("y.npy", []float64{0, 1, 0, 1, 0, 1}))
	must(os.WriteFile("names.txt", []byte("hr\nbp\n"), 0o644))
	var csv strings.Builder
	csv.WriteString("instance,feature,timestep,value\n")
	names := []string{"hr", "bp"}
	for i := range 6 {
		for j := range 2 {
			for t, v := range x.Series(i, j) {
				if !math.IsNaN(v) {
					csv.WriteString(strings.Join([]string{strconv.Itoa(i), names[j], strconv.Itoa(t), strconv.FormatFloat(v, 'g', -1, 64)}, ",") + "\n")
				}
			}
		}
	}
	must(os.WriteFile("x.csv", []byte(csv.String()), 0o644))
	must(dataio.WriteTensorNPY("mask-shape.npy", tempora.NewTensor(6, 2, 4)))
	m := tempora.NewTensor(6, 2, 5)
	for k := range m.Data {
		if k/10 != 2 {
			m.Data[k] = 1
		}
	}
	must(dataio.WriteTensorNPY("mask-empty.npy", m))
	inf := x.Clone()
	inf.Series(3, 0)[2] = math.Inf(1)
	must(dataio.WriteTensorNPY("inf.npy", inf))
}

// TestDescribeData: describe -data summarises data with missing values
// (lengths, missing rate per feature) the same way from .npy and long
// .csv, and complete data in one line.
func TestDescribeData(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	irregularFixtures(t)
	npy := mustRun(t, "describe", "-data", "x.npy", "-feature-names", "names.txt")
	csv := mustRun(t, "describe", "-data", "x.csv")
	if strings.Replace(npy, "x.npy", "x.csv", 1) != csv {
		t.Errorf("npy and csv summaries differ:\n%s\n%s", npy, csv)
	}
	end := mustRun(t, "describe", "-data", "x.npy", "-alignment", "end")
	// End-aligned, the short instances' trailing NaNs are missing values
	// inside full-length sequences.
	if !strings.Contains(end, "missing values (alignment end): 0 of 6 instances shorter than 5 timesteps; lengths min 5, median 5, max 5") ||
		!strings.Contains(end, "0        13.3%") || !strings.Contains(end, "1        16.7%") {
		t.Errorf("end-aligned summary:\n%s", end)
	}
	if err := dataio.WriteTensorNPY("full.npy", tempora.NewTensor(2, 1, 3)); err != nil {
		t.Fatal(err)
	}
	if out, want := mustRun(t, "describe", "-data", "full.npy"), "data full.npy: 2 instances × 1 features × 3 timesteps\ncomplete: no missing values\n"; out != want {
		t.Errorf("complete data: %q, want %q", out, want)
	}
	t.Chdir(wd)
	golden(t, "describe-data.stdout", npy)
}

func TestDataInputErrors(t *testing.T) {
	t.Chdir(t.TempDir())
	irregularFixtures(t)
	explain := []string{"explain", "-data", "x.npy", "-targets", "y.npy", "-task", "classification", "-model-cmd", "false"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(explain, "-mask", "mask-shape.npy"), "tempora: explain: mask-shape.npy: the mask has shape [6 2 4] but the data has shape [6 2 5] (instances, features, timesteps)"},
		{append(explain, "-mask", "mask-empty.npy"), "tempora: explain: x.npy (mask mask-empty.npy), y.npy: instance 2 has no observed value (every value is NaN)"},
		{append(explain, "-mask", "x.npy"), "tempora: explain: x.npy: mask value at instance 0, feature 0, timestep 0 is -2.5 (want true/false or 1/0: 1 for observed)"},
		{append(explain, "-alignment", "middle"), `tempora: explain: -alignment "middle": want start or end`},
		{[]string{"explain", "-data", "inf.npy", "-targets", "y.npy", "-task", "classification", "-model-cmd", "false"}, "tempora: explain: inf.npy: value at instance 3, feature 0, timestep 2 is +Inf (a missing value is NaN; infinities are errors)"},
		{[]string{"explain", "-problem", "p", "-alignment", "end"}, "tempora: explain: -alignment cannot be combined with -problem"},
		{[]string{"describe", "-data", "x.npy", "-mask", "y.npy"}, "tempora: describe: y.npy: the mask has shape [6] but the data has shape [6 2 5]"},
		{[]string{"describe", "-mask", "y.npy", "p"}, "tempora: describe: -mask needs -data FILE"},
		{[]string{"describe", "-data", "x.npy", "p"}, `tempora: describe: -data describes a data file; unexpected argument "p"`},
		{[]string{"describe", "-data", "x.csv", "-feature-names", "names3.txt"}, "tempora: describe: open names3.txt"},
	} {
		_, _, err := runCmd(t, tc.args...)
		if err == nil {
			t.Errorf("tempora %s: no error", strings.Join(tc.args, " "))
			continue
		}
		if got, _ := errorLine(err); !strings.HasPrefix(got, tc.want) {
			t.Errorf("tempora %s:\n got %s\nwant %s…", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// TestExplainMissing explains data with missing values end to end: the
// report opens with the data's summary and the JSON records the
// alignment and the summary.
func TestExplainMissing(t *testing.T) {
	t.Chdir(t.TempDir())
	irregularFixtures(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(badModelEnv, "0.5") // a model that predicts 0.5 whatever it is given
	out := mustRun(t, "explain", "-data", "x.csv", "-targets", "y.npy", "-task", "classification", "-model-cmd", exe,
		"-alignment", "end", "-json", "e.json", "-quiet", "-permutations", "20")
	if !strings.HasPrefix(out, "missing values (alignment end): 0 of 6 instances shorter") {
		t.Errorf("report:\n%s", out)
	}
	b, err := os.ReadFile("e.json")
	if err != nil {
		t.Fatal(err)
	}
	var e tempora.Explanation
	if err := json.Unmarshal(b, &e); err != nil || e.Alignment != tempora.AlignEnd {
		t.Errorf("explanation alignment %v, %v", e.Alignment, err)
	}
	// End-aligned, every sequence has 5 timesteps (instances 4 and 5 miss
	// their last two in both features, bp of instance 0 its second): 30
	// cells per feature, 4 of hr's and 5 of bp's missing.
	want := &tempora.DataSummary{Lengths: []int{5, 5, 5, 5, 5, 5}, MissingRate: []float64{4.0 / 30, 5.0 / 30}, Observed: []float64{
		1, 1, 1, 4.0 / 6, 4.0 / 6,
		1, 5.0 / 6, 1, 4.0 / 6, 4.0 / 6,
	}}
	if !reflect.DeepEqual(e.Data, want) {
		t.Errorf("explanation data summary %+v, want %+v", e.Data, want)
	}
}

// TestExplainAlignmentRecorded: -alignment reaches the explanation (its
// JSON), here on complete data, with TIME and with PERM and PERM-f, whose
// explanations are built without the data; the report of complete data
// has no summary of missing values, nor has its JSON.
func TestExplainAlignmentRecorded(t *testing.T) {
	t.Chdir(t.TempDir())
	x := tempora.NewTensor(30, 2, 3)
	for k := range x.Data {
		x.Data[k] = float64(k%5) - 2
	}
	y := make([]float64, 30)
	for i := range y {
		y[i] = float64(i % 2)
	}
	if err := dataio.WriteTensorNPY("x.npy", x); err != nil {
		t.Fatal(err)
	}
	if err := dataio.WriteVectorNPY("y.npy", y); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(badModelEnv, "0.5") // a model that predicts 0.5 whatever it is given
	for _, tc := range []struct {
		method string
		align  tempora.Alignment
	}{{"TIME", tempora.AlignStart}, {"TIME", tempora.AlignEnd}, {"PERM", tempora.AlignEnd}, {"PERM-f", tempora.AlignEnd}} {
		align := tc.align
		out := mustRun(t, "explain", "-data", "x.npy", "-targets", "y.npy", "-task", "classification", "-model-cmd", exe,
			"-method", tc.method, "-alignment", align.String(), "-json", "e.json", "-quiet", "-permutations", "10")
		if strings.Contains(out, "missing values") {
			t.Errorf("complete data's report speaks of missing values:\n%s", out)
		}
		b, err := os.ReadFile("e.json")
		if err != nil {
			t.Fatal(err)
		}
		var e tempora.Explanation
		if err := json.Unmarshal(b, &e); err != nil || e.Alignment != align {
			t.Errorf("%s, -alignment %v: explanation alignment %v, %v", tc.method, align, e.Alignment, err)
		}
		if got := strings.Contains(string(b), `"alignment"`); got != (align == tempora.AlignEnd) {
			t.Errorf("%s, -alignment %v: alignment member written: %v", tc.method, align, got)
		}
		if e.Data != nil || strings.Contains(string(b), `"lengths"`) || strings.Contains(string(b), `"observed"`) {
			t.Errorf("%s, -alignment %v: complete data's explanation has a data summary: %+v", tc.method, align, e.Data)
		}
	}
}
