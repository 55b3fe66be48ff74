package synth

import (
	"bytes"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

// irregularConfigs returns the irregular worlds the tests sweep: every
// alignment, spreads 1 and 2, rates 0, 0.2 and 0.5, both mechanisms.
func irregularConfigs(base Config) []Config {
	var out []Config
	for _, a := range []tempora.Alignment{tempora.AlignStart, tempora.AlignEnd} {
		for _, s := range []float64{1, 2} {
			for _, r := range []float64{0, 0.2, 0.5} {
				for _, mech := range []Mechanism{MCAR, MNAR} {
					c := base
					c.Irregular = &Irregular{LengthSpread: s, Alignment: a, MissingRate: r, Mechanism: mech}
					out = append(out, c)
				}
			}
		}
	}
	return out
}

func irregularName(c Config) string {
	ir := c.Irregular
	return ir.Alignment.String() + "/spread=" + trimFloat(ir.spread()) + "/rate=" + trimFloat(ir.MissingRate) + "/" + ir.Mechanism.String()
}

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// TestIrregularObserve checks that Dataset.Observe accepts every generated
// irregular dataset, that the supports it derives are the drawn lengths'
// (in [⌈L/spread⌉, L], at the aligned end), that every window lies inside
// every support, and that lengths vary only with a spread above 1.
func TestIrregularObserve(t *testing.T) {
	base := Config{Instances: 200, Features: 6, Timesteps: 20, Task: tempora.Regression}
	for _, cfg := range irregularConfigs(base) {
		t.Run(irregularName(cfg), func(t *testing.T) {
			p, err := Generate(cfg, 7)
			if err != nil {
				t.Fatal(err)
			}
			if p.Data.Alignment != cfg.Irregular.Alignment {
				t.Fatalf("alignment %v, want %v", p.Data.Alignment, cfg.Irregular.Alignment)
			}
			o, err := p.Data.Observe(2)
			if err != nil {
				t.Fatal(err)
			}
			lo := cfg.Irregular.MinLength(20)
			distinct := map[int]bool{}
			for i, s := range o.Support {
				n := s.Len()
				distinct[n] = true
				if n < lo || n > 20 {
					t.Fatalf("instance %d has length %d outside [%d, 20]", i, n, lo)
				}
				if cfg.Irregular.Alignment == tempora.AlignStart && s.Start != 0 || cfg.Irregular.Alignment == tempora.AlignEnd && s.End != 19 {
					t.Fatalf("instance %d's support %v is not at the aligned end", i, s)
				}
				for _, f := range p.Truth {
					if f.Window.Start < s.Start || f.Window.End > s.End {
						t.Fatalf("feature %d's window %v leaves instance %d's support %v", f.Index, f.Window, i, s)
					}
				}
			}
			if spread := cfg.Irregular.spread(); spread == 1 && len(distinct) != 1 || spread > 1 && len(distinct) < 5 {
				t.Errorf("spread %v gave %d distinct lengths", spread, len(distinct))
			}
			if cfg.Irregular.MissingRate == 0 && cfg.Irregular.spread() == 1 && !o.Complete() {
				t.Error("rate 0 and spread 1 gave incomplete data")
			}
		})
	}
}

// TestIrregularMissingRate checks that the observed missing rate matches
// the configured one, under both mechanisms, and that under MNAR the
// missing cells' values are higher than the observed ones while under
// MCAR (the null) they are not.
func TestIrregularMissingRate(t *testing.T) {
	for _, mech := range []Mechanism{MCAR, MNAR} {
		for _, r := range []float64{0.2, 0.5} {
			ir := &Irregular{LengthSpread: 2, MissingRate: r, Mechanism: mech}
			cfg := Config{Instances: 1000, Features: 10, Timesteps: 20, Task: tempora.Regression, Irregular: ir}
			p, err := Generate(cfg, 11)
			if err != nil {
				t.Fatal(err)
			}
			o, err := p.Data.Observe(2)
			if err != nil {
				t.Fatal(err)
			}
			missing := 0
			for _, n := range o.Missing {
				missing += n
			}
			n := o.Cells * o.D
			got := float64(missing) / float64(n)
			// Each cell is missing independently with a probability whose
			// mean over the cells is r (MNAR's intercept is solved for
			// it), so the rate's SD is at most sqrt(r(1−r)/n) ≈ 0.0013 for
			// the ~150,000 cells; 5 SDs (a false alarm below 1e−6) plus
			// the boundary corrections (at most M·r^D cells, < 1e−4 here).
			tol := 5*math.Sqrt(r*(1-r)/float64(n)) + float64(cfg.Instances)*math.Pow(r, 10)/float64(n)
			if math.Abs(got-r) > tol {
				t.Errorf("%v rate %v: observed missing rate %.5f, tolerance %.5f", mech, r, got, tol)
			}
			// The complete values at the same cells: rate 0 draws the same
			// lengths and values.
			c0 := cfg
			c0.Irregular = &Irregular{LengthSpread: 2, Mechanism: mech}
			q, err := Generate(c0, 11)
			if err != nil {
				t.Fatal(err)
			}
			// Standardised-value gap between missing and observed cells,
			// pooled over features: under MNAR with slope 2 it is well
			// above 0.5 SD; under MCAR its SD is about
			// sqrt(1/n_miss + 1/n_obs) ≈ 0.006, so 0.05 is 8 SDs.
			gap := 0.0
			for j := range 10 {
				var all, miss, obs []float64
				for i := range 1000 {
					for tt, v := range q.Data.X.Series(i, j) {
						if v != v {
							continue
						}
						all = append(all, v)
						if u := p.Data.X.At(i, j, tt); u != u {
							miss = append(miss, v)
						} else {
							obs = append(obs, v)
						}
					}
				}
				_, sd := meanSD(all)
				if sd < minSD {
					continue
				}
				mm, _ := meanSD(miss)
				mo, _ := meanSD(obs)
				gap += (mm - mo) / sd / 10
			}
			switch {
			case mech == MNAR && gap < 0.5:
				t.Errorf("MNAR rate %v: missing values only %.3f SD above observed ones", r, gap)
			case mech == MCAR && math.Abs(gap) > 0.05:
				t.Errorf("MCAR rate %v: missing values %.3f SD from observed ones", r, gap)
			}
		}
	}
}

// TestIrregularTruth checks the truth against the model over observed
// values, with windows where every sequence exists and over the whole time
// axis (FullWindows): a relevant feature's observed window cells move the output and
// nothing else does; permuting a feature's observed values among its
// observed positions inside its window leaves the output unchanged unless
// the truth says the window's ordering matters, and over the whole
// sequence unless the truth says the ordering matters.
func TestIrregularTruth(t *testing.T) {
	for k := range 4 {
		a, full := tempora.Alignment(k%2), k >= 2
		cfg := Config{Instances: 200, Features: 12, Timesteps: 16, Task: tempora.Regression,
			Irregular: &Irregular{LengthSpread: 2, Alignment: a, MissingRate: 0.3, FullWindows: full}}
		p, err := Generate(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		x := p.Data.X
		m, d, l := x.M, x.D, x.L
		base := make([]float64, m)
		if err := p.Model.Targets(base, x); err != nil {
			t.Fatal(err)
		}
		for i, y := range base {
			if math.IsNaN(y) || math.IsInf(y, 0) {
				t.Fatalf("%v: target %d is %v", a, i, y)
			}
		}
		truth := make([]bool, m*d*l)
		if err := p.Model.InstanceTruth(truth, x); err != nil {
			t.Fatal(err)
		}
		out := make([]float64, m)
		// Perturb one observed cell at a time in a few instances.
		for i := range 5 {
			for j := range d {
				for tt := range l {
					k := x.Index(i, j, tt)
					v := x.Data[k]
					if v != v {
						if truth[k] {
							t.Fatalf("%v: missing cell (%d, %d, %d) is true", a, i, j, tt)
						}
						continue
					}
					y := x.Clone()
					y.Data[k] = v + 10 // above any value: moves a Max too
					if err := p.Model.Targets(out, y); err != nil {
						t.Fatal(err)
					}
					moved := out[i] != base[i]
					f := p.Truth[j]
					if f.Important(tt) != moved {
						t.Errorf("%v: cell (%d, %d, %d): important %v, output moved %v", a, i, j, tt, f.Important(tt), moved)
					}
				}
			}
		}
		for j, f := range p.Truth {
			// Within the window.
			got := permutedChange(t, p, j, f.Window, base)
			if got > 1e-9 != f.WindowOrderingImportant && f.Relevant {
				t.Errorf("%v: feature %d (%v): window permutation changes the output by %g, truth %v", a, j, p.Model.Feature(j).Aggregator, got, f.WindowOrderingImportant)
			}
			// The whole sequence.
			got = permutedChange(t, p, j, tempora.Window{Start: 0, End: l - 1}, base)
			if got > 1e-9 != f.OrderingImportant {
				t.Errorf("%v: feature %d: sequence permutation changes the output by %g, truth %v", a, j, got, f.OrderingImportant)
			}
		}
	}
}

// permutedChange returns the largest change of the noise-free output when
// feature j's observed values in w are permuted among its observed
// positions, over 40 fixed permutations (enough to move a Max's argmax
// out of a window that few instances observe beyond).
func permutedChange(t *testing.T, p *Problem, j int, w tempora.Window, base []float64) float64 {
	t.Helper()
	x := p.Data.X
	rng := tempora.NewRand(1, "test", "permute")
	out := make([]float64, x.M)
	worst := 0.0
	for range 40 {
		order := rng.Perm(w.Len())
		y := x.Clone()
		tempora.PermuteTimestepsObserved(y, x, []int{j}, w.Start, w.End, order)
		if err := p.Model.Targets(out, y); err != nil {
			t.Fatal(err)
		}
		for i := range out {
			worst = max(worst, math.Abs(out[i]-base[i]))
		}
	}
	return worst
}

// TestIrregularCompleteIsDense checks that an irregular world with spread
// 1 and rate 0 is the complete world: the same data, and a model over
// observed values whose predictions equal the complete model's to the bit.
func TestIrregularCompleteIsDense(t *testing.T) {
	for _, task := range []tempora.Task{tempora.Regression, tempora.Classification} {
		cfg := Config{Instances: 300, Features: 10, Timesteps: 20, Task: task, Noise: AutoNoise}
		dense, err := Generate(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Irregular = &Irregular{LengthSpread: 1}
		ir, err := Generate(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(dense.Data.X.Data, ir.Data.X.Data) || !slices.Equal(dense.Data.Y, ir.Data.Y) {
			t.Fatalf("%v: data or targets differ from the complete world's", task)
		}
		if !ir.Model.ObservedValues() || dense.Model.ObservedValues() {
			t.Fatal("only the irregular world's model should be over observed values")
		}
		a, b := make([]float64, 300), make([]float64, 300)
		if err := dense.Model.Predict(a, dense.Data.X); err != nil {
			t.Fatal(err)
		}
		if err := ir.Model.Predict(b, dense.Data.X); err != nil {
			t.Fatal(err)
		}
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Fatalf("%v: instance %d: %v over observed values, %v complete", task, i, b[i], a[i])
			}
		}
		if !slices.Equal(dense.Truth, ir.Truth) {
			t.Errorf("%v: truth differs from the complete world's", task)
		}
	}
}

// TestIrregularDeterminism checks that the same seed gives byte-identical
// files for any worker count, and that the files load back.
func TestIrregularDeterminism(t *testing.T) {
	cfg := Config{Instances: 300, Features: 8, Timesteps: 15, Task: tempora.Classification, Noise: AutoNoise,
		Irregular: &Irregular{LengthSpread: 2, Alignment: tempora.AlignEnd, MissingRate: 0.3, Mechanism: MNAR}}
	p1, err := Generate(cfg, 42)
	if err != nil {
		t.Fatal(err)
	}
	prev := runtime.GOMAXPROCS(1)
	p2, err := Generate(cfg, 42)
	runtime.GOMAXPROCS(prev)
	if err != nil {
		t.Fatal(err)
	}
	a, b := saveFiles(t, p1), saveFiles(t, p2)
	for name := range a {
		if !bytes.Equal(a[name], b[name]) {
			t.Errorf("%s differs between two runs with the same seed", name)
		}
	}
	dir := t.TempDir()
	if err := p1.Save(dir); err != nil {
		t.Fatal(err)
	}
	q, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !q.Model.ObservedValues() || q.Data.Alignment != tempora.AlignEnd || *q.Config.Irregular != *cfg.Irregular {
		t.Errorf("loaded problem lost its irregular configuration: %+v, observed %v, %v", q.Config.Irregular, q.Model.ObservedValues(), q.Data.Alignment)
	}
	same := func(u, v float64) bool { return u == v || u != u && v != v }
	if !slices.EqualFunc(q.Data.X.Data, p1.Data.X.Data, same) {
		t.Error("loaded data differs")
	}
}

// TestIrregularErrors checks the configuration errors.
func TestIrregularErrors(t *testing.T) {
	for _, c := range []struct {
		ir   Irregular
		want string
	}{
		{Irregular{LengthSpread: 0.5}, "length spread"},
		{Irregular{LengthSpread: math.Inf(1)}, "length spread"},
		{Irregular{LengthSpread: 25}, "need at least 2"},
		{Irregular{MissingRate: 1}, "missing rate"},
		{Irregular{MissingRate: math.NaN()}, "missing rate"},
		{Irregular{Mechanism: 2}, "mechanism"},
		{Irregular{Alignment: 5}, "alignment"},
	} {
		ir := c.ir
		_, err := Generate(Config{Instances: 10, Features: 2, Timesteps: 20, Irregular: &ir}, 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one about %s", c.ir, err, c.want)
		}
	}
	for _, s := range []string{"mcar", "mnar"} {
		m, err := ParseMechanism(s)
		if err != nil || m.String() != s {
			t.Errorf("ParseMechanism(%q) = %v, %v", s, m, err)
		}
	}
	if _, err := ParseMechanism("mar"); err == nil {
		t.Error("ParseMechanism accepted mar")
	}
}
