package method

import "github.com/tempora-dev/tempora"

// Estimator is implemented by explainers that can tell, before they run,
// how many instance evaluations (instances predicted, summed over model
// calls; tempora.Accounting.InstanceEvals) an explanation of data will
// cost. The command line shows progress against the estimate and warns at
// the start of a run whose estimate is large.
//
// EstimateEvals must be cheap (no model call, nothing proportional to the
// cost it estimates). It returns the number and whether it is exact: false
// means an upper bound (for example the caps of sequential tests, which
// usually stop well before them). A zero count means no estimate (for
// parameter values the explainer will reject, say).
type Estimator interface {
	EstimateEvals(data *tempora.Dataset) (evals int64, exact bool)
}

// EstimateEvals returns ex's estimate if it implements Estimator (a method
// made From another estimates with From's explainer), and ok false if it
// has none.
func EstimateEvals(ex tempora.Explainer, data *tempora.Dataset) (evals int64, exact, ok bool) {
	if d, isDerived := ex.(derived); isDerived {
		ex = d.ex
	}
	est, isEst := ex.(Estimator)
	if !isEst || data == nil || data.X == nil {
		return 0, false, false
	}
	evals, exact = est.EstimateEvals(data)
	if evals <= 0 {
		return 0, false, false
	}
	return evals, exact, true
}
