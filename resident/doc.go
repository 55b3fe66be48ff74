// Package resident is the vocabulary of a model that holds its data: a
// model (in practice a model process, package procmodel) that keeps a
// data tensor of its own and predicts perturbed copies of it from the
// perturbed blocks alone, so that a caller does not send the cells a
// perturbation leaves unchanged.
//
// A Block is one perturbed evaluation of the held data; a Model is the
// capability (Hold, PredictBlocks, PredictBlocksFilled, BatchLimit); an
// Explainer is an explainer that can use it (explain.TIME and
// baselines.PERM). The capability is always passed explicitly, beside the
// plain tempora.Model that answers every other call:
//
//	e, err := explain.TIME{}.ExplainHeld(ctx, model, held, data)
//
// An explainer never discovers it by asking the model, so a wrapper of a
// model (a meter, a progress counter) cannot hide it by forgetting to
// forward it: whoever wraps the model wraps the capability too, or passes
// none (the plain path, with identical results).
//
// The package imports only the root package; it is transport, not
// explanation: the results never depend on whether the capability is
// passed, only the model calls do.
package resident
