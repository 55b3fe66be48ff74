// Package cli is the tempora command line: it explains temporal black-box
// models with TIME and benchmarks explanation methods on synthetic problems
// with known ground truth. Command tempora (cmd/tempora) is a one-line main
// that calls Main.
//
// Usage:
//
//	tempora <command> [flags] [arguments]
//
// The commands are:
//
//	synth     generate a synthetic problem (data, targets, model, ground truth)
//	describe  summarise a synthetic problem
//	explain   explain a model (a synthetic problem's, or any program's) with
//	          TIME or a baseline
//	report    render a run's records as tables and figures
//	run       run a benchmark suite (paper tables and figures, sweeps)
//	merge     merge the outputs of a sharded run
//	export    write HTCondor or Slurm jobs for a sharded run
//	evaluate  score any tool's feature × timestep scores against ground truth
//
// Run "tempora <command> -h" for a command's flags. Results go to standard
// output; progress and timing go to standard error. On error tempora prints
// one line to standard error and exits with status 1 (2 for bad usage).
//
// # Interruption
//
// SIGINT (Ctrl-C) and SIGTERM (how a batch scheduler such as Slurm or
// HTCondor stops a job) are handled alike: the command stops at once, keeps
// every record already written (a record file is complete or absent, never
// half-written), stops any model program it started (with its process
// group), prints one line such as
//
//	tempora: run: interrupted by SIGTERM; finished records are kept, rerun the same command to resume
//
// and exits with status 128 + the signal's number, as a shell reports a
// process killed by that signal: 130 for SIGINT, 143 for SIGTERM. A second
// signal ends tempora at once, like kill -9, which loses at most the records
// in flight.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Main runs the tempora command line on os.Args and exits: with status 0 on
// success, 1 on a failure, 2 on a usage error and 128 + n when signal n
// (SIGINT or SIGTERM) stopped the command (see Interruption above).
func Main() {
	ctx, stop := notifyInterrupt(context.Background())
	err := runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var sig interruptError
		interrupted := errors.As(context.Cause(ctx), &sig)
		if interrupted && errors.Is(err, context.Canceled) {
			err = sig
		}
		// One line: multi-line details (such as a model program's last
		// standard error lines, already shown as it ran) are joined.
		fmt.Fprintln(os.Stderr, "tempora:", strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " | "))
		var u usageError
		switch {
		case interrupted:
			os.Exit(128 + int(sig.sig))
		case errors.As(err, &u):
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// interruptError is the cause of a context cancelled by a signal.
type interruptError struct{ sig syscall.Signal }

func (e interruptError) Error() string {
	switch e.sig {
	case syscall.SIGINT:
		return "interrupted by SIGINT"
	case syscall.SIGTERM:
		return "interrupted by SIGTERM"
	}
	return "interrupted by signal " + e.sig.String()
}

// notifyInterrupt returns a context that is cancelled, with an
// interruptError as its cause, on the first SIGINT or SIGTERM. After that
// signal the default handling is restored, so a second one ends the process
// at once. stop releases the signals.
func notifyInterrupt(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			sig, _ := s.(syscall.Signal)
			cancel(interruptError{sig})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// interruption describes why ctx ended: "interrupted by SIGTERM" after a
// signal, plain "interrupted" otherwise.
func interruption(ctx context.Context) string {
	var sig interruptError
	if errors.As(context.Cause(ctx), &sig) {
		return sig.Error()
	}
	return "interrupted"
}

// run runs the command line args (without the program name), writing
// results to stdout and progress to stderr.
func run(args []string, stdout, stderr io.Writer) error {
	return runContext(context.Background(), args, stdout, stderr)
}

// command is one subcommand.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = []command{
	{"synth", "generate a synthetic problem (data, targets, model, ground truth)", runSynth},
	{"describe", "summarise a synthetic problem", runDescribe},
	{"explain", "explain a model with TIME or a baseline", runExplain},
	{"report", "render a run's records as tables and figures", runReport},
	{"run", "run a benchmark suite (paper tables and figures, sweeps)", runRun},
	{"merge", "merge the outputs of a sharded run", runMerge},
	{"export", "write HTCondor or Slurm jobs for a sharded run", runExport},
	{"evaluate", "score any tool's feature × timestep scores against ground truth", runEvaluate},
}

func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		usage(stderr)
		return usageErrorf("no command given (see tempora -h)")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return nil
	}
	for _, c := range commands {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	return usageErrorf("unknown command %q (want %s; see tempora -h)", args[0], commandNames())
}

func commandNames() string {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	return strings.Join(names, ", ")
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "tempora explains temporal black-box models with TIME (which features matter, in")
	fmt.Fprintln(w, "which window of time, and whether their ordering matters) and benchmarks")
	fmt.Fprintln(w, "explanation methods on synthetic problems with known ground truth.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage:")
	fmt.Fprintln(w, "\ttempora <command> [flags] [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands {
		fmt.Fprintf(w, "\t%-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "tempora <command> -h" for a command's flags.`)
}

// usageError is a bad command line: main exits with status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// newFlagSet returns a flag set for a subcommand that reports parse errors
// as one line (through parseFlags) and prints its help to stdout on -h.
func newFlagSet(name, synopsis, description string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage: tempora %s %s\n\n%s\n", name, synopsis, strings.TrimSpace(description))
		fmt.Fprintln(stdout, "\nFlags:")
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args. It returns errHelp after printing the help for
// -h, and a one-line usage error for a bad flag.
func parseFlags(fs *flag.FlagSet, args []string) error {
	// The flag package calls Usage on every parse error; print the help
	// only when asked for it.
	help := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = help
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return errHelp
	}
	if err != nil {
		return usageErrorf("%s: %v (see tempora %s -h)", fs.Name(), err, fs.Name())
	}
	return nil
}

// errHelp signals that help was printed; the command then succeeds.
var errHelp = errors.New("help requested")

// flagsSet returns the names of the flags given on the command line.
func flagsSet(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// helpOK turns errHelp into success.
func helpOK(err error) error {
	if errors.Is(err, errHelp) {
		return nil
	}
	return err
}
