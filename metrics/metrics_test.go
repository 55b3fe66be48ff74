package metrics

import (
	"math"
	"slices"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/record"
)

// tol is the tolerance of hand-computed metrics: they are ratios of small
// integers, so only the rounding of one division and one subtraction
// separates them from the exact value.
const tol = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= tol }

func TestPowerFDR(t *testing.T) {
	const T, F = true, false
	for _, c := range []struct {
		name            string
		truth, selected []bool
		power, fdr      float64
	}{
		{"half right", []bool{T, T, F, F}, []bool{T, F, T, F}, 0.5, 0.5},
		{"perfect", []bool{T, F, T}, []bool{T, F, T}, 1, 0},
		// Nothing selected: precision 1 (FDR 0), recall 0.
		{"nothing selected", []bool{T, F}, []bool{F, F}, 0, 0},
		// Nothing true: recall 1; everything selected is false.
		{"nothing true", []bool{F, F}, []bool{T, F}, 1, 1},
		{"nothing true or selected", []bool{F, F}, []bool{F, F}, 1, 0},
		{"empty", nil, nil, 1, 0},
		{"one of three", []bool{T, T, T, F}, []bool{T, F, F, T}, 1.0 / 3, 0.5},
	} {
		p, f := PowerFDR(c.truth, c.selected)
		if !near(p, c.power) || !near(f, c.fdr) {
			t.Errorf("%s: PowerFDR = (%v, %v), want (%v, %v)", c.name, p, f, c.power, c.fdr)
		}
	}
}

func TestPreprocessAndFeatureScores(t *testing.T) {
	got := Preprocess(nil, []float64{-0.3, 5e-11, -5e-11, 1e-10, math.NaN(), 0})
	// 1e-10 is not below NearZero, so it survives (the reference zeroes
	// entries < 1e-10).
	want := []float64{0.3, 0, 0, 1e-10, 0, 0}
	if !slices.Equal(got, want) {
		t.Errorf("Preprocess = %v, want %v", got, want)
	}
	fs := FeatureScores(nil, []float64{0.3, 0, 0.6, 0, 0, 0}, 2, 3)
	if !near(fs[0], 0.45) || fs[1] != 0 {
		t.Errorf("FeatureScores = %v, want [0.45 0] (mean of non-zero cells)", fs)
	}
}

func TestSelect(t *testing.T) {
	const T, F = true, false
	scores := []float64{0.5, 0.9, 0.5, 0, 0.5}
	for _, c := range []struct {
		name  string
		nTrue int
		mode  method.Mode
		want  []bool
	}{
		// Ties at 0.5 go to the lower index: 1 (0.9), then 0 and 2.
		{"top 3 with ties", 3, method.TopN, []bool{T, T, T, F, F}},
		{"top 2", 2, method.TopN, []bool{T, T, F, F, F}},
		// n = min(#true, #non-zero) = 4: a zero score is never selected.
		{"n capped by non-zeros", 10, method.TopN, []bool{T, T, T, F, T}},
		{"nothing true", 0, method.TopN, []bool{F, F, F, F, F}},
		{"all non-zero", 1, method.AllNonZero, []bool{T, T, T, F, T}},
	} {
		if got := Select(nil, scores, c.nTrue, c.mode); !slices.Equal(got, c.want) {
			t.Errorf("%s: Select = %v, want %v", c.name, got, c.want)
		}
	}
	if got := Select(nil, []float64{0, 0}, 2, method.TopN); slices.Contains(got, true) {
		t.Errorf("Select of all-zero scores = %v, want nothing", got)
	}
}

// handTruth is a 3-feature, 4-timestep truth: feature 0 relevant on [1, 2],
// feature 1 irrelevant, feature 2 relevant on [0, 1].
func handTruth() *record.Truth {
	return &record.Truth{
		Relevant:   []bool{true, false, true},
		Windows:    []tempora.Window{{Start: 1, End: 2}, {Start: 0, End: 3}, {Start: 0, End: 1}},
		EffectSize: []float64{1, 0, 1},
	}
}

func TestDetectionMetrics(t *testing.T) {
	// True cells (flat index j·4+t): 1, 2, 8, 9. True features: 0, 2.
	cells := []float64{
		0, 0.8, -0.8, 0, // feature 0: |−0.8| counts as 0.8
		0.9, 0.2, 0, 0, // feature 1 (irrelevant)
		0.2, 0.2, 5e-11, 0, // feature 2: 5e-11 is zeroed
	}
	// Features: scores 0.8, (0.9+0.2)/2 = 0.55, 0.2 (mean of non-zero
	// cells). Top n = min(2, 3) = 2 selects features 0 and 1: power 1/2,
	// FDR 1/2. All non-zero selects all three: power 1, FDR 1/3.
	// Cells: 6 non-zero, n = min(4, 6) = 4: 0.9 (4), 0.8 (1), 0.8 (2), then
	// the tie at 0.2 goes to the lowest index, 5 (false), not 8 or 9: power
	// 2/4, FDR 2/4. All non-zero: 6 cells, 4 true: power 1, FDR 2/6.
	want := map[string]float64{
		"feature-power": 0.5, "feature-fdr": 0.5, "timestep-power": 0.5, "timestep-fdr": 0.5,
		"feature-power-all": 1, "feature-fdr-all": 1.0 / 3, "timestep-power-all": 1, "timestep-fdr-all": 1.0 / 3,
	}
	ms, err := DetectionMetrics(handTruth(), cells, 3, 4, method.TopN)
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, "TopN", ms, want)
	order := []string{"feature-power", "feature-fdr", "timestep-power", "timestep-fdr",
		"feature-power-all", "feature-fdr-all", "timestep-power-all", "timestep-fdr-all"}
	for i, m := range ms {
		if m.Name != order[i] {
			t.Errorf("metric %d is %s, want %s", i, m.Name, order[i])
		}
	}

	// In AllNonZero mode the first four equal the "-all" ones.
	ms, err = DetectionMetrics(handTruth(), cells, 3, 4, method.AllNonZero)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range order[:4] {
		want[k] = want[k+"-all"]
	}
	checkMetrics(t, "AllNonZero", ms, want)

	// An all-zero explanation selects nothing: power 0, FDR 0.
	ms, err = DetectionMetrics(handTruth(), make([]float64, 12), 3, 4, method.TopN)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Value != 0 {
			t.Errorf("all-zero scores: %s = %v, want 0", m.Name, m.Value)
		}
	}
}

