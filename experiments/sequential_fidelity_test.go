package experiments

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

// modeRun is the outcome of one TIME configuration on one problem.
type modeRun struct {
	ex           *tempora.Explanation
	power, fdr   float64
	evals, calls int64
}

// modeStats aggregates one configuration over problems.
type modeStats struct {
	name              string
	runs              []modeRun
	power, fdr        float64 // means over problems
	evals, calls      int64   // sums over problems
	found, relevant   int     // relevant features found / relevant features
	falseFlags, nulls int     // irrelevant features flagged / irrelevant features
}

// runModes runs every configuration on the seeded problems of cfg and
// returns one modeStats per configuration, problems in seed order.
func runModes(t *testing.T, cfg synth.Config, seeds []uint64, names []string, configs []explain.TIME) []*modeStats {
	t.Helper()
	stats := make([]*modeStats, len(configs))
	for k := range configs {
		stats[k] = &modeStats{name: names[k]}
	}
	for _, seed := range seeds {
		p, err := synth.Generate(cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		truth := make([]bool, cfg.Features)
		for j := range truth {
			truth[j] = p.Truth[j].Relevant
		}
		for k, c := range configs {
			c.Seed = seed
			ex, err := c.Explain(context.Background(), p.Model, p.Data)
			if err != nil {
				t.Fatal(err)
			}
			found := make([]bool, len(ex.Features))
			for j, f := range ex.Features {
				found[j] = f.Important
				switch {
				case truth[j]:
					stats[k].relevant++
					if f.Important {
						stats[k].found++
					}
				default:
					stats[k].nulls++
					if f.Important {
						stats[k].falseFlags++
					}
				}
			}
			power, fdr := PowerFDR(truth, found)
			s := stats[k]
			s.runs = append(s.runs, modeRun{ex: ex, power: power, fdr: fdr, evals: ex.Accounting.InstanceEvals, calls: ex.Accounting.ModelCalls})
			s.power += power / float64(len(seeds))
			s.fdr += fdr / float64(len(seeds))
			s.evals += ex.Accounting.InstanceEvals
			s.calls += ex.Accounting.ModelCalls
		}
	}
	return stats
}

// TestSequentialExplore is a scratch measurement (TEMPORA_EXPLORE=n models).
func TestSequentialExplore(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("TEMPORA_EXPLORE"))
	if n == 0 {
		t.Skip("TEMPORA_EXPLORE not set")
	}
	cfg := synth.Config{Instances: 1000, Features: 10, Timesteps: 20, FractionRelevant: 0.5, Task: tempora.Classification, Noise: synth.AutoNoise}
	if v := os.Getenv("TEMPORA_EXPLORE_RELEVANT"); v != "" {
		cfg.FractionRelevant, _ = strconv.ParseFloat(v, 64)
	}
	if v := os.Getenv("TEMPORA_EXPLORE_D"); v != "" {
		cfg.Features, _ = strconv.Atoi(v)
	}
	var seeds []uint64
	for k := range n {
		seeds = append(seeds, uint64(1+k))
	}
	names := []string{"fixed50", "seq", "seq-fullprobes"}
	configs := []explain.TIME{{Fixed: true}, {}, {FullProbes: true}}
	if os.Getenv("XNOFULL") != "" {
		names, configs = names[:2], configs[:2]
	}
	stats := runModes(t, cfg, seeds, names, configs)
	for _, s := range stats {
		t.Logf("%-15s power %.3f FDR %.3f found %d/%d false %d/%d evals %d calls %d", s.name, s.power, s.fdr, s.found, s.relevant, s.falseFlags, s.nulls, s.evals, s.calls)
	}
	// Per-feature comparisons against the first configuration.
	for k := 1; k < len(stats); k++ {
		var same, total, win, winTot, ord, wo, stage int
		for r := range seeds {
			a, b := stats[0].runs[r].ex, stats[k].runs[r].ex
			for j := range a.Features {
				fa, fb := a.Features[j], b.Features[j]
				total++
				if fa.Important == fb.Important {
					same++
				}
				if fa.Important && fb.Important {
					stage++
					winTot++
					if *fa.Window == *fb.Window {
						win++
					}
					if fa.OrderingImportant == fb.OrderingImportant {
						ord++
					}
					if fa.WindowOrderingImportant == fb.WindowOrderingImportant {
						wo++
					} else {
						t.Logf("seed %d feature %d: window %v/%v WO p %v/%v sig %v/%v", seeds[r], j, *fa.Window, *fb.Window, fa.WindowOrderingPValue, fb.WindowOrderingPValue, fa.WindowSignificant, fb.WindowSignificant)
					}
					if *fa.Window != *fb.Window {
						t.Logf("seed %d feature %d: window %v/%v", seeds[r], j, *fa.Window, *fb.Window)
					}
				}
			}
		}
		if k == 2 {
			var wsame, wtot int
			for r := range seeds {
				a, b := stats[1].runs[r].ex, stats[2].runs[r].ex
				for j := range a.Features {
					if a.Features[j].Window != nil && b.Features[j].Window != nil {
						wtot++
						if *a.Features[j].Window == *b.Features[j].Window {
							wsame++
						}
					}
				}
			}
			t.Logf("seq vs seq-fullprobes windows same %d/%d", wsame, wtot)
		}
		t.Logf("%s vs %s: features same %d/%d; both important %d: window same %d, ordering same %d, window ordering same %d", stats[k].name, stats[0].name, same, total, stage, win, ord, wo)
	}
	for _, s := range stats {
		sum := map[string][2]int64{}
		for _, r := range s.runs {
			for _, c := range r.ex.Accounting.Draws {
				v := sum[c.Test]
				v[0] += c.Draws
				v[1] += c.MaxDraws
				sum[c.Test] = v
			}
		}
		t.Logf("%s all draws: %v", s.name, sum)
	}
	for _, s := range stats {
		var line string
		for _, c := range s.runs[0].ex.Accounting.Draws {
			line += fmt.Sprintf(" %s %d/%d", c.Test, c.Draws, c.MaxDraws)
		}
		t.Logf("%s seed 1 draws:%s", s.name, line)
	}
}
