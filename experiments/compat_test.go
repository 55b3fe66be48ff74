package experiments

import "github.com/tempora-dev/tempora/metrics"

// PowerFDR is metrics.PowerFDR, for the fidelity tests of this package,
// which predate package metrics.
var PowerFDR = metrics.PowerFDR
