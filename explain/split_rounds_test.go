package explain_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
)

// linearProfiles returns the model Σ_j Σ_t w[j][t]·x[j, t].
func linearProfiles(w [][]float64) tempora.ModelFunc {
	return func(dst []float64, x *tempora.Tensor) error {
		for i := range dst {
			var v float64
			for j, row := range w {
				for t, c := range x.Window(i, j, 0, len(row)-1) {
					v += row[t] * c
				}
			}
			dst[i] = v
		}
		return nil
	}
}

// roundsProfiles returns the weights of TestStage1Rounds' model for seed:
// feature 0 read over [4, 11] and [20, 29] (a gap of 8 timesteps), feature
// 1 over [8, 30] with a run of two zero weights at 17–18 and weights
// falling to 0.1 towards its ends, feature 2 over [2, 5] and [9, 12] (a
// gap of 3, the shortest that splits), and, for odd seeds, noise weights
// of SD 0.05 on every other timestep of the three.
func roundsProfiles(l int, seed uint64) [][]float64 {
	rng := tempora.NewRand(seed, "profiles")
	w := make([][]float64, 4)
	for j := range 3 {
		w[j] = make([]float64, l)
		if seed%2 == 1 {
			for t := range w[j] {
				w[j][t] = 0.05 * rng.NormFloat64()
			}
		}
	}
	sign := func() float64 {
		if rng.IntN(2) == 0 {
			return -1
		}
		return 1
	}
	for _, r := range [][3]int{{0, 4, 11}, {0, 20, 29}, {2, 2, 5}, {2, 9, 12}} {
		for t := r[1]; t <= r[2]; t++ {
			w[r[0]][t] = sign() * (0.5 + rng.Float64())
		}
	}
	for t := 8; t <= 30; t++ {
		if t != 17 && t != 18 {
			w[1][t] = 0.1 + 0.9*float64(min(t-8, 30-t))/11
		}
	}
	w[3] = make([]float64, l)
	return w
}

// TestStage1Rounds checks that stage 1 of the split, which probes a
// window's anchors first and the timesteps between two anchors only when
// one of them is not surely important (docs/decisions.md, decision 27),
// gives the same explanation as probing every timestep, byte for byte but
// for the accounting, on models with long and short gaps, zero weights
// inside a window, slopes and noise weights, and that it makes fewer
// window-search draws.
func TestStage1Rounds(t *testing.T) {
	if testing.Short() {
		t.Skip("16 explanations")
	}
	const m, d, l, seeds = 300, 4, 40, 8
	var rounds, every int64
	split := 0
	for seed := range uint64(seeds) {
		model := linearProfiles(roundsProfiles(l, seed))
		x := gaussianData(m, d, l, 700+seed)
		data := regressionData(t, x, model, 0.5, 700+seed)
		var out [2][]byte
		for k, all := range []bool{false, true} {
			*explain.ProbeEveryTimestep = all
			ex, err := explain.TIME{Seed: seed, Workers: 2}.Explain(context.Background(), model, data)
			*explain.ProbeEveryTimestep = false
			if err != nil {
				t.Fatal(err)
			}
			if !all {
				for _, f := range ex.Features {
					if len(f.Windows) > 1 {
						split++
					}
				}
			}
			draws := searchDrawsOf(ex.Accounting)
			if all {
				every += draws
			} else {
				rounds += draws
			}
			ex.Accounting = tempora.Accounting{}
			if out[k], err = ex.MarshalJSON(); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(out[0], out[1]) {
			t.Errorf("seed %d: the explanation with two rounds differs from probing every timestep:\n%s\n%s", seed, out[0], out[1])
		}
	}
	t.Logf("window-search draws: %d with two rounds, %d probing every timestep (%.3f); %d features split", rounds, every, float64(rounds)/float64(every), split)
	if split < seeds {
		t.Errorf("%d features split in %d explanations: the models' gaps are not found, so the comparison shows little", split, seeds)
	}
	if rounds >= every {
		t.Errorf("two rounds make %d window-search draws, probing every timestep %d: want fewer", rounds, every)
	}
}

// searchDrawsOf returns the window-search draws of an accounting.
func searchDrawsOf(a tempora.Accounting) int64 {
	for _, c := range a.Draws {
		if c.Test == "window search" {
			return c.Draws
		}
	}
	return 0
}
