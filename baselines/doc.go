// Package baselines implements the explanation methods the TIME paper
// compares against: LIME, SAGE with marginal, mean and zero imputation
// (SAGE, SAGE-m, SAGE-z), and permutation importance with and without FDR
// filtering (PERM, PERM-f), and two model-agnostic temporal attributions
// the field compares with: sliding-window occlusion (OCC) and KernelSHAP
// over temporal coalitions in the manner of TimeSHAP. Each is a value
// config that satisfies tempora.Explainer. The zero values of LIME and
// SAGE are the configurations the paper ran; PERM's runs sequential tests,
// and PERM with Fixed set is the paper's; those of OCC and TimeSHAP are
// their defining papers' configurations.
//
// # The unrolled table
//
// The baselines are tabular methods. They see an M × D × L data tensor as an
// M × (D·L) table whose column j·L+t is feature j at timestep t, which is
// exactly how tempora.Tensor stores one instance (Tensor.Instance), so no
// reshaping is needed. Each method returns a D × L matrix of cell scores
// (Explanation.Cells, entry j·L+t), a per-feature summary in
// Explanation.Features[j].Score (the mean |score| over the feature's
// non-zero cells, |score| ≥ method.NearZero), and the accounting of model
// calls, instance evaluations and runtime.
//
// # Methods
//
// LIME fits, for each explained instance, a weighted ridge regression of the
// model's predictions (the probability of class 1 for classification) on
// Gaussian samples drawn around the training mean with the training SD; a
// cell's global score is the mean |local weight| over the explained
// instances (or SP-LIME's √Σ|weight|). LIME's samples do not depend on the
// instance, so it measures the model's global linear trend around the mean
// rather than local behaviour; that is how the paper ran it.
// Its cost is the surrogate's Gram matrix, samples·(D·L)²/2
// multiply-adds per instance, which gramAdd computes with AVX register
// tiles on amd64 (gram_amd64.s), bit for bit as gonum's Dsyrk would and
// with a pure-Go loop elsewhere (gram.go).
//
// SAGE is the permutation estimator of Shapley additive global importance:
// rows sampled with replacement, one random permutation of the columns per
// row, losses along the coalition walk, Welford statistics, and a
// convergence rule on the ratio of the largest standard error to the range
// of the values. Marginal imputation averages predictions over a background
// (the first 128 rows) before the loss; SAGE-m and SAGE-z impute column
// means and zeros. A run can be capped by permutations or wall time; a
// capped run is marked Incomplete and warns.
//
// PERM runs one across-instance permutation test per cell (sequential by
// default, the paper's P = 50 with Fixed) with the permutation-test engine
// of package explain, and scores each cell by its effect size, the mean
// loss increase. PERM-f keeps only the cells that are significant under
// Benjamini–Hochberg at Alpha (DefaultPERMAlpha) over all D·L cells; the
// p-values are in PermResult.
//
// Occlusion replaces a window of one feature (width and stride in
// timesteps) by a baseline (zero, the cell's mean or the feature's mean) in
// every instance and scores each cell by the mean |change of the model's
// output| over the windows covering it; it needs no targets. TimeSHAP
// explains each of the first instances by KernelSHAP: the most recent
// timesteps' cells (or events, or features) are players of their own, the
// older timesteps one pruned player, absent players take a baseline, and a
// cell's global score is the mean |attribution| over the explained
// instances. Both also return per-instance attributions (Attribute).
//
// # Models with several outputs
//
// For a model with several outputs (tempora.Outputs: classes, horizons,
// output steps) every method explains either one chosen output or the
// whole model, as its Output field says (explain.OutputOf(k), or
// explain.WholeModel, the zero value; ParseOutput reads the output
// parameter of the command line, an output's index or name). On one
// output, SAGE and PERM score that output's loss (tempora.Scorer) and
// LIME, OCC and TimeSHAP explain its prediction (a class's probability);
// the explanation's Output names it. On the whole model, SAGE and PERM
// score the whole model's loss (the mean of the outputs' losses, or for
// classes the categorical cross-entropy), and LIME, OCC and TimeSHAP
// explain every output, their cells the mean over the outputs of each
// output's cells. Either way the explanation's Outputs then holds each
// output's cells, made from the same model calls: each output's loss of
// the same permutations and walks, each output's prediction of the same
// samples, windows and coalitions. The per-instance attributions
// (Attribute) of every output are n × K × D × L, stored as a tensor of
// n·K rows. A model with one output is explained exactly as before.
//
// # Missing values
//
// Data may have missing values (NaN; sequences of different lengths are
// the case of cells missing at the end or start, tempora.Observation).
// No method imputes one: the model receives missing cells and padding as
// NaN. LIME refuses such data (method.RequireComplete's message: its
// surrogate needs every cell); SAGE's held-out cells take the background
// row's cell with its missingness, the observed mean or zero, and a row's
// padding stays its own; PERM's cell tests permute as TIME's do; OCC
// occludes only observed cells; TimeSHAP's players are each instance's
// observed cells, its recent timesteps the last of its own sequence. A
// cell that is padding in every instance scores 0. docs/decisions.md,
// decision 21, gives the reasons.
//
// # Determinism and speed
//
// All randomness comes from streams derived from the config's Seed and a key
// naming the unit of work (an instance for LIME, a batch row for SAGE, a
// cell and draw for PERM), and results are combined in a fixed order, so
// explanations are bitwise identical for any number of workers. Model calls
// are batched: LIME predicts all samples of an instance in one call, SAGE
// evaluates a coalition step for a work unit of rows (with every background
// copy) in one call and changes only the added column between steps,
// PERM rewrites only the permuted cell of a per-worker copy of the data,
// OCC packs several (feature, window) units of small data into one call
// and predicts data too large for a copy per worker in chunks of
// instances (the working-copy budget of internal/memlimit, as TIME's),
// and TimeSHAP predicts each instance's coalitions in one call from
// buffers it reuses.
//
// # References
//
//   - M. T. Ribeiro, S. Singh and C. Guestrin. "Why should I trust you?":
//     Explaining the predictions of any classifier. KDD 2016 (LIME,
//     SP-LIME).
//   - I. Covert, S. Lundberg and S.-I. Lee. Understanding global feature
//     contributions with additive importance measures. NeurIPS 2020 (SAGE).
//   - M. D. Zeiler and R. Fergus. Visualizing and understanding
//     convolutional networks. ECCV 2014 (occlusion); H. Suresh et al.
//     Clinical intervention prediction and understanding with deep neural
//     networks. MLHC 2017 (occlusion over time).
//   - J. Bento, P. Saleiro, A. F. Cruz, M. A. T. Figueiredo and P. Bizarro.
//     TimeSHAP: explaining recurrent models through sequence perturbations.
//     KDD 2021.
//   - L. Breiman. Random forests. Machine Learning 45(1):5–32, 2001
//     (permutation importance).
//   - A. Fisher, C. Rudin and F. Dominici. All models are wrong, but many are
//     useful: learning a variable's importance by studying an entire class
//     of prediction models simultaneously. JMLR 20(177), 2019 (model
//     reliance).
//   - Y. Benjamini and Y. Hochberg. Controlling the false discovery rate: a
//     practical and powerful approach to multiple testing. J. R. Stat. Soc. B
//     57(1):289–300, 1995.
//   - A. Sood and M. Craven. Feature importance explanations for temporal
//     black-box models. arXiv:2102.11934, 2021 (the comparison these
//     baselines reproduce).
package baselines
