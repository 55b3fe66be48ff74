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
//	describe  summarise a synthetic problem or a data file
//	explain   explain a model (a synthetic problem's, or any program's) with
//	          TIME or another method
//	methods   list the explanation methods; "methods NAME" describes one
//	          method's parameters, -json prints the table for programs
//	          such as the Python package
//	report    render runs' records as tables and figures
//	run       run a benchmark suite (paper tables and figures, sweeps)
//	merge     merge runs of one suite's problems (shards, other methods)
//	export    write HTCondor or Slurm jobs for a sharded run
//	problems  write a suite's problems for an outside tool
//	evaluate  score an outside tool's feature × timestep scores against
//	          ground truth, and turn them into records
//	rank      rank features by an outside tool's cell scores, as the
//	          benchmark scores them
//	serve     answer the model protocol (docs/protocol.md) for a synthetic
//	          problem's model on standard input and output
//
// Run "tempora <command> -h" for a command's flags. Results go to standard
// output; progress and timing go to standard error.
//
// # Exit status
//
// Every command exits with status 0 on success, 1 on a failure (a file that
// cannot be read, a model that fails), 2 on a usage error (an unknown
// command, flag, method or suite, a flag value out of range, a missing
// required flag) and 128 + n when signal n stopped it (see Interruption).
// An error is one line on standard error. "-h" prints help to standard
// output and succeeds.
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
// process killed by that signal: 130 for SIGINT, 143 for SIGTERM. A command
// that does not stop within 1.5 s (blocked in a system call no cancellation
// reaches, such as opening a named pipe without a writer) is ended then,
// with a line saying so before the same last line and status; one that
// finishes its work after the signal still exits with that status, as its
// output may be incomplete. A second signal ends tempora at once, like kill
// -9, which loses at most the records in flight.
//
// # Output files
//
// Output files are written atomically (a temporary file in the same
// directory, renamed into place) with mode 0666 less the umask, as careful
// Unix tools create files. A command refuses an output file that is one of
// its input files under any name (os.SameFile), as cp refuses to copy a
// file onto itself: "tempora explain -data x.npy -json x.npy" fails before
// any work. Only a regular file is ever replaced: an output that is a
// character device or a named pipe (-json /dev/null) is written through,
// and any other non-regular file is refused. Every input file must be a
// regular file, read up to a limit (docs/bad-input.md, "Files tempora
// reads and writes").
//
// # Your own method
//
// Main takes extra methods (see package method): a researcher's program
//
//	func main() { cli.Main(myMethod) }
//
// is the whole tempora command line with myMethod beside the built-in
// methods: explain, run, merge, export (whose jobs run that program),
// report and evaluate all know it. examples/newmethod is such a program.
//
// # Errors
//
// An error is printed as "tempora: ", the command's name, ": " and the
// message, on one line: "tempora: explain: open p/problem.json: no such file
// or directory". The libraries' package prefixes ("synth: ", "experiments:
// ") are left out (see internal/errmsg); docs/bad-input.md lists the
// classes of bad input and their messages, and TestBadInputDoc checks that
// list against the command line. Commands that read data (explain,
// describe) take -errors json, which writes the error also as one JSON
// line before that one: its kind and, for bad data, the instance, feature
// and timestep at fault, for programs that map them to their own names
// (errorsjson.go; docs/errors.md).
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

	"github.com/tempora-dev/tempora/experiments"
	"github.com/tempora-dev/tempora/method"
)

// Main runs the tempora command line on os.Args, with the built-in methods
// followed by methods, and exits: with status 0 on success, 1 on a failure
// 2 on a usage error and 128 + n when signal n (SIGINT or SIGTERM) stopped
// the command (see Interruption above). Exported job files ("tempora export") run the
// program that called Main (os.Executable), so they know methods too. An
// invalid method (see method.NewTable) is reported and exits with status 1.
func Main(methods ...method.Method) {
	p, err := newProgram(methods)
	if err != nil {
		fmt.Fprintln(os.Stderr, "tempora:", err)
		os.Exit(1)
	}
	if exe, err := os.Executable(); err == nil {
		p.exe = exe
	}
	ctx, stop := notifyInterrupt(context.Background())
	done := make(chan struct{})
	go watchInterrupt(ctx, commandName(os.Args[1:]), done)
	err = p.runContext(ctx, os.Args[1:], os.Stdout, os.Stderr)
	exitMu.Lock() // the watchdog (interrupt.go) no longer exits
	close(done)
	if sig, ok := interruptedAnyway(ctx); ok && err == nil {
		err = commandErr(commandName(os.Args[1:]), sig)
	}
	stop()
	if err != nil {
		var (
			sig interruptError
			jr  jsonReported
		)
		interrupted := errors.As(context.Cause(ctx), &sig)
		if interrupted && errors.Is(err, context.Canceled) {
			if errors.As(err, &jr) { // -errors json (errorsjson.go)
				err = jsonReported{sig}
			} else {
				err = sig
			}
		}
		writeError(os.Stderr, err)
		if interrupted {
			os.Exit(128 + int(sig.sig))
		}
		os.Exit(exitStatus(err))
	}
}

