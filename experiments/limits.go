package experiments

import (
	"fmt"
	"strings"
)

// MaxRecords bounds the records a manifest may describe (settings × models
// × methods): Merge lists every one of them to check completeness, so a
// manifest claiming 10⁹ models must be refused, not enumerated. It is more
// than a thousand times the largest paper suite (8 methods × 100 models);
// Run refuses a larger run up front.
const MaxRecords = 1 << 20

// check refuses a manifest (read from path) whose fields no run writes: a
// negative model count, an invalid shard, more models or methods than
// MaxRecords allows, or a method that is not a name.
func (m *Manifest) check(path string) error {
	if m.Models < 0 || m.Models > MaxRecords {
		return fmt.Errorf("experiments: %s: %d models, want 0 to %d", path, m.Models, MaxRecords)
	}
	if err := m.Shard.validate(); err != nil {
		return fmt.Errorf("experiments: %s: %s", path, strings.TrimPrefix(err.Error(), "experiments: "))
	}
	if len(m.Methods) > MaxRecords {
		return fmt.Errorf("experiments: %s: %d methods, want at most %d", path, len(m.Methods), MaxRecords)
	}
	return nil
}

// checkCount refuses to list more than MaxRecords keys.
func (m *Manifest) checkCount(settings int) error {
	if n := int64(settings) * int64(m.Models) * int64(len(m.Methods)); n > MaxRecords {
		return fmt.Errorf("experiments: the manifest of suite %s describes %d records (%d settings × %d models × %d methods), more than the %d a run may have",
			m.Suite, n, settings, m.Models, len(m.Methods), MaxRecords)
	}
	return nil
}

// tempNamed is an error whose message names a temporary path by the path
// it stands for: users see the files they named, never tempora's
// temporary ones (issue 24).
type tempNamed struct {
	msg string
	err error
}

func (e *tempNamed) Error() string { return e.msg }
func (e *tempNamed) Unwrap() error { return e.err }

// hideTemp returns err with every mention of the temporary path tmp
// replaced by final; err itself when it does not mention tmp.
func hideTemp(err error, tmp, final string) error {
	if err == nil || !strings.Contains(err.Error(), tmp) {
		return err
	}
	return &tempNamed{msg: strings.ReplaceAll(err.Error(), tmp, final), err: err}
}
