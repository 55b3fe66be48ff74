package experiments

import (
	"context"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

// TestWindowsWorld runs TIME with one window (the paper's) and with up to
// three on the windows world (synth.GenerateWindows: 600 instances, 4
// features of which 2 relevant, 24 timesteps, target noise SD 1), 20
// seeds per setting, sweeping the true windows per feature (1, 2, 3) and
// the noise-weight scale (0, 0.05). Per relevant feature found it counts
// an exact recovery (the significant windows are the true ones) and a
// stretch (a claimed timestep outside the true windows). Issue 23's bars:
// with two windows, several windows recover them exactly for at least 80%
// of the relevant features while one window reports their hull; with
// noise weights of scale 0.05 and one true window, several windows
// stretch over a region that γ's definition leaves out (one carrying at
// most θ of the importance) for at most 1 feature in 20 (2 of 40).
//
// The noise weights on about 20 timesteps carry Σε² ≈ 20·0.05² = 0.05
// against Σw² ≈ 9 inside a window of 3 to 5 weights ±U(1, 2), about 0.5%
// of the importance, θ = (1−γ)/2 itself at the default γ = 0.99, so the
// window search (one window) stretches over them for 16 of 40 features.
// Several windows (the default) then leave out every region that surely
// carries less than θ, the window's ends included, and drop the pieces
// that do not surely carry more (splitWindows; docs/decisions.md,
// decision 18): 3 of 40 stretch, each where the noise weights beyond the
// true window carry more than θ (0.75% to 1.2% of the importance; a run
// of fewer than MinGap surely unimportant timesteps beside a noise weight
// is left out only with it, as a trim that must surely carry less than θ
// as a whole), none over a region γ leaves out. At γ = 0.95 none
// stretches.
func TestWindowsWorld(t *testing.T) {
	if testing.Short() {
		t.Skip("240 explanations")
	}
	const seeds = 20
	for _, k := range []int{1, 2, 3} {
		for _, scale := range []float64{0, 0.05} {
			gammas := []float64{0}
			if k == 1 && scale > 0 {
				gammas = append(gammas, 0.95)
			}
			for _, gamma := range gammas {
				cfg := synth.WindowsConfig{Instances: 600, Features: 4, Timesteps: 24, Relevant: 2, Windows: k, NoiseScale: scale, Noise: 1}
				type tally struct{ found, exact, hull, stretched, beyond int }
				var one, multi tally
				for seed := range uint64(seeds) {
					p, err := synth.GenerateWindows(cfg, seed)
					if err != nil {
						t.Fatal(err)
					}
					for _, c := range []struct {
						n   int
						acc *tally
					}{{1, &one}, {3, &multi}} {
						ex, err := explain.TIME{Seed: seed, Windows: c.n, Gamma: gamma}.Explain(context.Background(), p.Model, p.Data)
						if err != nil {
							t.Fatal(err)
						}
						for j := range cfg.Relevant {
							f := ex.Features[j]
							if !f.Important {
								continue
							}
							c.acc.found++
							truth := p.Windows[j]
							var got []tempora.Window
							for _, w := range f.Windows {
								if w.Significant {
									got = append(got, w.Window)
								}
							}
							if equalWindows(got, truth) {
								c.acc.exact++
							}
							if len(got) == 1 && got[0] == (tempora.Window{Start: truth[0].Start, End: truth[len(truth)-1].End}) {
								c.acc.hull++
							}
							_, stretched, beyond := judgeWindows(f, truth, p.Model.Feature(j).Weights, (1-gammaOr(gamma))/2)
							if stretched {
								c.acc.stretched++
							}
							if beyond {
								c.acc.beyond++
							}
						}
					}
				}
				t.Logf("windows=%d noise weights %.2f gamma %v: one window: found %d, exact %d, hull %d, stretched %d; up to three: found %d, exact %d, stretched %d (over at most θ: %d)",
					k, scale, gammaOr(gamma), one.found, one.exact, one.hull, one.stretched, multi.found, multi.exact, multi.stretched, multi.beyond)
				if k == 2 && float64(multi.exact) < 0.8*float64(multi.found) {
					t.Errorf("windows=2 scale %v: several windows recovered %d of %d exactly, want at least 80%%", scale, multi.exact, multi.found)
				}
				if k == 2 && float64(one.hull) < 0.8*float64(one.found) {
					t.Errorf("windows=2 scale %v: one window reported the hull for %d of %d, want at least 80%%", scale, one.hull, one.found)
				}
				if k == 1 && scale > 0 && gamma == 0.95 && (one.stretched > 2 || multi.stretched > 2) {
					t.Errorf("windows=1 scale %v gamma 0.95: stretched %d (one window) and %d (several) of %d features, want at most 2", scale, one.stretched, multi.stretched, one.found)
				}
				if k == 1 && scale > 0 && multi.beyond > 2 {
					t.Errorf("windows=1 scale %v gamma %v: several windows stretched over regions of at most θ of the importance for %d of %d features, want at most 2 (%d stretched in all)", scale, gammaOr(gamma), multi.beyond, multi.found, multi.stretched)
				}
			}
		}
	}
}

func equalWindows(a, b []tempora.Window) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// gammaOr returns γ, or the default for 0.
func gammaOr(g float64) float64 {
	if g == 0 {
		return explain.DefaultGamma
	}
	return g
}
