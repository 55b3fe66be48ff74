// Package method defines what an explanation method is to tempora, and
// holds building blocks for explainers and for running them. The
// baselines (package baselines) use the building blocks, as a researcher's
// method may; TIME's engine (package explain) does not import this package,
// and is made a Method by package builtins like every built-in method.
//
// # One value per method
//
// A Method is one value: its canonical name ("TIME", "SAGE-m",
// "occlusion"), a one-line description, its typed parameters (Param, with a
// default, an optional quick-scale default, a valid range and a help text,
// each declared once as a Spec whose Get reads it in the constructor) and a
// constructor (New) that turns a Config (seed, worker count, the data and
// the parameters' Values) into a tempora.Explainer. A Table is a validated
// list of methods. The command line, the benchmark runner and the reports
// derive everything they know about a method from its table entry: the
// -method and -methods names (matched case-insensitively, always recorded in
// the canonical spelling), the flags of "tempora explain", the axes of a
// grid sweep, the help texts and the error messages. A method also says how
// the benchmark scores its cell scores (Mode: the top n, or every non-zero
// cell) and whether its explanations carry per-feature test outcomes
// (Tests: p-values, important features, windows and ordering flags, as
// TIME's do) and whether it gives per-instance attributions (Local: its
// explainer is a LocalExplainer, whose attributions "tempora explain
// -attributions" writes and the benchmark scores per instance), so no
// code outside a table ever compares method names.
//
// A method may be made From another: the benchmark then runs the other
// method's explainer once and records both (TIME-n is TIME's explanation
// scored top-n; PERM-f filters PERM's run with Derive).
//
// A researcher's method needs nothing but this package and the root
// package: define an Explainer, wrap it in a Method, and hand it to cli.Main
// (every subcommand then knows it) or to experiments.Options.Extra.
//
// # Building blocks
//
// Parallel runs numbered work items on a fixed number of goroutines and
// reports the error of the lowest failed item, so errors do not depend on
// scheduling; Workers resolves a worker count. Both are the module's one
// worker pool (internal/pool), exported for methods outside the module. FeatureScores turns an
// explanation's cell scores into its feature scores by the benchmark's rule
// (the mean |score| of a feature's non-zero cells, docs/decisions.md,
// decision 14). Meter wraps a model and counts its calls and instance
// evaluations; Measure runs an explainer through a Meter and a clock and
// fills the explanation's accounting from them, so that no explainer has to
// count for itself; MeasureLocal does the same for a LocalExplainer and
// checks its attributions (CheckAttributions); CheckExplanation checks an
// explanation's shape and values.
package method
