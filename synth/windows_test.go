package synth

import "testing"

// TestGenerateWindows checks the windows world: every relevant feature has
// the configured number of disjoint windows of 3 to 5 timesteps, at least
// 3 apart, inside the sequence; the model's weights are ±[1, 2] inside
// them and exactly 0 outside without noise weights; the targets are the
// model's predictions when the noise is 0; the same seed gives the same
// problem; and bad configurations are errors.
func TestGenerateWindows(t *testing.T) {
	for k := 1; k <= 3; k++ {
		cfg := WindowsConfig{Instances: 50, Features: 3, Timesteps: 24, Relevant: 2, Windows: k}
		for seed := range uint64(30) {
			p, err := GenerateWindows(cfg, seed)
			if err != nil {
				t.Fatal(err)
			}
			for j := range cfg.Features {
				ws := p.Windows[j]
				if j >= cfg.Relevant {
					if len(ws) != 0 {
						t.Errorf("irrelevant feature %d has windows %v", j, ws)
					}
					continue
				}
				if len(ws) != k {
					t.Fatalf("k=%d seed %d feature %d: windows %v", k, seed, j, ws)
				}
				in := make([]bool, cfg.Timesteps)
				for i, w := range ws {
					if w.Start < 0 || w.End >= cfg.Timesteps || w.Len() < 3 || w.Len() > 5 || (i > 0 && w.Start-ws[i-1].End-1 < 3) {
						t.Errorf("k=%d seed %d feature %d: windows %v", k, seed, j, ws)
					}
					for s := w.Start; s <= w.End; s++ {
						in[s] = true
					}
				}
				for s, c := range p.Model.feats[j].Weights {
					if a := max(c, -c); (in[s] && (a < 1 || a > 2)) || (!in[s] && c != 0) {
						t.Errorf("k=%d seed %d feature %d: weight %v at timestep %d (in a window: %v)", k, seed, j, c, s, in[s])
					}
				}
			}
			pred := make([]float64, cfg.Instances)
			if err := p.Model.Predict(pred, p.Data.X); err != nil {
				t.Fatal(err)
			}
			for i := range pred {
				if pred[i] != p.Data.Y[i] {
					t.Fatalf("target %d = %v, model %v with no noise", i, p.Data.Y[i], pred[i])
				}
			}
		}
	}
	a, _ := GenerateWindows(WindowsConfig{Instances: 20, Features: 2, Timesteps: 20, Relevant: 1, Windows: 2, NoiseScale: 0.05, Noise: 1}, 7)
	b, _ := GenerateWindows(WindowsConfig{Instances: 20, Features: 2, Timesteps: 20, Relevant: 1, Windows: 2, NoiseScale: 0.05, Noise: 1}, 7)
	if a.Windows[0][0] != b.Windows[0][0] || a.Data.Y[3] != b.Data.Y[3] {
		t.Error("same seed, different problems")
	}
	for _, bad := range []WindowsConfig{
		{Instances: 1, Features: 1, Timesteps: 20, Windows: 1},
		{Instances: 10, Features: 1, Timesteps: 20, Relevant: 2, Windows: 1},
		{Instances: 10, Features: 1, Timesteps: 20, Windows: 4},
		{Instances: 10, Features: 1, Timesteps: 20, Windows: 3},
		{Instances: 10, Features: 1, Timesteps: 20, Windows: 1, NoiseScale: -1},
	} {
		if _, err := GenerateWindows(bad, 1); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
