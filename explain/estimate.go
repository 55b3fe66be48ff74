package explain

import (
	"time"

	"github.com/tempora-dev/tempora"
)

// The run's estimates (TIME.Estimates): the worst case of the draws still
// to come (cost.go), in model calls at the run's batch size and in time at
// the cost per instance measured so far. The first, after the baseline
// (and the batch size), is the run's worst case, every feature important;
// the second, once the feature tests are decided, counts the window steps
// of the important nodes only.

// estimated is where an estimate was made: when, and the instance
// evaluations by then.
type estimated struct {
	at    time.Time
	evals int64
}

// estimateStart reports the run's first estimate, from the worst case of
// its tests (top) and the cost per instance of the baseline, or of the
// chosen batch size.
func (r *timeRun) estimateStart(top []*node) {
	if r.cfg.Estimates == nil {
		return
	}
	per := r.eng.baseTime.Seconds() / float64(r.eng.data.X.M)
	if b := r.batch; b != nil && b.Auto {
		for _, c := range b.Costs {
			if c.Size == b.Size {
				per = c.SecondsPerInstance
			}
		}
	}
	r.report("baseline", r.cfg.cost(top, r.eng.data).Draws, per)
}

// estimateWindows reports the estimate once the feature tests are decided:
// the window steps of the important nodes at most, at the feature tests'
// measured cost per instance.
func (r *timeRun) estimateWindows(important []*node) {
	if r.cfg.Estimates == nil {
		return
	}
	acc := r.eng.Accounting()
	per := 0.0
	if n := acc.InstanceEvals - r.mark.evals; n > 0 {
		per = time.Since(r.mark.at).Seconds() / float64(n)
	}
	one := []*node{{}}
	perNode := r.cfg.cost(one, r.eng.data).Draws - r.cfg.capOf(1)
	r.report("feature tests", float64(len(important))*perNode, per)
}

// report calls the Estimates callback with the run so far plus draws
// draws still to come, and marks the time and evaluations.
func (r *timeRun) report(after string, draws, per float64) {
	acc := r.eng.Accounting()
	m := r.eng.data.X.M
	b := r.eng.BatchSize()
	calls := float64((m + b - 1) / b)
	r.cfg.Estimates(tempora.RunEstimate{
		After: after, ModelCalls: float64(acc.ModelCalls) + draws*calls, InstanceEvals: float64(acc.InstanceEvals) + draws*float64(m),
		SecondsPerInstance: per, SecondsLeft: per * draws * float64(m),
	})
	r.mark = estimated{at: time.Now(), evals: acc.InstanceEvals}
}
