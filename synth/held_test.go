package synth

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/resident"
)

// TestHeldMatchesPredict checks that the held capability predicts every
// block as Predict predicts the data with the block applied, bit for bit:
// blocks of one or several features, windows inside, across and outside
// the terms' windows, every aggregator, both tasks, a model over observed
// values with missing cells, and a data tensor it was not holding.
func TestHeldMatchesPredict(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
	}{
		{"classification", Config{Instances: 60, Features: 6, Timesteps: 12, FractionRelevant: 0.5, Task: tempora.Classification, Noise: AutoNoise}},
		{"regression", Config{Instances: 60, Features: 5, Timesteps: 9, FractionRelevant: 0.4, Task: tempora.Regression, Noise: Noise{Beta: 0.5}}},
		{"observed", Config{Instances: 60, Features: 4, Timesteps: 10, FractionRelevant: 0.5, Task: tempora.Classification, Noise: AutoNoise,
			Irregular: &Irregular{MissingRate: 0.3}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Generate(c.cfg, 11)
			if err != nil {
				t.Fatal(err)
			}
			x := p.Data.X
			h := p.Model.Held()
			if err := h.Hold(x); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			for trial := range 200 {
				blocks := make([]resident.Block, 1+rng.IntN(3))
				for k := range blocks {
					blocks[k] = randomBlock(rng, x)
				}
				got := make([]float64, 0)
				for k := range blocks {
					got = append(got, make([]float64, blocks[k].Rows())...)
				}
				if err := h.PredictBlocks(got, x, blocks); err != nil {
					t.Fatal(err)
				}
				at := 0
				for k := range blocks {
					b := &blocks[k]
					y := &tempora.Tensor{M: x.M, D: x.D, L: x.L, Data: append([]float64(nil), x.Data...)}
					b.Apply(y)
					rows := &tempora.Tensor{M: b.Rows(), D: x.D, L: x.L, Data: y.Data[b.Lo*x.D*x.L : b.Hi*x.D*x.L]}
					want := make([]float64, b.Rows())
					if err := p.Model.Predict(want, rows); err != nil {
						t.Fatal(err)
					}
					for i, w := range want {
						if g := got[at+i]; math.Float64bits(g) != math.Float64bits(w) {
							t.Fatalf("trial %d block %d (features %v, [%d, %d]) row %d: held %v, Predict %v", trial, k, b.Features, b.Start, b.End, b.Lo+i, g, w)
						}
					}
					at += b.Rows()
				}
			}
			// Another tensor: held again, not answered from the old terms.
			y := &tempora.Tensor{M: x.M, D: x.D, L: x.L, Data: append([]float64(nil), x.Data...)}
			for i := range y.Data {
				y.Data[i] *= 1.5
			}
			b := []resident.Block{{Lo: 0, Hi: x.M, Features: []int{0}, Start: 0, End: 0, Values: y.Data[:0]}}
			b[0].Values = make([]float64, x.M)
			for i := range x.M {
				b[0].Values[i] = y.Data[i*x.D*x.L]
			}
			got, want := make([]float64, x.M), make([]float64, x.M)
			if err := h.PredictBlocks(got, y, b); err != nil {
				t.Fatal(err)
			}
			if err := p.Model.Predict(want, y); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("another tensor, row %d: held %v, Predict %v", i, got[i], want[i])
				}
			}
		})
	}
}

// randomBlock returns a block of random rows, one to three features and
// a random window, with values drawn from the data's own cells (NaN
// included) and, now and then, fresh normal values.
func randomBlock(rng *rand.Rand, x *tempora.Tensor) resident.Block {
	lo := rng.IntN(x.M)
	hi := lo + 1 + rng.IntN(x.M-lo)
	feats := rng.Perm(x.D)[:1+rng.IntN(min(3, x.D))]
	s := rng.IntN(x.L)
	e := s + rng.IntN(x.L-s)
	b := resident.Block{Lo: lo, Hi: hi, Features: feats, Start: s, End: e}
	b.Values = make([]float64, b.Len())
	for k := range b.Values {
		if rng.IntN(4) == 0 {
			b.Values[k] = rng.NormFloat64()
		} else {
			b.Values[k] = x.Data[rng.IntN(len(x.Data))]
		}
	}
	return b
}

// TestHeldErrors checks that a malformed block or a wrong destination is
// an error, not a panic.
func TestHeldErrors(t *testing.T) {
	p, err := Generate(Config{Instances: 10, Features: 3, Timesteps: 5, FractionRelevant: 0.5, Task: tempora.Regression}, 1)
	if err != nil {
		t.Fatal(err)
	}
	h := p.Model.Held()
	x := p.Data.X
	bad := []resident.Block{{Lo: 0, Hi: 11, Features: []int{0}, Start: 0, End: 0, Values: make([]float64, 11)}}
	if err := h.PredictBlocks(make([]float64, 11), x, bad); err == nil {
		t.Error("a block beyond the data: no error")
	}
	ok := []resident.Block{{Lo: 0, Hi: 2, Features: []int{1}, Start: 1, End: 2, Values: make([]float64, 4)}}
	if err := h.PredictBlocks(make([]float64, 3), x, ok); err == nil {
		t.Error("3 predictions for a block of 2 rows: no error")
	}
	other := tempora.NewTensor(10, 2, 5)
	if err := h.Hold(other); err == nil {
		t.Error("holding data of another shape: no error")
	}
}
