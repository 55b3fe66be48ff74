package explain

import (
	"slices"
	"testing"

	"github.com/tempora-dev/tempora"
)

// TestUndecidedStepsAgree checks that the steps a budget marks undecided
// are those tempora.UndecidedSteps orders (the CSV writes a decision of an
// undecided step or a later one empty), in the order TIME runs them.
func TestUndecidedStepsAgree(t *testing.T) {
	want := []string{stepOverall, stepWindow, stepWindowOrdering, stepFuture}
	if !slices.Equal(want, tempora.UndecidedSteps) {
		t.Errorf("explain's steps %q, tempora.UndecidedSteps %q", want, tempora.UndecidedSteps)
	}
}
