package synth

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
)

func TestAutoBetaRegression(t *testing.T) {
	// β = sqrt(0.1·SST/S1) makes R² exactly 0.9 up to rounding; 1e-9 leaves
	// room for the rounding of sums over a few thousand instances only.
	const r2Tol = 1e-9
	for _, cfg := range []Config{
		{Instances: 1000, Features: 10, Timesteps: 20, Noise: AutoNoise},
		{Instances: 1500, Features: 30, Timesteps: 50, FractionRelevant: 0.33, Noise: AutoNoise},
		{Instances: 300, Features: 5, Timesteps: 8, WindowIndependent: true, Noise: AutoNoise},
	} {
		for _, seed := range []uint64{1, 2, 3, 4} {
			p, err := Generate(cfg, seed)
			if err != nil {
				t.Fatal(err)
			}
			pred := make([]float64, p.Data.X.M)
			if err := p.Model.Predict(pred, p.Data.X); err != nil {
				t.Fatal(err)
			}
			mean, _ := meanSD(p.Data.Y)
			sse, sst := 0.0, 0.0
			for i, y := range p.Data.Y {
				sse += (y - pred[i]) * (y - pred[i])
				sst += (y - mean) * (y - mean)
			}
			if r2 := 1 - sse/sst; math.Abs(r2-0.9) > r2Tol {
				t.Errorf("%dx%dx%d seed %d: R² = %.12f with β = %v, want 0.9", cfg.Instances, cfg.Features, cfg.Timesteps, seed, r2, p.Model.Beta())
			}
		}
	}
}

func TestAutoBetaClassification(t *testing.T) {
	// Brute force: for every β on the grid 0.01..0.99 count the instances
	// whose decision F_β > τ (via the public Polynomial) matches the label;
	// the chosen β must be the first whose accuracy is closest to 0.9.
	for _, cfg := range []Config{
		{Instances: 1000, Features: 10, Timesteps: 20, Task: tempora.Classification, Noise: AutoNoise},
		{Instances: 999, Features: 30, Timesteps: 20, FractionRelevant: 0.33, Task: tempora.Classification, Noise: AutoNoise},
		{Instances: 400, Features: 4, Timesteps: 10, Task: tempora.Classification, Noise: AutoNoise, WindowIndependent: true},
	} {
		for _, seed := range []uint64{1, 2, 3, 4, 5} {
			p, err := Generate(cfg, seed)
			if err != nil {
				t.Fatal(err)
			}
			m, x, y := p.Model, p.Data.X, p.Data.Y
			ones := 0
			for _, v := range y {
				ones += int(v)
			}
			if ones != x.M/2 {
				t.Errorf("seed %d: %d of %d labels are 1, want %d (threshold = median)", seed, ones, x.M, x.M/2)
			}
			f := make([]float64, x.M)
			best, bestDist := math.NaN(), math.Inf(1)
			for k := 1; k <= 99; k++ {
				beta := float64(k) / 100
				m.Polynomial(f, x, beta)
				correct := 0
				for i := range f {
					if (f[i]-m.Threshold() > 0) == (y[i] == 1) {
						correct++
					}
				}
				// |accuracy − 0.9| compared exactly, in units of 1/(10M).
				if d := math.Abs(float64(10*correct - 9*x.M)); d < bestDist {
					best, bestDist = beta, d
				}
			}
			if m.Beta() != best {
				t.Errorf("%d features seed %d: β = %v, brute force gives %v (accuracy %v)", cfg.Features, seed, m.Beta(), best, 0.9+bestDist/float64(10*x.M))
			}
		}
	}
}

