package method

import (
	"fmt"
	"math"

	"github.com/tempora-dev/tempora"
)

// RequireComplete checks data for a method that needs complete data (no
// missing value, every sequence of full length; see tempora.Observation)
// and is the one owner of the message such a method gives on irregular
// data, so that every refusal reads alike. It returns nil for valid
// complete data, the data's own error (tempora.Dataset.Validate's, or
// Observe's for data with missing values) for invalid data, and for valid
// data with missing values an *IncompleteError that names the method, says why it
// cannot take them (why, a clause such as "its linear surrogate needs a
// value in every cell") and where the first missing value is, and that
// tempora does not impute them (docs/decisions.md, decision 21).
// minInstances is the smallest M the method can work with.
func RequireComplete(name string, data *tempora.Dataset, minInstances int, why string) error {
	err := data.Validate(minInstances)
	if err == nil {
		return nil
	}
	obs, oerr := data.Observe(minInstances)
	if oerr != nil {
		return oerr
	}
	if obs.Complete() {
		return err // not reached: Validate refuses valid data only for a NaN
	}
	what, cell := describeMissing(data, obs)
	msg := fmt.Sprintf("%s needs complete data, and %s: %s; tempora does not impute (impute or drop the missing values yourself, or choose a method that takes them: docs/decisions.md, decision 21)",
		name, what, why)
	cell.Err = fmt.Errorf("%s", msg)
	return &IncompleteError{Method: name, msg: msg, cell: cell}
}

// IncompleteError is RequireComplete's refusal of valid data with missing
// values, so that callers can tell it from invalid data (errors.As). It
// unwraps to a *tempora.DataError of kind KindMissing with the same
// message, locating the first missing value inside a sequence (none when
// the data's only gaps are sequences shorter than the others), for
// programs that name it in their own terms (docs/errors.md).
type IncompleteError struct {
	// Method is the refusing method's name.
	Method string
	msg    string
	cell   *tempora.DataError
}

func (e *IncompleteError) Error() string { return e.msg }
func (e *IncompleteError) Unwrap() error { return e.cell }

// describeMissing says how data with missing values is incomplete: its
// missing cells inside the sequences, with the first one, and its
// sequences shorter than L; and returns the KindMissing error at the first
// missing cell (at no cell without one), its message to be set.
func describeMissing(data *tempora.Dataset, obs *tempora.Observation) (string, *tempora.DataError) {
	x := data.X
	var missing int
	for _, n := range obs.Missing {
		missing += n
	}
	short := 0
	for _, s := range obs.Support {
		if s.Len() < x.L {
			short++
		}
	}
	var parts []string
	cell := tempora.NewDataError(tempora.KindMissing, nil)
	if missing > 0 {
		i, j, t := firstMissing(x, obs.Support)
		cell.At(i, j, t).WithValue(math.NaN()).WithCount(missing)
		what := fmt.Sprintf("%d values are missing (NaN), the first", missing)
		if missing == 1 {
			what = "1 value is missing (NaN),"
		}
		parts = append(parts, fmt.Sprintf("%s at instance %d, feature %s, timestep %d", what, i, featureName(data, j), t))
	}
	if short > 0 {
		parts = append(parts, fmt.Sprintf("%d of the %d sequences are shorter than the data's %d timesteps", short, x.M, x.L))
	}
	if len(parts) == 2 {
		return "in this data " + parts[0] + ", and " + parts[1], cell
	}
	return "in this data " + parts[0], cell
}

// firstMissing returns the first NaN cell inside a sequence's support, in
// instance, feature, timestep order.
func firstMissing(x *tempora.Tensor, support []tempora.Window) (i, j, t int) {
	for i := range x.M {
		for j := range x.D {
			s := x.Series(i, j)
			for t := support[i].Start; t <= support[i].End; t++ {
				if tempora.Missing(s[t]) {
					return i, j, t
				}
			}
		}
	}
	return -1, -1, -1
}

// featureName names feature j in a message: its index, and its name when
// the data has names.
func featureName(data *tempora.Dataset, j int) string {
	if data.FeatureNames != nil && j < len(data.FeatureNames) {
		return fmt.Sprintf("%d (%q)", j, data.FeatureNames[j])
	}
	return fmt.Sprint(j)
}
