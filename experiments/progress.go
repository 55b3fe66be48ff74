package experiments

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress reports a run's progress with an estimated time to completion:
// one updating bar on a terminal, one line per finished item otherwise.
type progress struct {
	w       io.Writer
	tty     bool
	suite   string
	total   int // items to run (excluding skipped)
	skipped int
	n       int // items finished
	begin   time.Time
	itemAt  time.Time
	current string
	width   int // length of the last bar drawn
}

func newProgress(w io.Writer, suite string, total, skipped int) *progress {
	p := &progress{w: w, suite: suite, total: total, skipped: skipped, begin: time.Now()}
	if w == nil {
		return p
	}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	if skipped > 0 {
		p.line(fmt.Sprintf("%s: %d items already done, %d to run", suite, skipped, total))
	} else {
		p.line(fmt.Sprintf("%s: %d items to run", suite, total))
	}
	return p
}

func (p *progress) line(s string) {
	if p.w == nil {
		return
	}
	if p.tty && p.width > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
		p.width = 0
	}
	fmt.Fprintln(p.w, s)
}

func (p *progress) start(it *Item) {
	p.itemAt = time.Now()
	p.current = fmt.Sprintf("model=%d method=%s", it.Model, it.Method)
	if k := it.Setting.Key(); k != "" {
		p.current = k + " " + p.current
	}
	if p.tty {
		p.bar()
	}
}

func (p *progress) eta() string {
	if p.n == 0 {
		return "?"
	}
	el := time.Since(p.begin)
	left := time.Duration(float64(el) / float64(p.n) * float64(p.total-p.n))
	return left.Round(time.Second).String()
}

func (p *progress) bar() {
	if p.w == nil {
		return
	}
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

func (p *progress) done() {
	p.n++
	if p.w == nil {
		return
	}
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

func (p *progress) finish() {
	p.line(fmt.Sprintf("%s: %d of %d items run in %v", p.suite, p.n, p.total, time.Since(p.begin).Round(time.Millisecond)))
}
