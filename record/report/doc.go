// Package report declares what the report of a suite shows beyond what
// every suite gets. Package results draws, for any records, a table of every
// setting and method per suite, a sweep figure when a suite's records vary
// one numeric parameter, the threshold-free metrics of settings with
// per-instance metrics and heat maps; a Suite adds the paper's tables its
// settings fill and figures of its own, stated as data (which parameter is
// swept, which settings and methods make each line, which metrics each
// column shows), so that results never names a suite or a method.
//
// Package experiments declares one Suite beside each of its suites
// (experiments.Suite.Report) and package results draws it
// (results.WriteReport). The declarations live here, below record, because
// both packages read records and neither may import the other
// (docs/decisions.md, "Layout and import rules").
package report
