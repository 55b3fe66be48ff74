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
//	serve     answer the model protocol (docs/protocol.md) for a synthetic
//	          problem's model on standard input and output
//
// Run "tempora <command> -h" for a command's flags. Results go to standard
// output; progress and timing go to standard error. On error tempora prints
// one line to standard error and exits with status 1 (2 for bad usage).
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
)

// Main runs the tempora command line on os.Args and exits: with status 0 on
// success, 1 on a failure and 2 on a usage error.
func Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	interrupted := ctx.Err() != nil
	stop()
	if err != nil {
		if interrupted && errors.Is(err, context.Canceled) {
			err = errors.New("interrupted")
		}
		// One line: multi-line details (such as a model program's last
		// standard error lines, already shown as it ran) are joined.
		fmt.Fprintln(os.Stderr, "tempora:", strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " | "))
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
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
	{"serve", "answer the model protocol for a synthetic problem's model on stdin/stdout", runServe},
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
