package experiments

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

// WindowsSweepRow is one point of the windows suite's sweep over the noise
// weights' scale (docs/decisions.md, decision 18): TIME with at most
// TIMEWindows windows per feature on Seeds problems of the windows world
// with TrueWindows windows per relevant feature. Found counts the relevant
// features TIME finds important, Exact those whose significant windows are
// exactly the true ones, Stretched those with a significant window that
// claims a timestep outside the true windows.
type WindowsSweepRow struct {
	TrueWindows int
	NoiseScale  float64
	TIMEWindows int
	Seeds       int
	Found       int
	Exact       int
	Stretched   int
}

// ExactRate returns Exact/Found (0 when nothing is found).
func (r WindowsSweepRow) ExactRate() float64 { return float64(r.Exact) / float64(max(r.Found, 1)) }

// StretchRate returns Stretched/Found (0 when nothing is found).
func (r WindowsSweepRow) StretchRate() float64 {
	return float64(r.Stretched) / float64(max(r.Found, 1))
}

// WindowsSweep runs TIME (default configuration, seeded with the problem's
// seed, with one window and with up to three) on the windows suite's
// problem shape (600 × 4 × 24 regression, 2 relevant features, target
// noise SD 1) for seeds 0..seeds−1 at every number of true windows and
// noise-weight scale. Rows come in the order trueWindows × scales × (1, 3).
func WindowsSweep(ctx context.Context, trueWindows []int, scales []float64, seeds int) ([]WindowsSweepRow, error) {
	var out []WindowsSweepRow
	for _, k := range trueWindows {
		for _, s := range scales {
			cfg := synth.WindowsConfig{Instances: windowsProblem.Instances, Features: windowsProblem.Features, Timesteps: windowsProblem.Timesteps,
				Relevant: 2, Windows: k, NoiseScale: s, Noise: 1}
			rows := []WindowsSweepRow{{TrueWindows: k, NoiseScale: s, TIMEWindows: 1, Seeds: seeds}, {TrueWindows: k, NoiseScale: s, TIMEWindows: 3, Seeds: seeds}}
			for seed := range uint64(seeds) {
				p, err := synth.GenerateWindows(cfg, seed)
				if err != nil {
					return nil, err
				}
				for i := range rows {
					ex, err := explain.TIME{Seed: seed, Windows: rows[i].TIMEWindows}.Explain(ctx, p.Model, p.Data)
					if err != nil {
						return nil, fmt.Errorf("windows sweep: true windows %d, scale %v, seed %d: %w", k, s, seed, err)
					}
					for j := range cfg.Relevant {
						f := ex.Features[j]
						if !f.Important {
							continue
						}
						rows[i].Found++
						exact, stretched := judgeWindows(f, p.Windows[j])
						if exact {
							rows[i].Exact++
						}
						if stretched {
							rows[i].Stretched++
						}
					}
				}
			}
			out = append(out, rows...)
		}
	}
	return out, nil
}

// judgeWindows reports whether the significant windows of f are exactly
// truth, and whether one claims a timestep outside truth.
func judgeWindows(f tempora.FeatureResult, truth []tempora.Window) (exact, stretched bool) {
	var got []tempora.Window
	for _, w := range f.Windows {
		if !w.Significant {
			continue
		}
		got = append(got, w.Window)
		for t := w.Window.Start; t <= w.Window.End; t++ {
			in := false
			for _, tw := range truth {
				in = in || tw.Contains(t)
			}
			stretched = stretched || !in
		}
	}
	exact = len(got) == len(truth)
	for i := 0; exact && i < len(got); i++ {
		exact = got[i] == truth[i]
	}
	return exact, stretched
}

// WriteWindowsSweepCSV writes rows as CSV with a header line.
func WriteWindowsSweepCSV(w io.Writer, rows []WindowsSweepRow) error {
	if _, err := io.WriteString(w, "true-windows,noise-weights,time-windows,seeds,found,exact,stretched,exact-window-rate,stretch-rate\n"); err != nil {
		return err
	}
	for _, r := range rows {
		_, err := fmt.Fprintf(w, "%d,%s,%d,%d,%d,%d,%d,%.4f,%.4f\n", r.TrueWindows, strconv.FormatFloat(r.NoiseScale, 'g', -1, 64), r.TIMEWindows,
			r.Seeds, r.Found, r.Exact, r.Stretched, r.ExactRate(), r.StretchRate())
		if err != nil {
			return err
		}
	}
	return nil
}
