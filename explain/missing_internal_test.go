package explain

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/tempora-dev/tempora"
)

// observedSum is a model that reads data with missing values: a weighted
// sum of the observed cells of every feature (a missing cell adds nothing),
// plus the instance's length (its last observed timestep in any feature),
// so that it depends on values, missingness and length.
func observedSum(dst []float64, x *tempora.Tensor) error {
	for i := range dst {
		var v float64
		last := -1
		for j := range x.D {
			for t, s := range x.Series(i, j) {
				if s != s {
					continue
				}
				v += float64((j+1)*(t%3+1)) * s
				last = max(last, t)
			}
		}
		dst[i] = v + 0.3*float64(last)
	}
	return nil
}

// maskedTests are tests of every kind the masked paths handle.
func maskedTests(l int) []Test {
	return []Test{
		{Features: []int{0}, Window: tempora.Window{Start: 0, End: l - 1}, Permutations: 30, Key: "a", Stop: BesagClifford{Hits: 5}},
		{Features: []int{1, 2}, Window: tempora.Window{Start: 2, End: 4}, Permutations: 30, Key: "b"},
		{Features: []int{0}, Window: tempora.Window{Start: 0, End: 4}, Kind: WithinWindow{}, Permutations: 30, Key: "c"},
		{Features: []int{0, 3}, Window: tempora.Window{Start: 1, End: 3}, Kind: WithinWindow{}, Permutations: 30, Key: "exact"},
		{Features: []int{3}, Window: tempora.Window{Start: 0, End: 2}, Permutations: 30, Key: "probe", Stop: Probe{Threshold: 0.1}},
		{Features: []int{2}, Window: tempora.Window{Start: l - 2, End: l - 1}, Permutations: 30, Key: "late", Stop: Anytime{}},
	}
}

// withRule returns tests with every across-instance test (nil Kind) under
// length rule rule.
func withRule(tests []Test, rule LengthRule) []Test {
	out := slices.Clone(tests)
	for k := range out {
		if out[k].Kind == nil {
			out[k].Kind = AcrossInstances{Lengths: rule}
		}
	}
	return out
}

