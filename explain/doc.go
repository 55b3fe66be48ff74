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
// jointly, over a window [a, b] of timesteps) P times. An across-instance
// draw picks one uniform random permutation π of the M instances and
// replaces the block of every instance i by the block of instance π(i): the
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
// so p ≥ 1/(P+1) (1/51 for the default P = 50), and a perturbation that
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
// # Window search
//
// For an important node with overall score I_full, let θ = (1−γ)/2 and call
// a range unimportant when |I(range)| ≤ θ·|I_full|. The window search
// finds, by bisection, the longest unimportant prefix [0, a−1] with a ≤
// L−1, then the longest unimportant suffix [b+1, L−1] with b ≥ a, and
// reports the window [a, b], which always has at least one timestep. Each
// probe is an across-instance test (P permutations, score only) of the
// node over the prefix or suffix. The bisection assumes monotonicity: a
// prefix (suffix) that contains an important timestep is important, and so
// is every longer one; it makes about ⌈log₂ L⌉ + ⌈log₂(L−a)⌉ probes, which
// Explain reports in Accounting.WindowProbes. The window test is then a
// fresh across-instance test of the node over [a, b], giving the window
// score and p-value.
//
// # Hierarchy of tests
//
// The top family is the D features (or the top-level groups of a user's
// Hierarchy); its overall p-values are adjusted with BH at level α. The
// members of a rejected group (its own features, each alone, and its
// subgroups) form the next family, tested the same way; members of a group
// that is not rejected are not tested. For every rejected node the family
// {whole-sequence ordering, window} is tested with BH at α, and if the
// window is significant the window ordering is tested alone (a family of
// one, so BH reduces to p ≤ α). This is the "test each family at level α"
// scheme of Yekutieli's hierarchical FDR control, as in the reference
// implementation, without a further correction for the depth of the tree.
//
// # Cells
//
// The D × L cell scores of an Explanation are the window score on the
// window of an important feature with a significant window, the overall
// score on every timestep of an important feature whose window is not
// significant, and 0 elsewhere.
//
// # Cost
//
// Every draw evaluates the model once on all M instances, on a per-worker
// copy of the data in which only the permuted block is rewritten and then
// restored (tempora.PermuteInstances, PermuteTimesteps, RestoreBlock), so a
// run makes about P·(D + R·(2⌈log₂ L⌉ + 3)) model calls for R important
// features, and needs one copy of the data per worker.
//
// # Engine
//
// Engine exposes the permutation-test machinery (one batch of independent
// tests, run in parallel, results in input order) so that other explainers,
// such as the PERM baseline, use the same implementation.
//
// # References
//
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
