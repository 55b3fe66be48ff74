package explain

import (
	"errors"
	"time"
)

// Budgets. A run may be given a budget of model calls and a deadline
// (Engine.SetBudget; TIME's MaxCalls and MaxTime): the Engine checks both
// before every model call and refuses a call that would exceed them with a
// *BudgetError, so the run makes at most that many calls (the baseline's
// included) and starts none after the deadline (a call started before it
// runs to its end). The tests of the batch that was refused are not
// decided: TIME keeps the decisions settled before it and marks the rest
// undecided (tempora.FeatureResult.Undecided).

// The budgets' names, as the command line's flags and
// tempora.Accounting.StoppedBy spell them.
const (
	BudgetCalls = "max-calls"
	BudgetTime  = "max-time"
)

// A BudgetError is the error of a model call that a budget refused.
type BudgetError struct {
	// Budget names it: BudgetCalls or BudgetTime.
	Budget string
}

func (e *BudgetError) Error() string {
	if e.Budget == BudgetCalls {
		return "explain: the budget of model calls (max-calls) is spent"
	}
	return "explain: the time budget (max-time) is spent"
}

// stoppedBy returns the budget that err reports, or "" when it is not a
// *BudgetError.
func stoppedBy(err error) string {
	var be *BudgetError
	if errors.As(err, &be) {
		return be.Budget
	}
	return ""
}

// SetBudget sets the most model calls of the Engine, those already made
// (the baseline's) included (0: no limit), and a deadline after which it
// starts no model call (the zero time: none). It must be called before
// Run.
func (e *Engine) SetBudget(calls int64, deadline time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.maxCalls, e.deadline = max(0, calls), deadline
}

// spend counts a model call of n blocks (1 for Predict) on rows
// instances, or refuses it with a *BudgetError when the budget would be
// exceeded.
func (e *Engine) spend(n, rows int64) error {
	if !e.deadline.IsZero() && !time.Now().Before(e.deadline) {
		return &BudgetError{Budget: BudgetTime}
	}
	if c := e.calls.Add(n); e.maxCalls > 0 && c > e.maxCalls {
		e.calls.Add(-n)
		return &BudgetError{Budget: BudgetCalls}
	}
	e.evals.Add(rows)
	return nil
}
