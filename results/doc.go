// Package results renders records (package record, docs/records.md) into
// aggregates, tables and figures. It reads saved records only, never the
// explainers or the data generator, so a report can be rebuilt from an old
// run, and the records of any method, built-in, added with cli.Main or
// scored from an outside tool's files, get the same treatment: rows and
// panels come from the methods present, and the paper's numbers are an
// overlay where the paper has a row.
//
// # Aggregation
//
// Aggregate groups records by (suite, params, method) and summarises every
// metric over models: mean, sample standard deviation (divisor n−1), n,
// median, and the normal-approximation 95% confidence interval of the mean,
//
//	mean ± 1.96·SD/√n.
//
// Runtime is summarised the same way; tables show its median, as the paper
// does. Records whose method stopped on its budget (record.Record.Incomplete,
// e.g. SAGE without convergence) are excluded from their group and counted.
// Groups are ordered by suite, then parameters (numbers numerically), then
// method: the paper's row order (MethodOrder), then the other methods in
// lexical order. Records of one (suite, setting, model) must share their
// problem seed: records of different problems are never averaged together.
//
// # Tables
//
// ComparisonTables lays out one setting like the paper's Table 1, Table S1
// or Table S2 (PaperTables): a row per method with records (the table's
// methods of the paper, then every method the paper never ran), with the
// published numbers beside ours where there are any; GenericTables lays out
// any suite, one row per setting and method with every metric. A Table is
// written as markdown or CSV.
//
// # Figures
//
// SweepFigure draws the power and FDR of the given methods against a swept
// parameter with 95% confidence bands and a dotted line at the FDR level
// α = 0.1, like the paper's Figure 4 (regression) and Figure S1
// (classification) for the test-set size. HeatmapFigure draws the ground
// truth and the given methods' cell scores for one model side by side, like
// the paper's Figure 3 (TIME and SAGE), with hatching on windows whose
// ordering matters. DeclaredSweep and DeclaredBars draw the figures a
// suite declares (package record/report): lines against a swept parameter
// and groups of bars, each selected by method and setting parameters.
// Figures are encoded as PNG or SVG with gonum/plot.
//
// results names no suite and no method: what a suite's report shows beyond
// what every suite gets (the paper's tables its settings fill, its own
// figures) is the suite's declaration (report.Suite), which package
// experiments states beside the suite and "tempora report" passes to
// WriteReport. The paper's published numbers (paper.go) are the only
// method names here, as data.
//
// # Reports
//
// WriteReport writes every table and figure a set of records and their
// suites' declarations support, plus an index.md linking them, into a
// directory; `tempora report` calls it.
//
// # References
//
//   - A. Sood and M. Craven. Feature importance explanations for temporal
//     black-box models. arXiv:2102.11934, 2021 (Tables 1, S1, S2; Figures
//     3, 4, S1).
package results
