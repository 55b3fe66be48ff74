package synth

import (
	"fmt"

	"github.com/tempora-dev/tempora/internal/safefile"
)

// regularFiles checks that each of a problem directory's data files is a
// regular file (see safefile.Open): a named pipe would block the read, a
// link to /dev/zero would never end. Their size is not limited here: the
// data's header announces it, and the data may be large.
func regularFiles(paths ...string) error {
	for _, p := range paths {
		f, err := safefile.Open(p)
		if err != nil {
			return fmt.Errorf("synth: %w", err)
		}
		f.Close()
	}
	return nil
}
