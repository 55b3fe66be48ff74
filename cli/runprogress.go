package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tempora-dev/tempora/experiments"
)

// runProgress shows the progress of "tempora run" (an
// experiments.Progress) with an estimated time to completion: one
// updating bar on a terminal, one line per finished item otherwise.
type runProgress struct {
	w       io.Writer
	tty     bool
	suite   string
	begun   bool
	total   int // items to run (excluding skipped)
	n       int // items finished
	begin   time.Time
	itemAt  time.Time
	current string
	width   int // length of the last bar drawn
}

func newRunProgress(w io.Writer, suite string) *runProgress {
	return &runProgress{w: w, suite: suite, tty: isTerminal(w)}
}

// Moved shows a damaged record moved aside.
func (p *runProgress) Moved(note string) { p.line(p.suite + ": " + note) }

// Begin shows the items to run.
func (p *runProgress) Begin(todo, skipped int) {
	p.begun, p.total, p.begin = true, todo, time.Now()
	if skipped > 0 {
		p.line(fmt.Sprintf("%s: %d items already done, %d to run", p.suite, skipped, todo))
	} else {
		p.line(fmt.Sprintf("%s: %d items to run", p.suite, todo))
	}
}

func (p *runProgress) line(s string) {
	if p.tty && p.width > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
		p.width = 0
	}
	fmt.Fprintln(p.w, s)
}

// Start shows the item that starts, on a terminal.
func (p *runProgress) Start(it *experiments.Item) {
	p.itemAt = time.Now()
	p.current = fmt.Sprintf("model=%d method=%s", it.Model, it.Method)
	if k := it.Setting.Key(); k != "" {
		p.current = k + " " + p.current
	}
	if p.tty {
		p.bar()
	}
}

func (p *runProgress) eta() string {
	if p.n == 0 {
		return "?"
	}
	el := time.Since(p.begin)
	left := time.Duration(float64(el) / float64(p.n) * float64(p.total-p.n))
	return left.Round(time.Second).String()
}

func (p *runProgress) bar() {
	const cells = 30
	fill := 0
	if p.total > 0 {
		fill = cells * p.n / p.total
	}
	s := fmt.Sprintf("%s [%s%s] %d/%d ETA %s  %s", p.suite,
		strings.Repeat("=", fill), strings.Repeat(" ", cells-fill), p.n, p.total, p.eta(), p.current)
	pad := ""
	if len(s) < p.width {
		pad = strings.Repeat(" ", p.width-len(s))
	}
	fmt.Fprintf(p.w, "\r%s%s", s, pad)
	p.width = len(s)
}

// Done shows the item finished: the bar on a terminal, else a line.
func (p *runProgress) Done(*experiments.Item) {
	p.n++
	if p.tty {
		p.bar()
		return
	}
	pct := 100.0
	if p.total > 0 {
		pct = 100 * float64(p.n) / float64(p.total)
	}
	fmt.Fprintf(p.w, "%s: %d/%d (%.0f%%) %s in %v, ETA %s\n", p.suite, p.n, p.total, pct, p.current,
		time.Since(p.itemAt).Round(time.Millisecond), p.eta())
}

// finish shows the items run and the time taken, once the run has begun.
func (p *runProgress) finish() {
	if p.begun {
		p.line(fmt.Sprintf("%s: %d of %d items run in %v", p.suite, p.n, p.total, time.Since(p.begin).Round(time.Millisecond)))
	}
}
