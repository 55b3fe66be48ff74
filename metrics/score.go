package metrics

import (
	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/record"
)

// Score evaluates an explanation against the truth and returns its record
// without the identity fields (suite, params, model, seed, method): the
// detection metrics in the given mode (DetectionMetrics; with tests, the
// features selected under AllNonZero are the important ones), followed
// with tests by the per-feature metrics (TIMEMetrics), then the
// threshold-free metrics of the cell scores (AreaMetrics), the
// explanation's accounting and warnings, the explanation and the truth.
func Score(tr *record.Truth, e *tempora.Explanation, mode method.Mode, tests bool) (*record.Record, error) {
	var important []bool
	if tests {
		important = make([]bool, len(e.Features))
		for j, f := range e.Features {
			important[j] = f.Important
		}
	}
	ms, err := detectionMetrics(tr, e.Cells, e.D, e.L, mode, important)
	if err != nil {
		return nil, err
	}
	if tests {
		tm, err := TIMEMetrics(tr, e.Features, e.L)
		if err != nil {
			return nil, err
		}
		ms = append(ms, tm...)
	}
	am, err := AreaMetrics(tr, e.Cells, e.D, e.L)
	if err != nil {
		return nil, err
	}
	ms = append(ms, am...)
	warn := e.Warnings
	if warn == nil {
		warn = []string{}
	}
	return &record.Record{
		Format: record.Format, Method: e.Method, Metrics: ms,
		RuntimeSeconds: e.Accounting.Runtime.Seconds(),
		ModelCalls:     e.Accounting.ModelCalls, InstanceEvals: e.Accounting.InstanceEvals,
		Incomplete: e.Accounting.Incomplete, Warnings: warn,
		Explanation: e, Truth: tr,
	}, nil
}
