package explain

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora"
)

// A LengthRule says how an across-instance permutation moves a feature's
// values between instances whose supports (lengths) differ, on data with
// missing values (docs/decisions.md, decision 19): Strata (the default),
// Receiver or Donor, each registered in lengthRules. On complete data
// every rule draws as AcrossInstances does.
type LengthRule interface {
	// String returns the rule's name.
	String() string
	// drawer returns the drawer of across-instance test t on the Engine's
	// data with missing values.
	drawer(e *Engine, t *Test) drawer
	// warnings returns what the rule costs on data with missing values
	// summarised by obs.
	warnings(obs *tempora.Observation) []string
}

// lengthRules registers the length rules, the default first.
var lengthRules = []LengthRule{Strata{}, Receiver{}, Donor{}}

// ParseLengthRule returns the rule named s ("strata", "receiver" or
// "donor"; "" is Strata).
func ParseLengthRule(s string) (LengthRule, error) {
	if s == "" {
		return Strata{}, nil
	}
	var names []string
	for _, r := range lengthRules {
		if r.String() == s {
			return r, nil
		}
		names = append(names, r.String())
	}
	return nil, fmt.Errorf("explain: unknown length rule %s (want %s)", strconv.Quote(s), strings.Join(names, ", "))
}

// Strata, the default: instances are permuted only among instances that
// cover the test's window alike (the same intersection of their support
// with the window; for a whole-sequence test, the same support). The
// draw's uniform permutation of all instances induces, within each
// stratum, the permutation in which the stratum's members appear in it.
// Donor and receiver then have the same cells inside their supports and
// the same padding, so the draw keeps the data's joint law whenever
// instances are exchangeable given their supports. A window covered by
// every instance is one stratum: the draw is the dense one. An instance
// alone in its stratum keeps its own block.
type Strata struct{}

// String returns "strata".
func (Strata) String() string { return "strata" }

func (Strata) drawer(e *Engine, t *Test) drawer {
	return supportAcross{e: e, t: t, strata: e.strataOf(t.Window)}
}

func (Strata) warnings(obs *tempora.Observation) []string {
	whole := tempora.Window{Start: 0, End: obs.L - 1}
	if n := windowStrata(obs.Support, whole).singletons(); n > 0 {
		return []string{fmt.Sprintf("length rule strata: %d of %d instances are alone in their stratum (no other instance has the same support) and keep their own values in every whole-sequence draw, which costs power", n, obs.M)}
	}
	return nil
}

// Receiver: a sequence's length stays with its instance. Each receiving
// instance takes the donor's cells (values and NaNs) inside its own
// support; its padding stays padding, and a donor's value that would land
// on it is dropped. Where the donor is shorter, the receiver gets missing
// cells it did not have, which biases the test (docs/decisions.md,
// decision 19); kept for comparison.
type Receiver struct{}

// String returns "receiver".
func (Receiver) String() string { return "receiver" }

func (Receiver) drawer(e *Engine, t *Test) drawer { return supportAcross{e: e, t: t} }

func (Receiver) warnings(*tempora.Observation) []string { return nil }

// Donor moves the donor's whole block, padding included, as on dense
// data: the receiver's feature takes the donor's length. Invalid for a
// model whose output depends on the sequence length (docs/decisions.md,
// decision 19); kept for comparison.
type Donor struct{}

// String returns "donor".
func (Donor) String() string { return "donor" }

func (Donor) drawer(e *Engine, t *Test) drawer { return denseAcross{src: e.data.X, t: t} }

func (Donor) warnings(obs *tempora.Observation) []string {
	if obs.VariableLength() {
		return []string{"length rule donor: a donor's length moves with its values, so the across-instance tests are not valid for a model whose output depends on the sequence length (docs/decisions.md, decision 19)"}
	}
	return nil
}

// supportAcross draws an across-instance test on data with missing
// values, writing each receiver's cells inside its own support only (the
// Strata and Receiver rules), within strata when strata is not nil.
type supportAcross struct {
	e      *Engine
	t      *Test
	strata *strata
}

func (d supportAcross) size() int { return d.e.data.X.M }

func (d supportAcross) arrange(perm []int, ws *workspace) []int {
	if d.strata != nil {
		buf, cnt := ws.scratch(len(perm))
		d.strata.stratify(perm, buf, cnt)
	}
	return perm
}

func (d supportAcross) rows(dst *tempora.Tensor, i0 int, perm []int) {
	src, t := d.e.data.X, d.t
	start, end := t.Window.Start, t.Window.End
	sup := d.e.obs.Support
	if dst.M == src.M {
		tempora.PermuteInstancesWithin(dst, src, t.Features, start, end, perm, sup)
		return
	}
	for r := range dst.M {
		i := i0 + r
		s, e := max(start, sup[i].Start), min(end, sup[i].End)
		if s > e {
			continue
		}
		for _, j := range t.Features {
			o := dst.Index(r, j, s)
			copy(dst.Data[o:o+e-s+1], src.Data[src.Index(perm[i], j, s):])
		}
	}
}
