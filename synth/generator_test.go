package synth

import (
	"math"
	"strconv"
	"testing"

	"github.com/tempora-dev/tempora"
)

// zTol is the number of standard errors a Monte Carlo estimate may deviate
// from its expectation. With fixed seeds the tests are deterministic; 5
// standard errors keep the chance that a correct implementation fails a
// single check on some other seed below 6e-7, and below 1e-4 over the few
// hundred checks of this file.
const zTol = 5

// checkProportion fails if count/n deviates from p by more than zTol
// binomial standard errors.
func checkProportion(t *testing.T, what string, count, n int, p float64) {
	t.Helper()
	got := float64(count) / float64(n)
	se := math.Sqrt(p * (1 - p) / float64(n))
	if math.Abs(got-p) > zTol*se+1e-12 {
		t.Errorf("%s: frequency %.5f over %d draws, want %.5f ± %.5f", what, got, n, p, zTol*se)
	}
}

func TestSampleWindow(t *testing.T) {
	// Every (start, end) has probability 1/(L−⌊L/2⌋) · 1/end.
	for _, l := range []int{2, 3, 20, 50} {
		rng := tempora.NewRand(1, "test", "window")
		const n = 200000
		counts := make(map[tempora.Window]int)
		sumLen := 0
		for range n {
			w := sampleWindow(rng, l)
			if w.Start < 0 || w.Start >= w.End || w.End < l/2 || w.End >= l {
				t.Fatalf("L=%d: window %v outside the reference's range", l, w)
			}
			counts[w]++
			sumLen += w.Len()
		}
		h := l / 2
		expLen := 0.0
		for end := h; end < l; end++ {
			for start := range end {
				p := 1 / float64(l-h) / float64(end)
				w := tempora.Window{Start: start, End: end}
				checkProportion(t, "L="+itoa(l)+" window "+w.String(), counts[w], n, p)
				expLen += p * float64(w.Len())
			}
		}
		if l == 20 && math.Abs(expLen-8.75) > 1e-12 {
			t.Errorf("expected window length for L=20 is %v, reference says 8.75", expLen)
		}
		// The window length is at most L; its SD is below L/2.
		if got := float64(sumLen) / n; math.Abs(got-expLen) > zTol*float64(l)/2/math.Sqrt(n) {
			t.Errorf("L=%d: mean window length %.4f, want %.4f", l, got, expLen)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestDrawTypeProbabilities(t *testing.T) {
	const n = 100000
	want := map[Aggregator][3]float64{ // numeric, categorical, binary
		Max:                  {0.75, 0.25, 0},
		Average:              {0.5, 0.25, 0.25},
		MonotonicWeightedSum: {0.5, 0.25, 0.25},
		RandomWeightedSum:    {0.5, 0.25, 0.25},
	}
	for agg, p := range want {
		rng := tempora.NewRand(2, "test", "type", agg.String())
		var c [3]int
		for range n {
			c[drawType(rng, agg)]++
		}
		for typ := range 3 {
			checkProportion(t, agg.String()+" "+FeatureType(typ).String(), c[typ], n, p[typ])
		}
	}
}

func TestGeneratorParameters(t *testing.T) {
	// Structural properties of newGenerator over many draws: state counts by
	// type, the trend cap, Bernoulli p range, emission parameter ranges and
	// the trend mean rule.
	rng := tempora.NewRand(3, "test", "params")
	w := tempora.Window{Start: 3, End: 9}
	const n = 4000
	var bern, trend, means int
	var sumMean float64
	states := map[FeatureType]map[int]int{Numeric: {}, Categorical: {}, Binary: {}}
	for k := range 3 * n {
		typ := FeatureType(k % 3)
		indep := k%2 == 0
		g := newGenerator(rng, typ, 0, w, indep)
		if err := g.validate(12); err != nil {
			t.Fatalf("generated %v generator invalid: %v", typ, err)
		}
		if g.Bernoulli {
			bern++
			if g.P < 0.01 || g.P > 0.99 {
				t.Errorf("Bernoulli p = %v outside [0.01, 0.99]", g.P)
			}
			continue
		}
		if (g.Out == nil) != indep || (g.Out != nil && g.Out.States() != g.In.States()) {
			t.Fatalf("chains do not match window independence %v", indep)
		}
		s := g.In.States()
		states[typ][s]++
		if g.Trend {
			trend++
			if !indep && s > 4 {
				t.Errorf("window-dependent trend feature with %d states", s)
			}
		}
		if typ != Numeric {
			continue
		}
		for _, c := range []*Chain{g.In, g.Out} {
			if c == nil {
				continue
			}
			for i := range s {
				if sd := c.SDs[i]; sd < 0.005 || sd >= 0.05 {
					t.Errorf("emission SD %v outside [0.005, 0.05)", sd)
				}
				m := c.Means[i]
				switch {
				case !g.Trend || i == 0:
					if m < 0.1 || m >= 1 {
						t.Errorf("state %d mean %v outside [0.1, 1) (trend %v)", i, m, g.Trend)
					}
					if !g.Trend {
						sumMean += m
						means++
					}
				case i == 1:
					if m > -0.1 || m <= -1 {
						t.Errorf("trend state 1 mean %v, want in (−1, −0.1]", m)
					}
				case i == 2:
					if m != 0 {
						t.Errorf("trend state 2 mean %v, want 0", m)
					}
				default:
					if m < -1 || m >= 1 {
						t.Errorf("trend state %d mean %v outside [−1, 1)", i, m)
					}
				}
			}
		}
	}
	checkProportion(t, "Bernoulli among binary features", bern, n, 0.5)
	checkProportion(t, "trend among numeric features", trend, n, 0.5)
	// Non-trend means are U(0.1, 1): mean 0.55, SD 0.9/√12.
	if got, se := sumMean/float64(means), 0.9/math.Sqrt(12*float64(means)); math.Abs(got-0.55) > zTol*se {
		t.Errorf("mean of emission means %.4f, want 0.55 ± %.4f", got, zTol*se)
	}
	allowed := map[FeatureType][]int{Numeric: {2, 3, 4, 5}, Categorical: {3, 4, 5}, Binary: {2}}
	for typ, c := range states {
		for s, k := range c {
			ok := false
			for _, a := range allowed[typ] {
				ok = ok || a == s
			}
			if !ok {
				t.Errorf("%v feature with %d states (%d times)", typ, s, k)
			}
		}
		for _, a := range allowed[typ] {
			if c[a] == 0 {
				t.Errorf("%v features never have %d states", typ, a)
			}
		}
	}
	// A forced categorical state count (Max) is honoured.
	for _, forced := range []int{4, 5} {
		if g := newGenerator(rng, Categorical, forced, w, false); g.In.States() != forced {
			t.Errorf("forced %d states, got %d", forced, g.In.States())
		}
	}
}

// checkTransitions compares observed transition counts with chain c.
func checkTransitions(t *testing.T, what string, c *Chain, counts [][]int) {
	t.Helper()
	for s, row := range counts {
		tot := 0
		for _, k := range row {
			tot += k
		}
		if tot < 1000 {
			t.Fatalf("%s: only %d transitions from state %d", what, tot, s)
		}
		for k, cnt := range row {
			checkProportion(t, what+" transition "+itoa(s)+"→"+itoa(k), cnt, tot, c.Transition[s][k])
		}
	}
}

func TestMarkovTransitionsAndResets(t *testing.T) {
	// Categorical features emit their state index, so transitions and resets
	// are observable. Window-dependent: transitions inside the window follow
	// In, transitions outside follow Out, and the state is uniform at t = 0,
	// at the window start and just after the window end (resets).
	const l, n = 40, 20000
	for _, indep := range []bool{false, true} {
		rng := tempora.NewRand(4, "test", "markov")
		w := tempora.Window{Start: 12, End: 27}
		g := newGenerator(rng, Categorical, 5, w, indep)
		ns := g.In.States()
		newCounts := func() [][]int {
			c := make([][]int, ns)
			for s := range c {
				c[s] = make([]int, ns)
			}
			return c
		}
		in, out := newCounts(), newCounts()
		first := map[int][]int{0: make([]int, ns), w.Start: make([]int, ns), w.End + 1: make([]int, ns)}
		seq := make([]float64, l)
		for range n {
			g.Sample(seq, rng)
			for tt, v := range seq {
				if v != math.Trunc(v) || v < 0 || int(v) >= ns {
					t.Fatalf("categorical value %v", v)
				}
				if c, ok := first[tt]; ok {
					c[int(v)]++
				}
				if tt+1 == l {
					break
				}
				a, b := int(v), int(seq[tt+1])
				switch {
				case indep:
					in[a][b]++
				case w.Contains(tt) && w.Contains(tt+1):
					in[a][b]++
				case !w.Contains(tt) && !w.Contains(tt+1):
					out[a][b]++
				}
			}
		}
		if indep {
			checkTransitions(t, "independent", g.In, in)
			if g.Out != nil {
				t.Fatal("window-independent generator has an out-of-window chain")
			}
			continue
		}
		checkTransitions(t, "in-window", g.In, in)
		checkTransitions(t, "out-of-window", g.Out, out)
		for tt, c := range first {
			for s, k := range c {
				checkProportion(t, "state at reset t="+itoa(tt)+" = "+itoa(s), k, n, 1/float64(ns))
			}
		}
	}
}

func TestGaussianEmissions(t *testing.T) {
	// Two absorbing states with well-separated means: each sequence stays in
	// its initial state, so its values are i.i.d. emissions of that state.
	c := &Chain{
		Transition: [][]float64{{1, 0}, {0, 1}},
		Means:      []float64{0.2, 0.9},
		SDs:        []float64{0.01, 0.04},
	}
	g := &Generator{Type: Numeric, WindowIndependent: true, Window: tempora.Window{Start: 0, End: 9}, In: c}
	rng := tempora.NewRand(5, "test", "emissions")
	var sum, sum2 [2]float64
	var cnt [2]int
	seq := make([]float64, 10)
	for range 4000 {
		g.Sample(seq, rng)
		s := 0
		if seq[0] > 0.55 {
			s = 1
		}
		for _, v := range seq {
			sum[s] += v
			sum2[s] += v * v
			cnt[s]++
		}
	}
	for s := range 2 {
		n := float64(cnt[s])
		mean := sum[s] / n
		sd := math.Sqrt(sum2[s]/n - mean*mean)
		// Standard errors: SD/√n for the mean, about SD/√(2n) for the SD of
		// normal samples.
		if se := c.SDs[s] / math.Sqrt(n); math.Abs(mean-c.Means[s]) > zTol*se {
			t.Errorf("state %d: emission mean %.5f, want %.5f ± %.5f", s, mean, c.Means[s], zTol*se)
		}
		if se := c.SDs[s] / math.Sqrt(2*n); math.Abs(sd-c.SDs[s]) > zTol*se {
			t.Errorf("state %d: emission SD %.5f, want %.5f ± %.5f", s, sd, c.SDs[s], zTol*se)
		}
	}
	checkProportion(t, "initial state 0", cnt[0]/10, 4000, 0.5)
}

func TestTrendAccumulates(t *testing.T) {
	// With zero emission SDs the trend is deterministic: x_t = init + Σ_{k≤t}
	// s_k with s = −0.5 outside the window and +0.25 inside, straight through
	// the window borders.
	one := func(mean float64) *Chain {
		return &Chain{Transition: [][]float64{{1}}, Means: []float64{mean}, SDs: []float64{0}}
	}
	g := &Generator{Type: Numeric, Trend: true, InitValue: 0.3, Window: tempora.Window{Start: 4, End: 7},
		In: one(0.25), Out: one(-0.5)}
	seq := make([]float64, 12)
	g.Sample(seq, tempora.NewRand(6, "test"))
	want := 0.3
	for tt, v := range seq {
		if g.Window.Contains(tt) {
			want += 0.25
		} else {
			want -= 0.5
		}
		if math.Abs(v-want) > 1e-12 {
			t.Fatalf("x_%d = %v, want %v (sequence %v)", tt, v, want, seq)
		}
	}
}

func TestBernoulliWindows(t *testing.T) {
	const n = 20000
	w := tempora.Window{Start: 5, End: 9}
	for _, indep := range []bool{false, true} {
		g := &Generator{Type: Binary, Bernoulli: true, P: 0.2, Window: w, WindowIndependent: indep}
		rng := tempora.NewRand(7, "test", "bernoulli")
		seq := make([]float64, 15)
		var inOnes, outOnes int
		for range n {
			g.Sample(seq, rng)
			for tt, v := range seq {
				if v != 0 && v != 1 {
					t.Fatalf("binary value %v", v)
				}
				if w.Contains(tt) {
					inOnes += int(v)
				} else {
					outOnes += int(v)
				}
			}
		}
		pIn := 0.8
		if indep {
			pIn = 0.2
		}
		checkProportion(t, "ones in window", inOnes, n*w.Len(), pIn)
		checkProportion(t, "ones outside window", outOnes, n*(15-w.Len()), 0.2)
	}
}

func TestLowVarianceRejection(t *testing.T) {
	rng := tempora.NewRand(8, "test", "variance")
	w := tempora.Window{Start: 0, End: 3}
	f := &FeatureFunction{Window: w, Aggregator: Average}
	constant := &Generator{Type: Binary, Bernoulli: true, P: 0, Window: w, WindowIndependent: true}
	if varies(constant, f, rng, 6) {
		t.Error("a constant feature passed the variance check")
	}
	coin := &Generator{Type: Binary, Bernoulli: true, P: 0.5, Window: w, WindowIndependent: true}
	if !varies(coin, f, rng, 6) {
		t.Error("a fair-coin feature failed the variance check")
	}
	// Long windows make Max of categorical chains saturate, so Generate
	// must discard candidates (5 of 300 features at L = 50 for this seed);
	// every accepted feature varies over the generated instances.
	p, err := Generate(Config{Instances: 200, Features: 300, Timesteps: 50}, 3)
	if err != nil {
		t.Fatal(err)
	}
	attempts := 0
	g := make([]float64, 200)
	for j, gen := range p.Generators {
		attempts += gen.Attempt
		if err := p.Model.FeatureValues(g, p.Data.X, j); err != nil {
			t.Fatal(err)
		}
		if _, sd := meanSD(g); sd == 0 {
			t.Errorf("feature %d (%v, %v) is constant on the generated data", j, gen.Type, p.Model.Feature(j).Aggregator)
		}
	}
	if attempts == 0 {
		t.Error("no candidate was ever rejected at L = 50")
	}
}
