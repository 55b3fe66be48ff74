package results_test

import (
	"fmt"
	"os"

	"github.com/tempora-dev/tempora/record"
	"github.com/tempora-dev/tempora/results"
)

func ExampleSummarize() {
	// Feature power of one method over five models.
	s := results.Summarize([]float64{0.8, 1, 0.6, 1, 0.8})
	lo, hi := s.CI95()
	fmt.Printf("n=%d mean=%.2f sd=%.2f median=%.2f 95%% CI [%.3f, %.3f]\n", s.N, s.Mean, s.SD, s.Median, lo, hi)
	// Output:
	// n=5 mean=0.84 sd=0.17 median=0.80 95% CI [0.693, 0.987]
}

func ExampleAggregate() {
	rec := func(model int, method string, power float64, incomplete bool) *record.Record {
		return &record.Record{
			Format: record.Format, Suite: "table1", Model: model, Method: method, Incomplete: incomplete,
			Metrics:        []record.Metric{{Name: "feature-power", Value: power}},
			RuntimeSeconds: 2 + float64(model),
		}
	}
	groups, err := results.Aggregate([]*record.Record{
		rec(0, "SAGE", 0.8, false), rec(1, "SAGE", 0.6, false), rec(2, "SAGE", 0.2, true),
		rec(0, "TIME", 1, false), rec(1, "TIME", 0.8, false), rec(2, "TIME", 0.9, false),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, g := range groups {
		p, _ := g.Metric("feature-power")
		fmt.Printf("%s: power %.2f (SD %.2f) over %d models, %d incomplete, median runtime %.1f s\n",
			g.Method, p.Mean, p.SD, len(g.Models), len(g.Incomplete), g.Runtime.Median)
	}

	// The paper's Table 1 layout, with the published numbers beside ours.
	display, _, err := results.ComparisonTables(results.PaperTables()[0], groups)
	if err != nil {
		fmt.Println(err)
		return
	}
	display.Notes = nil
	display.Rows = display.Rows[:1]
	display.WriteMarkdown(os.Stdout)
	// Output:
	// TIME: power 0.90 (SD 0.10) over 3 models, 0 incomplete, median runtime 3.0 s
	// SAGE: power 0.70 (SD 0.14) over 2 models, 1 incomplete, median runtime 2.5 s
	// ## Table 1: table1
	//
	// | Method | Feat. power | (paper) | Feat. FDR | (paper) | Timestep power | (paper) | Timestep FDR | (paper) | Runtime (s) | (paper) | Models | (paper) |
	// | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
	// | TIME | 0.900 (0.100) | 0.930 | — | 0.037 | — | 0.923 | — | 0.054 | 3 | 371 | 3 | 100 |
}
