// Package synth generates synthetic temporal problems with known ground
// truth: Markov-chain feature sequences, an additive black-box model over
// feature windows, and the features, windows and orderings the model uses.
// It reimplements the generator of the TIME paper's simulations (Sood and
// Craven, 2021), following the authors' reference code where it differs
// from the paper's text.
//
// # Data
//
// A problem has M instances of D features over L timesteps (an M × D × L
// tempora.Tensor). Every feature j has a window [l_j, r_j] (0-based,
// inclusive) with r_j uniform on {⌊L/2⌋, …, L−1} and l_j uniform on
// {0, …, r_j−1}, so windows have at least two timesteps and end in the
// second half of the sequence. A feature is numeric (probability 0.5),
// categorical (0.25) or binary (0.25); under the Max aggregator a feature is
// categorical (0.25, with 4 or 5 states) or numeric (0.75).
//
// Numeric and categorical features, and half of the binary ones, are Markov
// chains with separate in-window and out-of-window chains over the same
// states; each transition row is a vector of uniforms normalised to sum 1.
// The chain starts in a uniform state and is reset to a uniform state at the
// window's first timestep and just after its last, so it never transitions
// across a window border. A categorical or binary chain emits its state index
// (3–5 and 2 states); a numeric chain (2–5 states) emits Normal(μ_s, σ_s)
// with μ_s ~ U(0.1, 1) and σ_s ~ U(0.1, 1)·0.05. Half of the numeric features
// are trends: x_t = x_init + Σ_{k≤t} s_k with x_init ~ U(−1, 1), the state
// means being +μ, −μ, 0 and U(−1, 1) for states 0, 1, 2 and ≥ 3 (at most 4
// states). The other binary features are Bernoulli processes with
// P(1) = p ~ U(0.01, 0.99) outside the window and 1 − p inside. With
// Config.WindowIndependent every feature is one stationary process instead.
//
// # Model
//
// Each feature has a function
//
//	g_j(x) = (h_j(a_j(x_{j, l_j..r_j})) − m_j) / s_j
//
// where the aggregator a_j is the maximum, the mean, the monotonic weighted
// sum Σ_k c_k v_k with c = linspace(1, 2, w), or the same with the weights
// shuffled; the nonlinearity h_j is the identity, the absolute value or the
// square; and m_j, s_j are the mean and population SD of h_j(a_j(·)) over
// the generated instances (s_j = 1 if below 1e−10). A candidate feature whose
// function has variance ≤ 1e−10 over 100 sampled sequences is redrawn.
// R = max(1, round(D·FractionRelevant)) features, chosen by a shuffle, are
// relevant; every feature has a coefficient α_j ~ U(−1, 1). The model is
//
//	F_β(x) = Σ_{j relevant} α_j g_j(x_j) + β Σ_{j irrelevant} α_j g_j(x_j)
//
// A regression model predicts F_β with targets F_0; a classification model
// predicts sigmoid(F_β − τ), τ the median of F_0 over the generated
// instances, with labels 1{F_0 > τ}. The noise multiplier β is explicit or
// automatic (Noise): for regression β = sqrt(0.1·SST/S1), which makes R²
// exactly 0.9 on the generated instances; for classification the β on the
// grid 0.01, …, 0.99 whose accuracy is closest to 0.9.
//
// # Ground truth
//
// A relevant feature is important; the timesteps of its window are
// important; its window ordering is important when its aggregator is a
// weighted sum; its whole-sequence ordering is important when its window is
// shorter than the sequence or its window ordering is important. Its effect size
// is 2α²·Var(g) for regression and 1 for classification. Irrelevant features
// have no importance of any kind.
//
// # Irregular worlds
//
// Config.Irregular makes a world of sequences of different lengths and
// missing values (NaN): lengths uniform on {⌈L/LengthSpread⌉, …, L},
// start- or end-aligned, cells missing completely at random or, under
// MNAR, with a chance logistic in their standardised value; windows lie
// where every sequence exists (unless FullWindows), and the model
// aggregates over observed values only (Model.ObservedValues), which on
// complete data is the complete model to the bit. Every generated dataset
// is accepted by tempora.Dataset.Observe, and the truth stays exact
// (irregular.go).
//
// # Worlds with several outputs
//
// GenerateOutputs makes problems whose model returns several outputs per
// instance (tempora.Outputs), each with the exact truth of which features
// each output's loss depends on and over which windows, in absolute time
// and in lags from the output's anchor (outputs.go): a nested dichotomy
// over K classes, whose split nodes each read one feature, so that class
// c depends exactly on the features of its path (outputs_classes.go); K
// forecast horizons reading features at different lags, some features at
// every horizon and some at a few (outputs_horizons.go); and a causal
// sequence-to-sequence model reading fixed lag windows, with a sparse
// feature carried forward by the model and a variant that reads one step
// ahead (outputs_steps.go). The data are standard normal; a black box may
// read more than its targets do (noise weights, null outputs), which
// leaves the truth unchanged and makes its nulls non-trivial. Such
// problems are saved and loaded with OutputsProblem.Save and LoadOutputs
// (outputs_io.go), in the files of a one-output problem, truth.json
// gaining an "outputs" member.
//
// # Reproducibility
//
// Generate(cfg, seed) is deterministic: the feature-level choices come from
// one master stream, everything inside a feature (window, function, process
// and data) from a private stream per candidate, and the model from its own
// stream, all derived with tempora.NewRand. The model's structure and the
// first n instances do not depend on M. Problem.Save writes byte-identical
// files for the same problem; Load validates and re-reads them.
//
// # References
//
//   - A. Sood and M. Craven. Feature importance explanations for temporal
//     black-box models. arXiv:2102.11934, 2021 (Section 4.1 and supplement
//     S2: the simulation design).
//   - The authors' generator synmod (github.com/cloudbopper/synmod) and
//     analysis code anamod (github.com/cloudbopper/anamod), branch
//     "baselines": the reference behaviour followed here.
package synth
