// Package builtins holds tempora's built-in explanation methods as
// method.Method values: TIME and TIME-n (one run), LIME, SAGE, SAGE-m,
// SAGE-z, and PERM and PERM-f (one run), in the order of the paper's
// tables, then the temporal peers OCC (sliding-window occlusion) and
// TimeSHAP (KernelSHAP over temporal coalitions). The command line ("tempora explain", "tempora methods") and the
// benchmark (package experiments) take their method table from Methods.
//
// Each method is one file (time.go, lime.go, sage.go, perm.go,
// occlusion.go, timeshap.go) that
// declares its parameters once, as typed method.Spec values: the table's
// parameters, flags, grid axes, help texts and records are derived from
// those declarations, and the constructor reads its values through them.
// A new built-in method is one file and one entry of Methods. Every
// baseline takes the output parameter (output.go): the one output of a
// model with several that it explains, or the whole model; TIME explains
// the whole model and every output at once.
//
// LIME and SAGE are configured by default as in the paper
// (docs/decisions.md, decisions 11 and 12) apart from SAGE's permutation
// cap (baselines.SAGEMaxPermutations). TIME and PERM are not: by default
// their permutation tests are sequential (Besag and Clifford's), with caps
// chosen per family (docs/decisions.md, decisions 5, 13 and 25), and TIME
// searches up to three windows per feature with the verified window rule
// (docs/decisions.md, decisions 18 and 25); the paper's fixed P = 50, window rule and single window are
// parameters, which the benchmark's paper suites set. At quick scale LIME
// and SAGE have smaller budgets (QuickLIMESamples,
// QuickSAGEMaxPermutations, QuickSAGEBackground).
package builtins

import (
	"github.com/tempora-dev/tempora/baselines"
	"github.com/tempora-dev/tempora/method"
)

// Methods returns the built-in methods: those of the paper's tables in
// their order (TIME and TIME-n from one run, LIME, SAGE, SAGE-m, SAGE-z,
// PERM and PERM-f from one run), then OCC and TimeSHAP. Each call returns
// fresh values.
func Methods() []method.Method {
	timeM, permM := timeMethod(), permMethod()
	return []method.Method{
		timeM,
		timeNMethod(&timeM),
		limeMethod(),
		sageMethod(baselines.Marginal),
		sageMethod(baselines.Mean),
		sageMethod(baselines.Zero),
		permM,
		permFMethod(&permM),
		occMethod(),
		timeSHAPMethod(),
	}
}