func TestDetectionMetricsErrors(t *testing.T) {
	if _, err := DetectionMetrics(handTruth(), make([]float64, 11), 3, 4, method.TopN); err == nil {
		t.Error("11 cells for 3×4: no error")
	}
	if _, err := DetectionMetrics(handTruth(), make([]float64, 8), 2, 4, method.TopN); err == nil {
		t.Error("truth of 3 features for a 2-feature explanation: no error")
	}
	tr := handTruth()
	tr.Windows[0] = tempora.Window{Start: 2, End: 4}
	if _, err := DetectionMetrics(tr, make([]float64, 12), 3, 4, method.TopN); err == nil {
		t.Error("true window [2, 4] with 4 timesteps: no error")
	}
}

func checkMetrics(t *testing.T, name string, ms []record.Metric, want map[string]float64) {
	t.Helper()
	got := map[string]float64{}
	for _, m := range ms {
		got[m.Name] = m.Value
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: no metric %s", name, k)
			continue
		}
		if !near(g, w) {
			t.Errorf("%s: %s = %v, want %v", name, k, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d metrics, want %d", name, len(got), len(want))
	}
}

func TestTIMEMetrics(t *testing.T) {
	tr := &record.Truth{
		Relevant:                []bool{true, true, false, true},
		Windows:                 []tempora.Window{{Start: 1, End: 3}, {Start: 0, End: 4}, {Start: 0, End: 4}, {Start: 2, End: 3}},
		EffectSize:              []float64{1, 1, 0, 1},
		OrderingImportant:       []bool{true, false, false, true},
		WindowOrderingImportant: []bool{true, false, false, false},
	}
	feat := func(j int, important bool, w *tempora.Window, ord, word bool) tempora.FeatureResult {
		f := tempora.NewFeatureResult(j, "")
		f.Tested, f.Important, f.Window, f.OrderingImportant, f.WindowOrderingImportant = true, important, w, ord, word
		return f
	}
	fs := []tempora.FeatureResult{
		feat(0, true, &tempora.Window{Start: 2, End: 4}, true, false),
		feat(1, true, &tempora.Window{Start: 0, End: 4}, true, false),
		feat(2, true, &tempora.Window{Start: 0, End: 1}, false, true),
		// Not identified: its ordering flag must be ignored.
		feat(3, false, nil, true, true),
	}
	// Ordering over all 4: truth {0, 3}, selected {0, 1}: power 1/2, FDR 1/2.
	// Window ordering over identified {0, 1, 2}: truth {0}, selected {2}:
	// power 0, FDR 1.
	// Average window over relevant and identified {0, 1}: feature 0 finds
	// {2, 3, 4} of {1, 2, 3} (recall 2/3, precision 2/3), feature 1 is exact:
	// power 5/6, FDR 1/6.
	ms, err := TIMEMetrics(tr, fs, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, "TIME", ms, map[string]float64{
		"ordering-power": 0.5, "ordering-fdr": 0.5,
		"window-ordering-power": 0, "window-ordering-fdr": 1,
		"avg-window-power": 5.0 / 6, "avg-window-fdr": 1.0 / 6,
	})

	// Nothing identified: ordering power 0, FDR 0; the window-ordering
	// population is empty (power 1, FDR 0); Average_Window's population is
	// empty (power 0, FDR 0, as in the reference).
	for j := range fs {
		fs[j].Important = false
	}
	ms, err = TIMEMetrics(tr, fs, 5)
	if err != nil {
		t.Fatal(err)
	}
	checkMetrics(t, "nothing identified", ms, map[string]float64{
		"ordering-power": 0, "ordering-fdr": 0,
		"window-ordering-power": 1, "window-ordering-fdr": 0,
		"avg-window-power": 0, "avg-window-fdr": 0,
	})

	// An identified relevant feature without a window selects no timestep:
	// recall 0, precision 1.
	fs[0].Important, fs[0].Window = true, nil
	ms, err = TIMEMetrics(tr, fs, 5)
	if err != nil {
		t.Fatal(err)
	}
	// Its ordering flag is set: ordering power 1/2, FDR 0.
	checkMetrics(t, "no window", ms, map[string]float64{
		"ordering-power": 0.5, "ordering-fdr": 0,
		"window-ordering-power": 0, "window-ordering-fdr": 0,
		"avg-window-power": 0, "avg-window-fdr": 0,
	})
}
