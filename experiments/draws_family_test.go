package experiments

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/explain"
	"github.com/tempora-dev/tempora/synth"
)

// drawSeeds are the synth seeds of issue 34's Table-1 draw target; each
// problem is explained with TIME's defaults seeded with its own seed, as
// `tempora synth -task classification -noise auto -seed S` and `tempora
// explain -seed S` do.
var drawSeeds = []uint64{8125400, 8125401, 8125402}

// familyDraws is TIME's draws per family (Accounting.Draws) summed over
// problems, and the important features they found.
type familyDraws struct {
	draws     map[string]int64
	order     []string
	important int
}

// searchPerFeature returns the window-search draws per important feature.
func (f familyDraws) searchPerFeature() float64 {
	return float64(f.draws["window search"]) / float64(max(f.important, 1))
}

// drawsAt explains the Table-1-like problems of shape m × d × l
// (classification, half of the features relevant, automatic noise) for
// drawSeeds with TIME's defaults and returns their draws per family.
func drawsAt(tb testing.TB, m, d, l int) familyDraws {
	tb.Helper()
	cfg := synth.Config{Instances: m, Features: d, Timesteps: l, FractionRelevant: 0.5, Task: tempora.Classification, Noise: synth.AutoNoise}
	out := familyDraws{draws: map[string]int64{}}
	for _, s := range drawSeeds {
		p, err := synth.Generate(cfg, s)
		if err != nil {
			tb.Fatal(err)
		}
		ex, err := explain.TIME{Seed: s}.Explain(context.Background(), p.Model, p.Data)
		if err != nil {
			tb.Fatal(err)
		}
		for _, c := range ex.Accounting.Draws {
			if _, ok := out.draws[c.Test]; !ok {
				out.order = append(out.order, c.Test)
			}
			out.draws[c.Test] += c.Draws
		}
		for _, f := range ex.Features {
			if f.Important {
				out.important++
			}
		}
	}
	return out
}

// drawShapes are issue 34's shapes (M, D, L): Table 1, four times the
// features, four times the timesteps, and the D and L of its 6400 × 30 ×
// 50 with 1000 instances (at 6400 the three problems take most of an
// hour on a loaded 2-core machine; the draws of a test depend on M only
// through the noise of its scores).
var drawShapes = [][3]int{{1000, 10, 20}, {1000, 40, 20}, {1000, 10, 80}, {1000, 30, 50}}

// BenchmarkDrawsPerFamily reports, per shape, TIME's draws per family on
// the three problems of drawSeeds (one op explains the three): overall,
// window search, ordering, window and window ordering, their total, the
// important features, and the window-search draws per important feature.
// The counts are deterministic; only ns/op varies.
func BenchmarkDrawsPerFamily(b *testing.B) {
	for _, s := range drawShapes {
		b.Run(fmt.Sprintf("%dx%dx%d", s[0], s[1], s[2]), func(b *testing.B) {
			var f familyDraws
			for b.Loop() {
				f = drawsAt(b, s[0], s[1], s[2])
			}
			var total int64
			for _, k := range f.order {
				total += f.draws[k]
				b.ReportMetric(float64(f.draws[k]), metricName(k))
			}
			b.ReportMetric(float64(total), "draws")
			b.ReportMetric(float64(f.important), "important")
			b.ReportMetric(f.searchPerFeature(), "search-draws/feature")
		})
	}
}

// metricName returns a family's name as a benchmark unit ("window
// search" → "window-search-draws").
func metricName(family string) string {
	b := []byte(family)
	for i, c := range b {
		if c == ' ' {
			b[i] = '-'
		}
	}
	return string(b) + "-draws"
}

// searchGrowthSlack is issue 34's "constant number of window-search draws
// per important feature" that doubling L may add (besides 10%): about
// two probes of the bisection (one prefix and one suffix probe more) and
// two of stage 1 at a few draws each, which a search whose probes grow
// with log L adds.
const searchGrowthSlack = 20

// TestWindowSearchGrowth checks issue 34's bar on the window search:
// doubling L (1000 × 10 × 20 → 40 → 80, synth's windows growing with L)
// adds at most searchGrowthSlack window-search draws per important
// feature plus 10%, S(2L) ≤ 1.1·S(L) + searchGrowthSlack. It is the
// issue's target, not met yet: stage 1 of the split probes O(window)
// timesteps (docs/decisions.md, decision 27), so it runs only with
// TEMPORA_DRAWS_GROWTH=1 (nine Table-1-sized explanations, about a minute
// on an idle core). It also checks that docs/decisions.md, decision 27, states the draws per
// feature it measures.
func TestWindowSearchGrowth(t *testing.T) {
	if os.Getenv("TEMPORA_DRAWS_GROWTH") == "" {
		t.Skip("set TEMPORA_DRAWS_GROWTH=1: issue 34's target, not met yet (docs/decisions.md, decision 27)")
	}
	doc, err := os.ReadFile("../docs/decisions.md")
	if err != nil {
		t.Fatal(err)
	}
	prev := 0.0
	var per []string
	for _, l := range []int{20, 40, 80} {
		f := drawsAt(t, 1000, 10, l)
		s := f.searchPerFeature()
		per = append(per, fmt.Sprintf("%.1f", s))
		t.Logf("L = %d: %v over %d important features; window search %.1f per feature", l, f.draws, f.important, s)
		if prev > 0 && s > 1.1*prev+searchGrowthSlack {
			t.Errorf("L = %d: %.1f window-search draws per important feature, against %.1f at L = %d: want at most %.1f", l, s, prev, l/2, 1.1*prev+searchGrowthSlack)
		}
		prev = s
	}
	line := strings.Join(per, ", ") + " after"
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), line) {
		t.Errorf("docs/decisions.md, decision 27, does not state %q", line)
	}
}