// TestMaskedPathsAgree checks the masked draws against the dense ones and
// against themselves: on complete data, forcing the masked paths changes
// no result and no explanation; on data with missing values, under every
// length rule, evaluating in chunks gives exactly the results and the
// explanation of a full copy, for 1 and 3 workers.
func TestMaskedPathsAgree(t *testing.T) {
	const m, d, l = 103, 4, 6
	run := func(t *testing.T, data *tempora.Dataset, rule LengthRule, chunk, workers int, masked bool) ([]TestResult, tempora.Accounting, string) {
		t.Helper()
		defer func(v int, f bool) { chunkValues, forceMasked = v, f }(chunkValues, forceMasked)
		chunkValues, forceMasked = chunk, masked
		obs, err := data.Observe(2)
		if err != nil {
			t.Fatal(err)
		}
		eng, err := newEngine(tempora.ModelFunc(observedSum), data, obs, nil, 4, workers, 0)
		if err != nil {
			t.Fatal(err)
		}
		// One chunk per worker: the whole data (unless at most a chunk)
		// does not fit, every worker's chunk does.
		budget := int64(8 * chunk * workers)
		eng.SetMemoryBudget(budget)
		// The probe (test 4) gives no p-value: it runs outside the family.
		tests := withRule(maskedTests(l), rule)
		all, err := eng.RunFamilies(context.Background(), []Family{{Alpha: 0.1, Tests: append(slices.Clone(tests[:4]), tests[5])}})
		if err != nil {
			t.Fatal(err)
		}
		probe, err := eng.Run(context.Background(), tests[4:5])
		if err != nil {
			t.Fatal(err)
		}
		res := append(append(all[0][:4:4], probe[0]), all[0][4])
		ex, err := TIME{Seed: 4, Workers: workers, MemoryBudget: budget, LengthRule: rule}.Explain(context.Background(), tempora.ModelFunc(observedSum), data)
		if err != nil {
			t.Fatal(err)
		}
		// Chunks change the model calls only.
		ex.Accounting.Runtime, ex.Accounting.ModelCalls = 0, 0
		js, _ := json.Marshal(ex)
		return res, eng.Accounting(), string(js)
	}
	same := func(t *testing.T, what string, a, b []TestResult, ja, jb string) {
		t.Helper()
		for k := range a {
			x, y := a[k], b[k]
			if math.IsNaN(x.PValue) && math.IsNaN(y.PValue) {
				x.PValue, y.PValue = 0, 0
			}
			if x != y {
				t.Errorf("%s: test %d: %+v, want %+v", what, k, y, x)
			}
		}
		if ja != jb {
			k := 0
			for k < min(len(ja), len(jb)) && ja[k] == jb[k] {
				k++
			}
			t.Errorf("%s: explanations differ at byte %d: …%s… and …%s…", what, k, ja[max(0, k-80):min(len(ja), k+80)], jb[max(0, k-80):min(len(jb), k+80)])
		}
	}
	t.Run("complete", func(t *testing.T) {
		x := tempora.NewTensor(m, d, l)
		rng := tempora.NewRand(2, "masked data")
		for i := range x.Data {
			x.Data[i] = rng.NormFloat64()
		}
		data := regression(x, 2)
		for _, rule := range []LengthRule{Receiver{}, Donor{}, Strata{}} {
			dense, _, dj := run(t, data, rule, m*d*l, 1, false)
			masked, _, mj := run(t, data, rule, m*d*l, 1, true)
			same(t, "forced masked "+rule.String(), dense, masked, dj, mj)
			chunked, _, cj := run(t, data, rule, 10*d*l, 3, true)
			same(t, "forced masked chunked "+rule.String(), dense, chunked, dj, cj)
		}
	})
	for _, align := range []tempora.Alignment{tempora.AlignStart, tempora.AlignEnd} {
		t.Run("missing/"+align.String(), func(t *testing.T) {
			x := IrregularData(m, d, l, 0.3, align, 3)
			data := regression(x, 3)
			data.Alignment = align
			for _, rule := range []LengthRule{Receiver{}, Donor{}, Strata{}} {
				full, fullAcc, fj := run(t, data, rule, m*d*l, 1, false)
				chunked, chunkedAcc, cj := run(t, data, rule, 10*d*l, 3, false)
				same(t, "chunked "+rule.String(), full, chunked, fj, cj)
				var draws int64
				for _, r := range full {
					draws += int64(r.Evaluated)
				}
				if fullAcc.ModelCalls != 1+draws || chunkedAcc.ModelCalls != 1+11*draws {
					t.Errorf("%v: accounting: full %+v, chunked %+v for %d draws", rule, fullAcc, chunkedAcc, draws)
				}
			}
		})
	}
}

// regression returns x with targets observedSum(x) + N(0, 1).
func regression(x *tempora.Tensor, seed uint64) *tempora.Dataset {
	y := make([]float64, x.M)
	_ = observedSum(y, x)
	rng := tempora.NewRand(seed, "noise")
	for i := range y {
		y[i] += rng.NormFloat64()
	}
	return &tempora.Dataset{X: x, Y: y, Task: tempora.Regression}
}

