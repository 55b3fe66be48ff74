package experiments

import "regexp"

// checksumField matches a record's checksum, which covers its runtime.
var checksumField = regexp.MustCompile(`"checksum": "[^"]*"`)
