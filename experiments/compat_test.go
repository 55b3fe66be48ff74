package experiments

import (
	"github.com/tempora-dev/tempora/method"
	"github.com/tempora-dev/tempora/metrics"
	"github.com/tempora-dev/tempora/record"
)

// Names that this package exported before scoring moved to package metrics
// and the selection mode to package method, kept for the tests of this
// package that predate the move (the fidelity tests). New code uses
// metrics, method and record directly.
type (
	Truth  = record.Truth
	Metric = record.Metric
	Mode   = method.Mode
)

const (
	TopN       = method.TopN
	AllNonZero = method.AllNonZero
)

var (
	PowerFDR         = metrics.PowerFDR
	DetectionMetrics = metrics.DetectionMetrics
	TIMEMetrics      = metrics.TIMEMetrics
)
