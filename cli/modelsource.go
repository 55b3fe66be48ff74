package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tempora-dev/tempora/procmodel"
)

// maxModelProcs bounds -model-procs: far more model processes than CPUs
// only costs memory.
const maxModelProcs = 256

// validateModelSource checks -model-cmd, -model-fd and -model-procs
// together (set holds the flags given).
func validateModelSource(cmd, fds string, procs int, set map[string]bool) error {
	switch {
	case cmd != "" && fds != "":
		return usageErrorf("explain: -model-cmd and -model-fd exclude each other (a model is started, or it is already connected)")
	case procs < 1 || procs > maxModelProcs:
		return usageErrorf("explain: -model-procs %d: must be in [1, %d]", procs, maxModelProcs)
	case fds != "" && set["model-procs"]:
		return usageErrorf("explain: -model-procs does not apply to -model-fd (one model process serves each connection)")
	}
	if fds != "" {
		if _, err := parseModelFDs(fds); err != nil {
			return usageErrorf("explain: -model-fd: %v", err)
		}
	}
	return nil
}

// modelFD is one item of -model-fd: a connected socket and an optional
// shared buffer (-1 for none).
type modelFD struct{ sock, buf int }

// parseModelFDs parses -model-fd: a comma-separated list of SOCK or
// SOCK:BUF, each a file descriptor number ≥ 3 (0–2 are the standard
// streams), none repeated.
func parseModelFDs(spec string) ([]modelFD, error) {
	var (
		out  []modelFD
		seen = map[int]bool{}
	)
	num := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 3 {
			return 0, fmt.Errorf("%q is not a file descriptor number ≥ 3", s)
		}
		if seen[n] {
			return 0, fmt.Errorf("file descriptor %d given twice", n)
		}
		seen[n] = true
		return n, nil
	}
	for item := range strings.SplitSeq(spec, ",") {
		sock, buf, hasBuf := strings.Cut(item, ":")
		var (
			fd  = modelFD{buf: -1}
			err error
		)
		if fd.sock, err = num(sock); err != nil {
			return nil, err
		}
		if hasBuf {
			if fd.buf, err = num(buf); err != nil {
				return nil, err
			}
		}
		out = append(out, fd)
	}
	if len(out) > maxModelProcs {
		return nil, fmt.Errorf("%d connections: at most %d", len(out), maxModelProcs)
	}
	return out, nil
}

// startModel starts the model of the -data mode: procs copies of the
// program cmd, or the connections of fds (validated), as one pool that
// holds data (its Held is the model's held data capability). It reports
// what it starts on progress.
func startModel(ctx context.Context, cmd string, procs int, fds string, opts procmodel.Options, progress io.Writer) (*procmodel.Pool, error) {
	if fds == "" {
		argv, err := procmodel.SplitCommand(cmd)
		if err != nil {
			return nil, fmt.Errorf("explain: -model-cmd: %w", err)
		}
		if procs == 1 {
			fmt.Fprintf(progress, "tempora: starting model %q\n", argv)
		} else {
			fmt.Fprintf(progress, "tempora: starting %d model processes %q\n", procs, argv)
		}
		return procmodel.StartPool(ctx, argv, procs, opts)
	}
	items, err := parseModelFDs(fds)
	if err != nil {
		return nil, fmt.Errorf("explain: -model-fd: %w", err)
	}
	fmt.Fprintf(progress, "tempora: connecting to %d model connection(s) %s\n", len(items), fds)
	members := make([]procmodel.HeldMember, 0, len(items))
	for _, it := range items {
		c, err := procmodel.AttachFD(ctx, it.sock, it.buf, opts)
		if err != nil {
			for _, m := range members {
				m.Close()
			}
			return nil, fmt.Errorf("explain: -model-fd: %w", err)
		}
		members = append(members, c)
	}
	return procmodel.NewHeldPool(members...)
}
