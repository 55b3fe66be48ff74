// Package experiments runs the benchmarks of the TIME paper and sweeps of
// its own: it synthesises problems with known ground truth (package synth),
// explains them with TIME (package explain) and the baselines (package
// baselines), scores every explanation against the truth, and writes one
// record per (problem, method) that package results turns into tables and
// figures.
//
// # Suites
//
// Suites lists the named experiments; each runs at paper scale or, with
// Options.Quick, at a quick scale meant for smoke tests (all four paper
// suites at quick scale take a few minutes on two cores).
//
//   - table1: Tables 1 and S1. 100 classification problems of 1000
//     instances × 10 features × 20 timesteps with 5 relevant features and
//     automatic noise; methods TIME, TIME-n, LIME, SAGE, SAGE-m, SAGE-z,
//     PERM, PERM-f. Quick: 3 problems of 200 instances.
//   - table-s2: Table S2, the same with 30 features (fraction 0.33, so 10
//     relevant). PERM-f is included although the paper omits it: it costs
//     nothing (it filters the PERM run) and shows why the paper dropped it
//     (with 600 cells and P = 50, BH rejects nothing). Quick: 2 problems of
//     200 instances.
//   - testsize-regression and testsize-classification: Fig. 4 and Fig. S1.
//     Per model, one problem of 6400 instances × 30 features × 50 timesteps
//     (10 relevant, automatic noise) is synthesised and calibrated, and TIME
//     analyses its first 100, 200, …, 6400 instances (decision 10). Quick:
//     3 problems of 1600 instances, analysed at 100, …, 1600.
//   - grid: any sweep around the Table 1 problem, e.g.
//     "noise=0,0.5,1;gamma=0.95,0.99" (see GridParams); TIME and TIME-n by
//     default, 20 models (quick: 2, with 200 instances unless swept).
//     Problem parameters change the problem; permutations, gamma and alpha
//     analyse the same problems.
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
// Explanations are scored as in decision 14 and reference-facts §4 (see
// DetectionMetrics and TIMEMetrics): cell scores are taken by magnitude,
// magnitudes below 1e−10 count as zero, and a feature's score is the mean of
// its non-zero cells. Power is recall and FDR is 1 − precision, with
// precision 1 when nothing is selected and recall 1 when nothing is true.
// TopN selects the n = min(#true, #non-zero) highest scores, ties going to
// the lower flat index j·L+t; AllNonZero selects every non-zero score.
// TIME is scored AllNonZero on its cells (an important feature's window, or
// the whole sequence when the window is not significant); TIME-n and every
// baseline TopN. Every record also carries the AllNonZero ("-all")
// variants, and TIME's records the ordering, window-ordering and
// Average_Window metrics.
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
// models. Here SAGE stops after SAGEMaxPermutations sampled permutations
// (SAGE proper QuickSAGEMaxPermutations at quick scale, where its marginal
// background is the first QuickSAGEBackground rows) and its record is marked
// Incomplete; a permutation cap rather than a time cap keeps results
// machine-independent. At quick scale LIME uses QuickLIMESamples samples per
// instance.
//
// # New methods
//
// Any tempora.Explainer can join a suite as an extra Method (see the
// example of Run), and tempora evaluate scores a score matrix produced by
// an outside tool against a problem's truth (EvaluateFile).
package experiments