// TestMaskedDrawsKeepMask checks every perturbed copy a model sees on data
// with missing values: cells outside the test's block are the data's;
// under Receiver{} and Strata{} (and within windows, under every rule) no
// padding cell is ever observed, so every instance keeps its support;
// within a window every series keeps its missing cells and its multiset
// of observed values; under Strata{} every instance's block comes from an
// instance with the same support.
func TestMaskedDrawsKeepMask(t *testing.T) {
	const m, d, l = 60, 3, 8
	x := IrregularData(m, d, l, 0.3, tempora.AlignStart, 5)
	data := regression(x, 5)
	obs, err := data.Observe(2)
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []LengthRule{Receiver{}, Donor{}, Strata{}} {
		for _, tc := range []Test{
			{Features: []int{1}, Window: tempora.Window{Start: 2, End: 7}, Permutations: 20, Key: "across"},
			{Features: []int{0, 2}, Window: tempora.Window{Start: 0, End: 6}, Kind: WithinWindow{}, Permutations: 20, Key: "within"},
		} {
			var bad error
			seen := 0
			check := tempora.ModelFunc(func(dst []float64, p *tempora.Tensor) error {
				seen++
				for i := range p.M {
					for j := range d {
						ps, xs := p.Series(i, j), x.Series(i, j)
						in := slices.Contains(tc.Features, j)
						var got, want []float64
						for k := range l {
							inBlock := in && k >= tc.Window.Start && k <= tc.Window.End
							switch {
							case !inBlock && !same(ps[k], xs[k]):
								bad = fmt.Errorf("instance %d feature %d timestep %d outside the block changed", i, j, k)
							case rule != (Donor{}) || tc.Kind == (WithinWindow{}):
								if sup := obs.Support[i]; (k < sup.Start || k > sup.End) && ps[k] == ps[k] {
									bad = fmt.Errorf("instance %d feature %d: padding at timestep %d observed", i, j, k)
								}
							}
							if inBlock && tc.Kind == (WithinWindow{}) {
								if (ps[k] != ps[k]) != (xs[k] != xs[k]) {
									bad = fmt.Errorf("instance %d feature %d timestep %d: missingness changed within the window", i, j, k)
								}
								if xs[k] == xs[k] {
									got, want = append(got, ps[k]), append(want, xs[k])
								}
							}
						}
						slices.Sort(got)
						slices.Sort(want)
						if !slices.Equal(got, want) {
							bad = fmt.Errorf("instance %d feature %d: observed values %v, want a permutation of %v", i, j, got, want)
						}
					}
					if rule == (Strata{}) && tc.Kind == (AcrossInstances{}) && seen > 1 {
						// The block of instance i equals that of a donor
						// whose support covers the window alike.
						found := false
						cover := func(k int) tempora.Window {
							s := obs.Support[k]
							return tempora.Window{Start: max(s.Start, tc.Window.Start), End: min(s.End, tc.Window.End)}
						}
						for k := range m {
							if cover(k) != cover(i) {
								continue
							}
							ok := true
							for _, j := range tc.Features {
								a := p.Window(i, j, tc.Window.Start, tc.Window.End)
								b := x.Window(k, j, tc.Window.Start, tc.Window.End)
								for q := range a {
									ok = ok && same(a[q], b[q])
								}
							}
							found = found || ok
						}
						if !found {
							bad = fmt.Errorf("instance %d: block from no instance of its stratum", i)
						}
					}
				}
				return observedSum(dst, p)
			})
			eng, err := newEngine(check, data, obs, nil, 1, 2, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := eng.Run(context.Background(), withRule([]Test{tc}, rule)); err != nil {
				t.Fatal(err)
			}
			if bad != nil {
				t.Errorf("%v %s: %v", rule, tc.Key, bad)
			}
		}
	}
}

// same reports whether a and b are equal or both NaN.
func same(a, b float64) bool { return a == b || (a != a && b != b) }

// TestStratify checks the induced permutation of Strata{}: strata group the
// instances by their support's span inside the window (one stratum, nil,
// when every instance covers it alike); the induced permutation maps every
// instance to one of its stratum, and it is uniform within a stratum (χ²
// over the 3! = 6 permutations of a stratum of 3 in 6000 draws, at level
// 0.001: critical value 20.5 for 5 degrees of freedom).
func TestStratify(t *testing.T) {
	w := func(e int) tempora.Window { return tempora.Window{Start: 0, End: e} }
	sup := []tempora.Window{w(3), w(5), w(3), w(4), w(3), w(5)}
	if st := windowStrata(sup, w(2)); st != nil {
		t.Errorf("window [0, 2], covered by every instance: strata %+v, want nil", st)
	}
	if st := windowStrata(sup, tempora.Window{Start: 4, End: 5}); st == nil || len(st.members) != 3 {
		t.Errorf("window [4, 5]: strata %+v, want 3 (none, [4, 4], [4, 5])", st)
	}
	st := windowStrata(sup, w(5))
	perm, buf, cnt := make([]int, len(sup)), make([]int, len(sup)), make([]int, len(sup))
	rng := tempora.NewRand(1, "stratify")
	counts := map[[3]int]int{}
	const draws = 6000
	for range draws {
		for i := range perm {
			perm[i] = i
		}
		rng.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
		st.stratify(perm, buf, cnt)
		seen := make([]bool, len(perm))
		for i, p := range perm {
			if sup[p] != sup[i] || seen[p] {
				t.Fatalf("stratified permutation %v maps across strata or repeats", perm)
			}
			seen[p] = true
		}
		counts[[3]int{perm[0], perm[2], perm[4]}]++
	}
	chi2 := 0.0
	for _, c := range counts {
		chi2 += math.Pow(float64(c)-draws/6, 2) / (draws / 6)
	}
	if len(counts) != 6 || chi2 > 20.5 {
		t.Errorf("stratum {0, 2, 4}: %d permutations, χ² = %.1f (critical 20.5)", len(counts), chi2)
	}
	if n := st.singletons(); n != 1 {
		t.Errorf("%d singletons, want 1 (instance 3)", n)
	}
}

// TestPermuteRowMatchesRootOps checks the Engine's row-wise masked draws
// (permuteRow, used by the chunked draws and the in-place within-window
// draws) against the root operations that define them:
// tempora.PermuteInstancesWithin (Receiver{}), tempora.PermuteInstances
// (Donor{}) and tempora.PermuteTimestepsObserved, on data with missing
// values and on complete data, for random blocks and permutations.
func TestPermuteRowMatchesRootOps(t *testing.T) {
	const m, d, l = 40, 3, 9
	defer func(f bool) { forceMasked = f }(forceMasked)
	forceMasked = true // complete data takes the masked paths too
	rng := tempora.NewRand(8, "row ops")
	for _, rate := range []float64{0, 0.3} {
		for _, align := range []tempora.Alignment{tempora.AlignStart, tempora.AlignEnd} {
			x := IrregularData(m, d, l, rate, align, 8)
			if rate == 0 {
				for k, v := range x.Data {
					if v != v {
						x.Data[k] = float64(k % 7)
					}
				}
			}
			data := regression(x, 8)
			data.Alignment = align
			obs, err := data.Observe(2)
			if err != nil {
				t.Fatal(err)
			}
			for _, rule := range []LengthRule{Receiver{}, Donor{}} {
				eng, err := newEngine(tempora.ModelFunc(observedSum), data, obs, nil, 1, 1, 0)
				if err != nil {
					t.Fatal(err)
				}
				for trial := range 20 {
					a := rng.IntN(l)
					b := a + rng.IntN(l-a)
					feats := []int{rng.IntN(d)}
					if trial%2 == 1 {
						feats = append(feats, (feats[0]+1)%d)
					}
					var kind Perturbation = AcrossInstances{Lengths: rule}
					if trial%2 == 1 {
						kind = WithinWindow{}
					}
					n := m
					if kind == (WithinWindow{}) {
						n = b - a + 1
					}
					perm := rng.Perm(n)
					tc := &Test{Features: feats, Window: tempora.Window{Start: a, End: b}, Kind: kind}
					dr, err := kind.prepare(eng, tc)
					if err != nil {
						t.Fatal(err)
					}
					want := x.Clone()
					switch {
					case kind == (WithinWindow{}):
						tempora.PermuteTimestepsObserved(want, x, feats, a, b, perm)
					case rule == (Donor{}):
						tempora.PermuteInstances(want, x, feats, a, b, perm)
					default:
						tempora.PermuteInstancesWithin(want, x, feats, a, b, perm, obs.Support)
					}
					// Row by row, as a chunk of one instance is drawn.
					got := x.Clone()
					for i := range m {
						dr.rows(got.Rows(i, i+1), i, perm)
					}
					for k := range got.Data {
						if !same(got.Data[k], want.Data[k]) {
							t.Fatalf("rate %v, %v, %v, %v %v over [%d, %d]: cell %d is %v, want %v", rate, align, rule, kind, feats, a, b, k, got.Data[k], want.Data[k])
						}
					}
				}
			}
		}
	}
}
