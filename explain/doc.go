// Package explain implements TIME (Temporal Importance Model Explanation),
// the permutation-based explainer of temporal black-box models of Sood and
// Craven, and the permutation-test Engine it is built on.
//
// TIME asks, for a model f, data X (M instances × D features × L
// timesteps), targets y and a loss ℓ: which features does the model rely
// on, in which window of time, and does the order of the values matter? It
// answers with permutation tests organised in a hierarchy and controls the
// false discovery rate with the Benjamini–Hochberg procedure in every
// family of tests.
//
// # Permutation tests
//
// The baseline is the mean loss on the unperturbed data,
//
//	L̄ = (1/M) Σ_i ℓ(y_i, f(x_i)).
//
// A test perturbs a block (a feature, or a group of features tested
// jointly, over a window [a, b] of timesteps) P times (a sequential test
// may stop earlier, see below). An across-instance draw picks one uniform
// random permutation π of the M instances and replaces the block of every
// instance i by the block of instance π(i): the
// same π for every timestep of the window and every feature of a group, so
// the joint distribution within the block is kept and only its link with
// the rest of the instance and with y is broken. π may keep some instances
// in place, as in the usual permutation test. Draw k gives the mean
// perturbed loss L̄_k. The importance score and the empirical p-value
// (Ojala and Garriga) are
//
//	I = (1/P) Σ_k L̄_k − L̄,
//	p = (1 + #{k : L̄_k ≤ L̄ + 1e−10}) / (1 + P),
//
// so p ≥ 1/(P+1) (1/51 for the paper's P = 50), and a perturbation that
// leaves the predictions unchanged gives p = 1. The slack 1e−10 absorbs
// rounding.
//
// An ordering (within-window) draw picks one uniform random permutation ρ
// of the window's w timesteps and applies it to every instance and every
// member: x_{j,a+k} ← x_{j,a+ρ(k)}. When P ≥ w! − 1 the test is exact: it
// uses each of the w! − 1 non-identity orderings once (in lexicographic
// order) instead of sampling, so the p-value's floor is 1/w!: 1/2, 1/6 and
// 1/24 for w = 2, 3, 4, and a window of one timestep has no ordering to
// test (p = 1). At α = 0.1 the ordering of a window shorter than 4
// timesteps can therefore never be significant; Explain warns when that
// happens. (Across-instance tests are enumerated in the same way when
// M! − 1 ≤ P, i.e. for M ≤ 4 at P = 50.)
//
// Every draw comes from its own random stream, derived from the run seed,
// the node (feature index or group name), the test kind (overall,
// ordering, window, window-ordering, or a search probe's prefix length or
// suffix start) and the draw number; all sums are taken in a fixed order.
// Results are therefore identical for any number of workers.
//
// # Stopping rules and the choice of tests
//
// A test stops as its stopping rule (Stop) says; each rule is one type,
// with its maths in its file: Fixed (the paper's: every one of the P
// draws), BesagClifford (Besag and Clifford's sequential p-value: stop
// after h hits, p = h/k), Anytime (an anytime-valid p-value; the tests of
// a Family stop once their Benjamini–Hochberg decision is settled, with
// exactly the decisions BH would make if every test ran to its cap;
// docs/decisions.md, decision 16), Probe and Looks (score-only rules of
// the window search). Every p-value rule gives valid p-values (P(p ≤ u) ≤
// u under the null, tested statistically), so BH keeps its guarantee
// whichever a family uses.
//
// TIME.Tests chooses the rules of a whole run (tests.go):
// BesagCliffordTests, the default, stops every p-value test by
// BesagClifford, with h = min(10, ⌊α·P⌋ + 1) (SequentialStop: up to P =
// 99 at α = 0.1 it rejects exactly when the fixed test with the same
// draws does, so it only saves draws), the window-search probes by Probe
// and its gap checks by Looks; AnytimeTests stops the tests of every
// family of features by Anytime instead, fewer draws for less power
// (docs/decisions.md, decision 25); FixedTests is the paper's procedure,
// every test and probe making
// exactly TIME.Permutations draws (DefaultPermutations, 50, by default).
//
// The caps (caps.go). The nominal cap of a family of m features is
// TIME.Permutations or, by default, MinPermutations(m, α) = ⌈m/α⌉ − 1, the
// smallest P with 1/(P + 1) ≤ α/m, so that a single test of the family can
// pass BH: 99 for 10 features at α = 0.1. A Besag–Clifford test makes at
// most that many draws; an anytime test, whose p-value floor is 4/(3n +
// 4) for n draws, at most AnytimeCap(P) = ⌊4P/3⌋ + 1 for the same smallest
// p-value: 133 for 10 features at α = 0.1 (AnytimePermutations), and 67
// when TIME.Permutations is 50. The families below an important feature
// have caps chosen for power, so that a true window or ordering still
// passes with a few draws that tie with the baseline, and stop by Besag
// and Clifford's rule: by default PowerHits times the nominal cap for the
// family {ordering, window 1, …, window k} (39 for one window at α =
// 0.1), OrderingHits times for the window orderings (99 for one window at
// α = 0.1; docs/decisions.md, decision 25); AnytimeTests, the cheaper
// choice, gives them smaller caps. An ordering
// test of a window short enough that its exact test could just reach α/m
// (4 timesteps at α/m ≥ 1/24) is enumerated exactly even beyond the cap,
// since a sampled test of few draws would too often draw the identity
// ordering, which is always a hit. Explain warns about any family (the
// top family, the members of each group of a hierarchy, the pairs, the
// window orderings) whose cap keeps 1/(P+1) above α/m: BH can then reject
// none of its tests unless several reach the smallest p-value together,
// the "silent floor" of fixed P = 50 with 10 features (1/51 > 0.01).
//
// Draws are evaluated in batches for throughput: each batch holds, for
// every unfinished test, as many next draws as its stopping rule may need
// (at most 256), computed from the test's own draws, so results and model
// calls are the same for any number of workers. Draws evaluated past a
// stopping point are counted in the accounting but never used.
// Accounting.Draws reports the draws of each kind of test and what running
// every test to its cap would have cost.
//
// # Window search
//
// For an important node with overall score I_full, let θ = (1−γ)/2 and call
// a range unimportant when |I(range)| ≤ θ·|I_full|. The window search
// finds, by bisection, the longest unimportant prefix [0, a−1] with a ≤
// L−1, then the longest unimportant suffix [b+1, L−1] with b ≥ a, and
// reports the window [a, b], which always has at least one timestep. Each
// probe is an across-instance test (score only) of the node over the
// prefix or suffix. The bisection assumes monotonicity: a prefix (suffix)
// that contains an important timestep is important, and so is every
// longer one; it makes about ⌈log₂ L⌉ + ⌈log₂(L−a)⌉ probes, which Explain
// reports in Accounting.WindowProbes. The window test is then a fresh
// across-instance test of the node over [a, b], giving the window score
// and p-value.
//
// A probe needs only its mean loss, to compare it with the threshold.
// Under the sequential choices of Tests a probe stops as soon as a
// Student-t interval of its score with the coverage of ±2 standard errors
// (95.45%), after at least 2 draws, lies on one side of the threshold
// (Probe); a probe over timesteps the model never reads changes no loss
// and stops after 2 draws. Its cap is TIME.Permutations, or
// DefaultPermutations by default. On 20 problems of the paper's Table 1
// this used 3010 of the 43,600 draws that probes run to their caps take
// and found all 108 windows unchanged (TestProbeCut repeats the check on
// designed models); FixedTests runs P draws per probe as the paper does.
//
// # Hierarchy of tests
//
// The top family is the D features (or the top-level groups of a user's
// Hierarchy); its overall p-values are adjusted with BH at level α. The
// members of a rejected group (its own features, each alone, and its
// subgroups) form the next family, tested the same way; members of a group
// that is not rejected are not tested. For every rejected node the family
// {whole-sequence ordering, window 1, …, window k} is tested with BH at α
// (k = 1, the paper's pair, unless TIME.Windows allows the window to be
// split at gaps, split.go), and the orderings of the significant windows form the
// next family, under BH at α (one window: p ≤ α). This is the "test each
// family at level α" scheme of Yekutieli's hierarchical FDR control, as
// in the reference implementation, without a further correction for the
// depth of the tree.
//
// The tests of a node's window and orderings reuse the data that selected
// the node, so they are conditional on its selection and are not
// independent evidence that the node matters: under the global null
// (package tests, 3000 trials per task and mode) the window of a falsely
// flagged feature is significant in 64–85% of cases, because the window
// test re-tests nearly the same hypothesis on the same data. Each
// family's FDR is at most α; the FDR of the whole tree of discoveries is
// not bounded by α itself (Yekutieli's bound for this scheme is a
// multiple of α), except under the complete null, where every discovery
// sits below a false feature discovery (docs/decisions.md, decision 18).
//
// # Cells
//
// The D × L cell scores of an Explanation are each significant window's
// score on that window of an important feature, and 0 elsewhere; an
// important feature without a significant window claims no timesteps, or,
// under PaperRule, gets its overall score on every timestep.
//
// # Cost
//
// Every draw evaluates the model on all M instances, on a per-worker copy
// of the data in which only the permuted block is rewritten and then
// restored (tempora.PermuteInstances, PermuteTimesteps, RestoreBlock); for
// a model that holds the data (a resident.Model given to ExplainHeld, a
// model process), a draw of complete data is written straight from the
// data into the block the model applies to its own copy (tempora.PermuteInstancesBlock,
// PermuteTimestepsBlock; docs/decisions.md, decision 23). A
// fixed run makes about P·(D + R·(2⌈log₂ L⌉ + 3)) model calls for R
// important features. A sequential run makes about P_max·R + h(1 +
// ln(P_max/h))·(D − R) for the top family (a null feature's p-value being
// uniform), a few draws per probe and up to the power caps per test
// below an important feature; on 100 problems of the paper's Table 1 that
// is fewer than half the model calls of the paper's configuration, with
// at least its power within one standard error (experiments'
// TestDefaultAgainstPaper; docs/decisions.md, decision 25). Memory does
// not depend on P: batches hold at most 256 draws per test, and each worker holds a copy of the data, or, for data
// of more than 2²¹ values, one chunk of instances that it predicts at a
// time (see Engine).
//
// The instances of one model call follow one rule (batch.go): the memory
// budget's chunk or the model's request limit, at most TIME.Batch, which
// BatchAuto chooses by timing the model at a few sizes. TIME.Estimates
// receives the run's estimates of its cost (estimate.go), and a budget
// (TIME.MaxCalls, MaxTime; budget.go) stops a run with the decisions
// settled before it, the rest marked undecided (stopped.go).
//
// # Missing values
//
// The data may hold missing values (NaN), which reach the model as NaN:
// tempora never imputes. Sequences of different lengths are the cells
// outside each instance's support, in the dataset's aligned time
// (tempora.Observation). An across-instance draw then permutes instances
// only among those whose supports cover the test's window alike
// (AcrossInstances' LengthRule, default Strata; lengths.go), an ordering
// draw permutes each series' values among its observed positions only
// (tempora.PermuteObserved), a block with nothing observed makes no draw,
// and windows lie where their feature is observed (docs/decisions.md,
// decision 19; missing.go). On complete data the dense code paths run
// unchanged.
//
// # Models with several outputs
//
// For data whose model returns K outputs per instance (tempora.Outputs:
// class probabilities, horizons, output steps), every draw gives every
// output's loss (tempora.Scorer), and a Test scores one of them
// (Test.Output). TIME tests the features on the whole model's loss, then
// the family of the K outputs of every important node (on each output's
// loss, reusing the node's draws), then windows and orderings on the
// whole model and on every (node, output) its family rejected, each
// window also in lag coordinates for outputs anchored on the time axis,
// and, for outputs anchored inside the sequence, whether they read the
// node's inputs after their own step (the causal check). The results per
// output are in Explanation.Outputs (outputs.go; docs/decisions.md,
// decision 24).
//
// # Engine
//
// Engine exposes the permutation-test machinery so that other explainers,
// such as the PERM baseline, use the same implementation: Run runs a
// batch of independent tests, RunFamilies several BH families (Family),
// in parallel, results in input order. A Test names its block, its
// Perturbation (AcrossInstances, WithinWindow or Conditional, each one
// type that owns its draws on complete and on irregular data), its cap
// and its Stop; the Engine schedules and counts the draws and knows no
// perturbation or rule by name.
//
// # References
//
//   - J. Besag and P. Clifford. Sequential Monte Carlo p-values.
//     Biometrika 78(2):301–304, 1991.
//   - A. Sood and M. Craven. Feature importance explanations for temporal
//     black-box models. arXiv:2102.11934, 2021 (AAAI 2022).
//   - Y. Benjamini and Y. Hochberg. Controlling the false discovery rate: a
//     practical and powerful approach to multiple testing. J. R. Stat. Soc.
//     B 57(1):289–300, 1995.
//   - D. Yekutieli. Hierarchical false discovery rate-controlling
//     methodology. JASA 103(481):309–316, 2008.
//   - M. Ojala and G. C. Garriga. Permutation tests for studying classifier
//     performance. JMLR 11:1833–1863, 2010.
package explain
