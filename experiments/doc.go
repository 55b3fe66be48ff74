// Package experiments runs the benchmarks of the TIME paper and sweeps of
// its own: it synthesises problems with known ground truth (package synth),
// explains them with TIME (package explain) and the baselines (package
// baselines), scores every explanation against the truth, and writes one
// record per (problem, method) that package results turns into tables and
// figures.
//
// # Suites
//
// Suites lists the named experiments, each with its description, default
// models and methods and expected run time ("tempora run -list" prints
// them; README.md's table is generated from them): the paper's Tables 1
// and S1 (table1) and S2 (table-s2), its test-set-size Figures 4 and S1
// (testsize-regression, testsize-classification: per model one problem of
// 6400 instances is synthesised and calibrated, and its first 100, …, 6400
// instances are analysed, docs/decisions.md, decision 10), and grid, any
// sweep around the Table 1 problem over problem parameters (ProblemParams)
// and method parameters (e.g. "noise=0,0.5,1;gamma=0.95,0.99"; a method
// parameter analyses the same problems with every method run that has it),
// and local, per-instance attributions against per-instance truth on worlds
// whose features are all window maxima (Setting.Local: every method gets
// the per-instance metrics, a global one through its cell scores).
// Each suite runs at paper scale or, with Options.Quick, at a quick scale
// meant for smoke tests, where methods also take their parameters'
// quick-scale defaults (method.Param.Quick).
//
// # Methods
//
// The methods are a method.Table (Table): package builtins' methods (TIME,
// TIME-n, LIME, SAGE, SAGE-m, SAGE-z, PERM, PERM-f) followed by
// Options.Extra, matched without
// regard to case and recorded under their canonical names. A method made
// From another shares its run (TIME-n is TIME scored top-n, PERM-f filters
// PERM). Every explainer runs through Attribute, which, as method.Measure,
// counts model calls and instance evaluations and times the run, whatever
// the explainer reports itself, and keeps the per-instance attributions of
// the explainers that have them (OCC, TimeSHAP, LIME) for the per-instance
// metrics.
//
// # Seeds
//
// Every stream is derived with tempora.DeriveSeed from the run seed
// (Options.Seed, default DefaultSeed = 100000): a problem from (seed,
// suite, "problem", problem setting, "model", k), an explainer from (seed,
// suite, "explain", setting, "model", k, "method", run name). So every
// method sees the same problems, TIME and TIME-n (and PERM and PERM-f) are
// one run, and adding models, methods or settings, sharding, or changing
// the number of workers never changes an existing record (apart from its
// runtime). The reference counted model seeds up from 100000; the numbers
// here differ, and agreement with the paper is statistical.
//
// # Metrics
//
// Explanations are scored by package metrics (docs/decisions.md, decision
// 14) in the mode of their method (method.Method.Mode): TIME AllNonZero on
// its cells (an important feature's window, or the whole sequence when the
// window is not significant), TIME-n and every baseline TopN. Every record
// also carries the AllNonZero ("-all") variants, and the records of a
// method with tests (method.Method.Tests: TIME, TIME-n) the ordering,
// window-ordering and Average_Window metrics. Score makes a record from an
// explanation and the truth.
//
// # Runs, resumption and shards
//
// Run enumerates a suite's items — one method run on one problem — in a
// fixed order and writes each item's records atomically below
// Out/records. Rerunning resumes; an interrupted run loses at most the item
// in flight. With Options.Shard = {I, N} a run does the items k with
// k mod N = I; Merge combines shard directories and checks completeness,
// and Export writes HTCondor or Slurm job files for a sharded run.
//
// The runner parallelises inside each explainer (Options.Workers), not
// across items, so a run's memory is one problem and its runtimes are those
// of one explainer on the whole machine, as the paper measured them.
//
// # Budgets
//
// The paper ran SAGE for up to 72 hours per model and dropped unconverged
// models. Here SAGE stops after baselines.SAGEMaxPermutations sampled
// permutations (SAGE proper builtins.QuickSAGEMaxPermutations at quick
// scale, where its marginal background is the first
// builtins.QuickSAGEBackground rows) and its record is marked Incomplete; a
// permutation cap rather than a time cap keeps results machine-independent.
// At quick scale LIME uses builtins.QuickLIMESamples samples per instance.
//
// # New methods and outside tools
//
// Any tempora.Explainer can join a suite as an extra method.Method (see
// the example of Run). For a tool outside Go, WriteProblems writes a
// suite's problems with an index, and EvaluateProblems turns the tool's
// score files into records of the same problems, which Merge and the
// reports take beside a run; EvaluateFile scores one file.
package experiments
