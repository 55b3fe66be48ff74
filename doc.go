// Package tempora holds the shared vocabulary of the tempora suite, which
// explains temporal black-box models and benchmarks explanation methods.
//
// # Data, models and losses
//
// Data is a dense M × D × L Tensor (instances × features × timesteps, stored
// row-major so that element (i, j, t) is Data[(i*D+j)*L+t]). A Dataset adds
// one target per instance, the Task (regression or binary classification)
// and optional feature names. A Model is anything that predicts a batch of
// instances into a caller-given slice; a Loss turns targets and predictions
// into per-instance losses (Quadratic for regression, BinaryCrossEntropy with
// probabilities clipped to [1e-12, 1-1e-12] for classification).
//
// # Explainers and explanations
//
// An Explainer (TIME in package explain; LIME, SAGE, PERM and their variants
// in package baselines) analyses a Model on a Dataset and returns an
// Explanation: a D × L matrix of cell scores, per-feature results
// (importance scores, p-values, windows, ordering flags where the method
// computes them) and the accounting of model calls, instance evaluations and
// runtime.
//
// # Permutation without copies
//
// Permutation tests rewrite one block (some features over a window of
// timesteps) of a per-worker copy of the data with PermuteInstances or
// PermuteTimesteps, evaluate the model, and undo the change with
// RestoreBlock, so no test copies a whole tensor per permutation.
//
// # Randomness
//
// All randomness comes from math/rand/v2 generators created by NewRand from
// a run seed and a stream key (DeriveSeed), so results do not depend on the
// number of workers or on scheduling.
//
// # Pipeline
//
// Package synth generates Markov-chain temporal data and additive models with
// known ground truth; explain and baselines explain models without seeing
// that truth; package method makes any explainer a method of the benchmark
// (name, typed parameters, constructor) and measures its cost;
// experiments joins the two, scores explanations (package metrics) and
// writes records (package record); results renders tables and plots from
// saved records; package cli is the command line (cmd/tempora calls
// cli.Main, and so can a program that adds its own methods).
//
// # References
//
//   - A. Sood and M. Craven. Feature importance explanations for temporal
//     black-box models. AAAI 2022; arXiv:2102.11934.
//   - Y. Benjamini and Y. Hochberg. Controlling the false discovery rate.
//     J. R. Stat. Soc. B 57(1), 1995.
//   - D. Yekutieli. Hierarchical false discovery rate-controlling
//     methodology. JASA 103(481), 2008.
//   - L. Breiman. Random forests. Machine Learning 45, 2001.
//   - A. Fisher, C. Rudin and F. Dominici. All models are wrong, but many are
//     useful. JMLR 20(177), 2019.
//   - M. T. Ribeiro, S. Singh and C. Guestrin. "Why should I trust you?"
//     KDD 2016 (LIME).
//   - I. Covert, S. Lundberg and S.-I. Lee. Understanding global feature
//     contributions with additive importance measures. NeurIPS 2020 (SAGE).
package tempora
