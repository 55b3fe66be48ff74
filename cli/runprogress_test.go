package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/experiments"
	"github.com/tempora-dev/tempora/record"
)

// TestRunProgressLines checks tempora run's progress when standard error
// is not a terminal: the damaged records moved, the items done and to run,
// one line per item with the share done and an ETA, and the total.
func TestRunProgressLines(t *testing.T) {
	var b bytes.Buffer
	p := newRunProgress(&b, "grid")
	p.finish() // before Begin: nothing
	p.Moved("damaged record records/x.json (why) moved to damaged/x.json; its item runs again")
	p.Begin(2, 3)
	s := &experiments.Setting{Params: []record.Param{{Key: "noise", Value: "0"}}}
	for _, m := range []string{"TIME", "LIME"} {
		it := &experiments.Item{Setting: s, Model: 1, Method: m}
		p.Start(it)
		p.Done(it)
	}
	p.finish()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	want := []string{
		`^grid: damaged record records/x\.json \(why\) moved to damaged/x\.json; its item runs again$`,
		`^grid: 3 items already done, 2 to run$`,
		`^grid: 1/2 \(50%\) noise=0 model=1 method=TIME in \S+, ETA \S+$`,
		`^grid: 2/2 \(100%\) noise=0 model=1 method=LIME in \S+, ETA 0s$`,
		`^grid: 2 of 2 items run in \S+$`,
	}
	if len(lines) != len(want) {
		t.Fatalf("progress:\n%s", b.String())
	}
	for i, re := range want {
		if !regexp.MustCompile(re).MatchString(lines[i]) {
			t.Errorf("line %d %q does not match %s", i, lines[i], re)
		}
	}
}
