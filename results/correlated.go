package results

import (
	"fmt"
	"slices"

	"github.com/tempora-dev/tempora/record"
)

// CorrelatedSuite is the suite of correlated features (experiments,
// suite_correlated.go), whose settings are rho / box / truth / conditional.
const CorrelatedSuite = "correlated"

// correlatedBaselines are the baselines CorrelatedFigure draws.
var correlatedBaselines = []string{"PERM-f", "SAGE-m"}

// CorrelatedFigure draws, for the correlated suite's black box box ("A" or
// "spread"), the feature power and FDR against ρ of TIME's marginal and
// conditional tests ("TIME marginal", "TIME conditional") and of the
// baselines PERM-f and SAGE-m (drawn from the marginal settings, since they
// ignore the conditional parameter), scored against the model-centric
// truth (left) and the data-centric one (right). TIME-n and PERM, in the
// suite's table, are left out of the figure for legibility. It returns an
// error when the groups hold no such settings.
func CorrelatedFigure(groups []Group, box string) (*Figure, error) {
	var derived []Group
	index := map[string]int{} // method|rho -> derived group
	for _, g := range groups {
		if g.Suite != CorrelatedSuite {
			continue
		}
		p := map[string]string{}
		for _, q := range g.Params {
			p[q.Key] = q.Value
		}
		if p["box"] != box || p["rho"] == "" {
			continue
		}
		name := g.Method
		switch {
		case g.Method == "TIME":
			name += map[string]string{"false": " marginal", "true": " conditional"}[p["conditional"]]
		case p["conditional"] == "true" || !slices.Contains(correlatedBaselines, g.Method):
			continue
		}
		key := name + "|" + p["rho"]
		i, ok := index[key]
		if !ok {
			i = len(derived)
			index[key] = i
			derived = append(derived, Group{Suite: g.Suite, Params: []record.Param{{Key: "rho", Value: p["rho"]}}, Method: name})
		}
		for _, m := range g.Metrics {
			if m.Name == "feature-power" || m.Name == "feature-fdr" {
				derived[i].Metrics = append(derived[i].Metrics, MetricSummary{Name: p["truth"] + "-" + m.Name, Summary: m.Summary})
			}
		}
	}
	if len(derived) == 0 {
		return nil, fmt.Errorf("results: no %s settings with box=%s", CorrelatedSuite, box)
	}
	var methods []string
	for _, m := range append([]string{"TIME marginal", "TIME conditional"}, correlatedBaselines...) {
		if slices.ContainsFunc(derived, func(g Group) bool { return g.Method == m }) {
			methods = append(methods, m)
		}
	}
	metrics := []SweepMetric{
		{Title: "model-centric truth (read)", Power: "model-feature-power", FDR: "model-feature-fdr"},
		{Title: "data-centric truth (informative)", Power: "data-feature-power", FDR: "data-feature-fdr"},
	}
	return SweepFigure(derived, CorrelatedSuite, methods, "rho", metrics)
}