// writeError writes err, a command's error, to w: one line "tempora: " and
// its message, with multi-line details (such as a model program's last
// standard error lines, already shown as it ran) joined by " | ";
// preceded, for a command given -errors json, by the JSON line of
// errorsjson.go.
func writeError(w io.Writer, err error) {
	msg := strings.ReplaceAll(strings.TrimSpace(err.Error()), "\n", " | ")
	var jr jsonReported
	if errors.As(err, &jr) {
		writeErrorJSON(w, err, msg)
	}
	fmt.Fprintln(w, "tempora:", msg)
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

// exitStatus is 2 for a usage error and 1 for any other error.
func exitStatus(err error) int {
	var u usageError
	if errors.As(err, &u) {
		return 2
	}
	return 1
}

// program is one command line: its method table and how to run it.
type program struct {
	table *method.Table
	extra []method.Method
	// exe is the path of the running program, which exported jobs run;
	// empty means "./tempora".
	exe string
	// parseOnly stops every command after parsing and checking its
	// command line, before it reads or writes a file (for testing the
	// README's command lines).
	parseOnly bool
}

func newProgram(extra []method.Method) (*program, error) {
	t, err := experiments.Table(extra...)
	if err != nil {
		return nil, err
	}
	// A method parameter is a flag of "tempora explain", so it must not
	// take the name of one of explain's own flags (or of -h, -help).
	own := explainOwnFlags(t.Names())
	for _, tp := range t.Params() {
		if own.Lookup(tp.Name) != nil || tp.Name == "h" || tp.Name == "help" {
			return nil, fmt.Errorf("method %s: parameter %s is a flag of tempora explain", tp.Methods[0], tp.Name)
		}
	}
	return &program{table: t, extra: extra}, nil
}

// run runs the command line args (without the program name) with the
// built-in methods, writing results to stdout and progress to stderr.
func run(args []string, stdout, stderr io.Writer) error {
	p, err := newProgram(nil)
	if err != nil {
		return err
	}
	return p.runContext(context.Background(), args, stdout, stderr)
}

// command is one subcommand.
type command struct {
	name, synopsis, summary string
	run                     func(p *program, ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// commands lists the subcommands in the order of the help text (set in
// init: the commands' help refers to the list). Synopses are generated into
// README.md (TestREADME).
var commands []command

func init() {
	commands = []command{
		{"synth", "-out DIR [-instances M] [-features D] [-timesteps L] [-relevant FRAC] [-task regression|classification] [-noise auto|β] [-seed S] [-window-independent]",
			"generate a synthetic problem (data, targets, model, ground truth)", (*program).synth},
		{"describe", "(DIR | -data X [-mask M] [-alignment start|end])", "summarise a synthetic problem or a data file", (*program).describe},
		{"explain", "(-problem DIR | -data X -targets Y -task T -model-cmd CMD) [-method M] [method flags] [-json F] [-csv F] [-attributions F]",
			"explain a model with TIME or another method", (*program).explain},
		{"methods", "[-json | NAME]", "list the explanation methods, or describe one's parameters (text or JSON)", (*program).methods},
		{"report", "-in DIR[,DIR...] [-out DIR]", "render runs' records as tables and figures", (*program).report},
		{"run", "-suite NAME [-grid SPEC] [-models N] [-methods a,b] [-quick] [-seed S] [-shard i/n] -out DIR",
			"run a benchmark suite (paper tables and figures, sweeps)", (*program).run},
		{"merge", "-out DIR RUN_DIR...", "merge runs of one suite's problems (shards, other methods)", (*program).merge},
		{"rehash", "RUN_DIR... | RECORD...", "accept records changed on purpose: give them checksums of their content", (*program).rehash},
		{"export", "-suite NAME -shards N -out DIR [run flags] condor|slurm", "write HTCondor or Slurm jobs for a sharded run", (*program).export},
		{"problems", "-suite NAME [-grid SPEC] [-models N] [-quick] [-seed S] -out DIR", "write a suite's problems for an outside tool", (*program).problems},
		{"evaluate", "(-problem DIR -scores FILE | -problems DIR -scores NAME -method M -out DIR) [-mode MODE]",
			"score an outside tool's feature × timestep scores against ground truth", (*program).evaluate},
		{"rank", "-scores FILE [-json]", "rank features by an outside tool's cell scores, as the benchmark scores them", (*program).rank},
		{"serve", "-problem DIR", "answer the model protocol for a synthetic problem's model on stdin/stdout", (*program).serve},
	}
}

func (p *program) runContext(ctx context.Context, args []string, stdout, stderr io.Writer) error {
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
			return commandErr(c.name, c.run(p, ctx, args[1:], stdout, stderr))
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
	fmt.Fprintln(w, `Run "tempora <command> -h" for a command's flags. Exit status: 0 on success,`)
	fmt.Fprintln(w, "1 on a failure, 2 on a usage error.")
}

// usageError is a bad command line: main exits with status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// newFlagSet returns a flag set for a subcommand that reports parse errors
// as one line (through parseFlags) and prints its help, with the
// command's synopsis, to stdout on -h.
func newFlagSet(name, description string, stdout io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		writeUsageHead(stdout, name, description)
		fmt.Fprintln(stdout, "\nFlags:")
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// writeUsageHead writes the start of a command's help: its synopsis and
// description.
func writeUsageHead(w io.Writer, name, description string) {
	synopsis := ""
	for _, c := range commands {
		if c.name == name {
			synopsis = c.synopsis
		}
	}
	fmt.Fprintf(w, "Usage: tempora %s %s\n\n%s\n", name, synopsis, strings.TrimSpace(description))
}

// parseFlags parses args. It returns errHelp after printing the help for
// -h, and a one-line usage error for a bad flag.
func parseFlags(fs *flag.FlagSet, args []string) error {
	// The flag package calls Usage on every parse error; print the help
	// only when asked for it.
	help := fs.Usage
	fs.Usage = func() {}
	restore := countSets(fs)
	err := fs.Parse(args)
	repeated := restore()
	fs.Usage = help
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return errHelp
	}
	if err != nil {
		return usageErrorf("%s: %v (see tempora %s -h)", fs.Name(), err, fs.Name())
	}
	if repeated != "" {
		return usageErrorf("%s: %s (give each flag once; see tempora %s -h)", fs.Name(), repeated, fs.Name())
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
