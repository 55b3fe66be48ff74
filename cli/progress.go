package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tempora-dev/tempora"
)

// largeEvals is the estimate of instance evaluations above which "tempora
// explain" warns at the start of a run: 10⁹ evaluations take a quarter of
// an hour at a million instances per second, and hours for most models.
const largeEvals = 1_000_000_000

// Progress output of "tempora explain": how often it is reported.
const (
	ttyEvery  = 250 * time.Millisecond // one updating line on a terminal
	lineEvery = 5 * time.Second        // a line every few seconds otherwise
	jsonEvery = 500 * time.Millisecond // machine-readable lines (-progress json)
)

// progressFormats are the values of -progress.
var progressFormats = []string{"text", "json"}

// progressLine is one line of -progress json: evals of total instance
// evaluations done after elapsed seconds (total 0: no estimate; exact false:
// total is an upper bound). The last line has done set.
type progressLine struct {
	Evals   int64   `json:"evals"`
	Total   int64   `json:"total"`
	Exact   bool    `json:"exact"`
	Elapsed float64 `json:"elapsed"`
	Done    bool    `json:"done,omitempty"`
}

// progressReporter counts the instances a model predicts and reports them
// against an estimate on w while a run lasts: one updating line when w is a
// terminal, a line every few seconds otherwise, or JSON lines
// ({"progress": progressLine}) for a program reading them.
type progressReporter struct {
	w      io.Writer
	tty    bool
	json   bool
	method string
	total  int64
	exact  bool
	evals  atomic.Int64
	begin  time.Time
	stop   chan struct{}
	wg     sync.WaitGroup
	width  int
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// startProgress starts reporting on w in format ("text" or "json") for a
// run of method estimated at total instance evaluations (0: no estimate).
func startProgress(w io.Writer, format, method string, total int64, exact bool) *progressReporter {
	p := &progressReporter{w: w, json: format == "json", tty: format != "json" && isTerminal(w), method: method,
		total: total, exact: exact, begin: time.Now(), stop: make(chan struct{})}
	every := lineEvery
	switch {
	case p.json:
		every = jsonEvery
	case p.tty:
		every = ttyEvery
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.report(false)
			}
		}
	}()
	return p
}

// model returns m counting into p (held, progress_held.go, counts m's held
// data capability).
func (p *progressReporter) model(m tempora.Model) tempora.Model {
	return tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error {
		err := m.Predict(dst, x)
		p.evals.Add(int64(x.M))
		return err
	})
}

// estimate reports a run's estimate of its cost (tempora.RunEstimate): a
// line, or with -progress json a line {"estimate": …}.
func (p *progressReporter) estimate(e tempora.RunEstimate) {
	if p.json {
		b, _ := json.Marshal(map[string]estimateLine{"estimate": {After: e.After, ModelCalls: e.ModelCalls, InstanceEvals: e.InstanceEvals,
			SecondsPerInstance: e.SecondsPerInstance, SecondsLeft: e.SecondsLeft}})
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	if p.tty && p.width > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	}
	fmt.Fprintln(p.w, "tempora: "+estimateText(p.method, e))
}

// estimateLine is the JSON form of a tempora.RunEstimate in -progress json.
type estimateLine struct {
	After              string  `json:"after"`
	ModelCalls         float64 `json:"model_calls"`
	InstanceEvals      float64 `json:"instance_evaluations"`
	SecondsPerInstance float64 `json:"seconds_per_instance"`
	SecondsLeft        float64 `json:"seconds_left"`
}

// estimateText describes an estimate in one line.
func estimateText(method string, e tempora.RunEstimate) string {
	left := time.Duration(min(e.SecondsLeft, math.MaxInt64/2e9) * float64(time.Second))
	if left >= 10*time.Second {
		left = left.Round(time.Second)
	} else {
		left = left.Round(time.Millisecond)
	}
	return fmt.Sprintf("%s: estimate after the %s: at most %s model calls and %s instance evaluations in all, at most %v left at %.3g ms per instance",
		method, e.After, shortCount(e.ModelCalls), shortCount(e.InstanceEvals), left, 1e3*e.SecondsPerInstance)
}

// finish stops the reports: a last JSON line, or the terminal line
// cleared.
func (p *progressReporter) finish() {
	close(p.stop)
	p.wg.Wait()
	switch {
	case p.json:
		p.report(true)
	case p.tty && p.width > 0:
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
	}
}

func (p *progressReporter) report(done bool) {
	n, el := p.evals.Load(), time.Since(p.begin)
	if p.json {
		b, _ := json.Marshal(map[string]progressLine{"progress": {Evals: n, Total: p.total, Exact: p.exact, Elapsed: el.Seconds(), Done: done}})
		fmt.Fprintf(p.w, "%s\n", b)
		return
	}
	s := "tempora: " + progressText(p.method, n, p.total, p.exact, el)
	if p.tty {
		pad := ""
		if len(s) < p.width {
			pad = strings.Repeat(" ", p.width-len(s))
		}
		fmt.Fprintf(p.w, "\r%s%s", s, pad)
		p.width = len(s)
		return
	}
	fmt.Fprintln(p.w, s)
}

// progressText describes n instance evaluations done of an estimated total
// after el: the share done and the time left at the rate so far (an upper
// bound on both when the estimate is one).
func progressText(method string, n, total int64, exact bool, el time.Duration) string {
	rate := ""
	if s := el.Seconds(); s > 0 {
		rate = fmt.Sprintf(", %s/s", shortCount(float64(n)/s))
	}
	elapsed := el.Round(time.Second)
	if total <= 0 {
		return fmt.Sprintf("%s: %s instance evaluations, %v elapsed%s", method, shortCount(float64(n)), elapsed, rate)
	}
	of, left := "of", "left"
	if !exact {
		of, left = "of at most", "left at most"
	}
	pct := 100 * float64(n) / float64(total)
	eta := "?"
	if n > 0 {
		rest := float64(el) / float64(n) * float64(max(total-n, 0))
		eta = time.Duration(min(rest, math.MaxInt64/2)).Round(time.Second).String()
	}
	return fmt.Sprintf("%s: %s %s %s instance evaluations (%.1f%%), %v elapsed%s, %s %s", method,
		shortCount(float64(n)), of, shortCount(float64(total)), pct, elapsed, rate, eta, left)
}

// shortCount writes a count with a metric suffix (12.3k, 4.5M, 6.7G).
func shortCount(v float64) string {
	switch {
	case v >= 1e12:
		return fmt.Sprintf("%.3gT", v/1e12)
	case v >= 1e9:
		return fmt.Sprintf("%.3gG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3gM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.3gk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// largeRunWarning returns the start-of-run warning for an estimate of
// total instance evaluations, or "" below largeEvals.
func largeRunWarning(method string, total int64, exact bool) string {
	if total < largeEvals {
		return ""
	}
	bound := "an estimated"
	if !exact {
		bound = "up to"
	}
	return fmt.Sprintf("tempora: warning: %s will make %s %s instance evaluations (%d; over %s, the warning threshold): at a million a second that is %v; lower its parameters or the data size, or stop it with Ctrl-C",
		method, bound, shortCount(float64(total)), total, shortCount(largeEvals), (time.Duration(min(float64(total)/1e6, math.MaxInt64/2e9)) * time.Second).Round(time.Second))
}
