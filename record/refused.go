package record

import "strings"

// RefusedWarning starts the warning of a record whose method refused its
// problem (for example a baseline that does not handle missing values, in
// suite irregular): such a record is Incomplete, has no metrics, and its
// first warning is RefusedWarning followed by the method's message, so
// that a report shows the refusal, not a row of zeros.
const RefusedWarning = "refused: "

// Refusal returns the message of a refused record and whether r is one.
func (r *Record) Refusal() (string, bool) {
	if !r.Incomplete || len(r.Warnings) == 0 || !strings.HasPrefix(r.Warnings[0], RefusedWarning) {
		return "", false
	}
	return strings.TrimPrefix(r.Warnings[0], RefusedWarning), true
}