func TestExplicitBeta(t *testing.T) {
	for _, task := range []tempora.Task{tempora.Regression, tempora.Classification} {
		p, err := Generate(Config{Instances: 100, Task: task, Noise: Noise{Beta: 0.37}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if p.Model.Beta() != 0.37 {
			t.Errorf("%v: β = %v, want 0.37", task, p.Model.Beta())
		}
		// The targets are the noise-free model's.
		want := make([]float64, 100)
		p.Model.Targets(want, p.Data.X)
		if !reflect.DeepEqual(want, p.Data.Y) {
			t.Errorf("%v: targets differ from the model's", task)
		}
	}
}

func TestNumRelevant(t *testing.T) {
	for _, c := range []struct {
		d    int
		frac float64
		want int
	}{
		{10, 0.5, 5}, {30, 0.33, 10}, {10, 0.2, 2}, {10, 1e-6, 1}, {3, 1, 3}, {1, 0.5, 1},
		{4, 0.625, 2}, {4, 0.875, 4}, // 2.5 and 3.5 round half to even
	} {
		cfg := Config{Instances: 50, Features: c.d, Timesteps: 5, FractionRelevant: c.frac}
		if got := cfg.NumRelevant(); got != c.want {
			t.Errorf("D=%d frac=%v: NumRelevant = %d, want %d", c.d, c.frac, got, c.want)
		}
		p, err := Generate(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		if got := len(p.Model.Relevant()); got != c.want {
			t.Errorf("D=%d frac=%v: %d relevant features, want %d", c.d, c.frac, got, c.want)
		}
	}
	// Relevant features are a uniformly shuffled subset: over seeds each
	// feature is relevant with probability R/D = 0.3.
	const seeds = 2000
	counts := make([]int, 10)
	for s := range uint64(seeds) {
		p, err := Generate(Config{Instances: 2, Features: 10, Timesteps: 2, FractionRelevant: 0.3}, s)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range p.Model.Relevant() {
			counts[j]++
		}
	}
	for j, c := range counts {
		checkProportion(t, "feature "+itoa(j)+" relevant", c, seeds, 0.3)
	}
}

func TestTruth(t *testing.T) {
	for _, cfg := range testConfigs() {
		p, err := Generate(cfg, 11)
		if err != nil {
			t.Fatal(err)
		}
		g := make([]float64, p.Data.X.M)
		for j, tr := range p.Truth {
			f := p.Model.Feature(j)
			if tr.Index != j || tr.Name != itoa(j) || tr.Window != f.Window || tr.Relevant != f.Relevant {
				t.Fatalf("feature %d: truth %+v does not match the model", j, tr)
			}
			if !tr.Relevant {
				if tr.EffectSize != 0 || tr.OrderingImportant || tr.WindowOrderingImportant {
					t.Errorf("irrelevant feature %d has truth %+v", j, tr)
				}
				for tt := range p.Data.X.L {
					if tr.Important(tt) {
						t.Errorf("irrelevant feature %d has important timestep %d", j, tt)
					}
				}
				continue
			}
			wo := f.Aggregator == MonotonicWeightedSum || f.Aggregator == RandomWeightedSum
			if tr.WindowOrderingImportant != wo || tr.OrderingImportant != (wo || f.Window.Len() < p.Data.X.L) {
				t.Errorf("feature %d (%v, window %v): ordering flags %v, %v", j, f.Aggregator, f.Window, tr.OrderingImportant, tr.WindowOrderingImportant)
			}
			want := 1.0
			if cfg.Task == tempora.Regression {
				p.Model.FeatureValues(g, p.Data.X, j)
				_, sd := meanSD(g)
				want = 2 * f.Coefficient * f.Coefficient * sd * sd
				// Var(g) = 1 on the generation set.
				if math.Abs(tr.EffectSize-2*f.Coefficient*f.Coefficient) > standardTol {
					t.Errorf("feature %d: effect size %v, want 2α² = %v", j, tr.EffectSize, 2*f.Coefficient*f.Coefficient)
				}
			}
			if tr.EffectSize != want {
				t.Errorf("feature %d: effect size %v, want %v", j, tr.EffectSize, want)
			}
			for tt := range p.Data.X.L {
				if tr.Important(tt) != f.Window.Contains(tt) {
					t.Errorf("feature %d timestep %d: Important = %v", j, tt, tr.Important(tt))
				}
			}
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Instances: 1}, "synth: 1 instances, need at least 2"},
		{Config{Instances: -5}, "synth: -5 instances"},
		{Config{Features: -1}, "synth: -1 features, need at least 1"},
		{Config{Timesteps: 1}, "synth: sequence length 1, need at least 2"},
		{Config{Timesteps: -3}, "synth: sequence length -3, need at least 2"},
		{Config{FractionRelevant: 1.5}, "synth: fraction of relevant features 1.5 outside [0, 1]"},
		{Config{FractionRelevant: -0.1}, "fraction of relevant features -0.1"},
		{Config{FractionRelevant: math.NaN()}, "fraction of relevant features NaN"},
		{Config{Task: 7}, "synth: unknown task 7"},
		{Config{Noise: Noise{Beta: -1}}, "synth: noise multiplier -1"},
		{Config{Noise: Noise{Beta: math.Inf(1)}}, "noise multiplier +Inf"},
		{Config{Noise: Noise{Beta: math.NaN()}}, "noise multiplier NaN"},
		{Config{Noise: Noise{Auto: true, Beta: 0.5}}, "noise is auto but an explicit multiplier 0.5"},
		{Config{Instances: 1 << 20, Features: 1 << 10, Timesteps: 1 << 10}, "synth: a 1048576 × 1024 × 1024 problem needs about 8.0 TiB of memory, more than the limit of"},
	} {
		p, err := Generate(c.cfg, 1)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: problem %v, error %v; want an error containing %q", c.cfg, p != nil, err, c.want)
		}
	}
	for _, s := range []string{"", "abc", "-1", "NaN", "inf", "0.5 0.6"} {
		if n, err := ParseNoise(s); err == nil {
			t.Errorf("ParseNoise(%q) = %v, want an error", s, n)
		}
	}
	for s, want := range map[string]Noise{"auto": AutoNoise, "0.5": {Beta: 0.5}, "0": {}, " 2 ": {Beta: 2}} {
		if n, err := ParseNoise(s); err != nil || n != want {
			t.Errorf("ParseNoise(%q) = %v, %v; want %v", s, n, err, want)
		}
	}
}

func TestDefaults(t *testing.T) {
	p, err := Generate(Config{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	x := p.Data.X
	if x.M != 1000 || x.D != 10 || x.L != 20 || len(p.Model.Relevant()) != 5 || p.Model.Beta() != 0 || p.Data.Task != tempora.Regression {
		t.Errorf("zero Config gave %d×%d×%d, %d relevant, β %v, %v", x.M, x.D, x.L, len(p.Model.Relevant()), p.Model.Beta(), p.Data.Task)
	}
	want := Config{Instances: 1000, Features: 10, Timesteps: 20, FractionRelevant: 0.5}
	if p.Config != want {
		t.Errorf("Problem.Config = %+v, want %+v", p.Config, want)
	}
	if err := p.Data.Validate(1); err != nil {
		t.Error(err)
	}
}

func saveFiles(t *testing.T, p *Problem) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	if err := p.Save(dir); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, name := range []string{DataFile, TargetsFile, ModelFile, TruthFile, ProblemFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = b
	}
	return files
}

func TestDeterminism(t *testing.T) {
	cfg := Config{Instances: 300, Features: 12, Timesteps: 15, Task: tempora.Classification, Noise: AutoNoise}
	p1, err := Generate(cfg, 42)
	if err != nil {
		t.Fatal(err)
	}
	// Same seed with one worker: byte-identical files.
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
	p3, err := Generate(cfg, 43)
	if err != nil {
		t.Fatal(err)
	}
	c := saveFiles(t, p3)
	for _, name := range []string{DataFile, ModelFile, ProblemFile} {
		if bytes.Equal(a[name], c[name]) {
			t.Errorf("%s is the same for seeds 42 and 43", name)
		}
	}
}

func TestModelIndependentOfM(t *testing.T) {
	// The model's structure and the features' processes do not depend on
	// M, and the first instances are the same; only the standardisation
	// statistics, τ and β (calibrated on the instances) change.
	small, err := Generate(Config{Instances: 50, Features: 15, Timesteps: 12}, 7)
	if err != nil {
		t.Fatal(err)
	}
	large, err := Generate(Config{Instances: 400, Features: 15, Timesteps: 12}, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(small.Generators, large.Generators) {
		t.Error("generators depend on M")
	}
	for j := range 15 {
		a, b := small.Model.Feature(j), large.Model.Feature(j)
		a.Mean, a.SD, b.Mean, b.SD = 0, 0, 0, 0
		if !reflect.DeepEqual(a, b) {
			t.Errorf("feature %d: %+v with M=50, %+v with M=400", j, a, b)
		}
	}
	if !reflect.DeepEqual(small.Data.X.Data, large.Data.X.Rows(0, 50).Data) {
		t.Error("the first 50 instances depend on M")
	}
}

func TestHead(t *testing.T) {
	p, err := Generate(Config{Instances: 640, Features: 8, Timesteps: 10, Task: tempora.Classification, Noise: AutoNoise}, 3)
	if err != nil {
		t.Fatal(err)
	}
	h, err := p.Head(100)
	if err != nil {
		t.Fatal(err)
	}
	if h.Data.X.M != 100 || len(h.Data.Y) != 100 || h.Model != p.Model || h.Config != p.Config {
		t.Fatalf("head has %d instances, %d targets", h.Data.X.M, len(h.Data.Y))
	}
	full, head := make([]float64, 640), make([]float64, 100)
	p.Model.Predict(full, p.Data.X)
	h.Model.Predict(head, h.Data.X)
	if !reflect.DeepEqual(full[:100], head) || !reflect.DeepEqual(p.Data.Y[:100], h.Data.Y) {
		t.Error("head predictions or targets differ from the first 100 of the full problem")
	}
	h.Data.X.Data[0] = 1e6 // the head owns its data
	if p.Data.X.Data[0] == 1e6 {
		t.Error("Head aliases the full problem's data")
	}
	for _, n := range []int{0, -1, 641} {
		if _, err := p.Head(n); err == nil {
			t.Errorf("Head(%d) succeeded", n)
		}
	}
}

func TestDescribe(t *testing.T) {
	for _, task := range []tempora.Task{tempora.Regression, tempora.Classification} {
		p, err := Generate(Config{Instances: 200, Features: 4, Timesteps: 10, Task: task, Noise: AutoNoise}, 1)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := p.Describe(&buf); err != nil {
			t.Fatal(err)
		}
		s := buf.String()
		want := []string{"200 instances × 4 features × 10 timesteps", "seed 1", "2 of 4 features relevant", "noise auto", "aggregator", "nonlinearity"}
		if task == tempora.Regression {
			want = append(want, "R² against the targets: 0.9000")
		} else {
			want = append(want, "accuracy of F > τ")
		}
		for _, w := range want {
			if !strings.Contains(s, w) {
				t.Errorf("%v description lacks %q:\n%s", task, w, s)
			}
		}
		if n := strings.Count(s, "\n"); n != 6+4 { // 4 summary lines, a blank, the header, 4 features
			t.Errorf("description has %d lines, want 10:\n%s", n, s)
		}
	}
}
