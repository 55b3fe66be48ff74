package cli

import (
	"bytes"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tempora-dev/tempora/internal/errmsg"
)

// fuzzSafe reports whether the command line args may be run by
// FuzzCommandLine: every path stays inside the working directory (a fresh
// temporary one), nothing runs a suite, and no number is large enough to
// make synth or export do real work, and no model program is started. It returns the reason otherwise.
func fuzzSafe(args []string) string {
	for _, a := range args {
		if strings.ContainsAny(a, `/\`) || strings.Contains(a, "..") || strings.HasPrefix(a, "~") {
			return "a path that may leave the sandbox"
		}
		if strings.Contains(a, "model-cmd") {
			return "a model program would be started"
		}
		v := a
		if i := strings.LastIndexByte(v, '='); i >= 0 {
			v = v[i+1:]
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil && math.Abs(f) > 100 {
			return "a large number"
		}
		if n, err := strconv.ParseInt(v, 0, 64); err == nil && (n > 100 || n < -100) {
			return "a large number"
		}
	}
	if len(args) > 0 && args[0] == "run" {
		for _, a := range args[1:] {
			switch strings.TrimLeft(a, "-") {
			case "h", "help", "list":
			default:
				return "run would run a suite"
			}
		}
	}
	return ""
}

// FuzzCommandLine runs the command dispatcher on a command line split at
// blanks from the fuzzer's string, inside a fresh working directory, for the
// command lines fuzzSafe admits (help, listing, flag and argument
// validation, and small synth and export runs). Seeds are in
// testdata/fuzz/FuzzCommandLine and below. Properties: no panic; a failure
// has a one-line message that starts with the command's name and carries no
// library package prefix; a bad flag or flag value is a usage error (exit
// status 2);
// help goes to standard output and succeeds; the output stays small.
func FuzzCommandLine(f *testing.F) {
	for _, s := range []string{
		"", "-h", "help", "bogus", "synth -h", "synth -out p -instances 20 -features 3 -timesteps 5 -seed 2",
		"synth -out p -instances 1", "synth -instances=x", "describe p", "explain -problem p -method lime -samples 1",
		"explain -data x.npy -targets y.csv -task regression -model-cmd", "explain -method nope", "report -in r -out o",
		"run -list", "run -h", "merge -out m a b", "export -suite table1 -shards 4 -out o slurm",
		"export -suite grid -grid noise=0,0.5 -shards 2 -out o condor", "export -shards 0 slurm",
		"evaluate -problem p -scores s.csv", "synth -out p -noise auto -task classification -relevant 0.5 -instances 30",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		if reason := fuzzSafe(args); reason != "" {
			t.Skip(reason)
		}
		t.Chdir(fuzzTempDir(t))
		var stdout, stderr bytes.Buffer
		err := run(args, &stdout, &stderr)
		if stdout.Len()+stderr.Len() > 1<<20 {
			t.Fatalf("%d bytes of output", stdout.Len()+stderr.Len())
		}
		if isHelp(args) && (err != nil || stdout.Len() == 0) {
			t.Fatalf("help: error %v, %d bytes on standard output", err, stdout.Len())
		}
		if err == nil {
			return
		}
		msg := err.Error()
		if strings.TrimSpace(msg) == "" {
			t.Fatalf("failure without a message: %#v", err)
		}
		// One line: the command's name once, then no library prefixes.
		if strings.ContainsAny(msg, "\n\r") || strings.HasPrefix(msg, "tempora: ") {
			t.Fatalf("message %q is not one line without tempora:", msg)
		}
		if len(args) > 0 && isCommand(args[0]) {
			rest, ok := strings.CutPrefix(msg, args[0]+": ")
			if !ok || errmsg.Trim(rest) != rest {
				t.Fatalf("message %q does not carry exactly the command's name as prefix", msg)
			}
		}
		var u usageError
		for _, flagError := range []string{"flag provided but not defined", "invalid value", "invalid boolean", "flag needs an argument", "bad flag syntax"} {
			if strings.Contains(msg, flagError) && !errors.As(err, &u) {
				t.Fatalf("flag error %q is not a usage error", msg)
			}
		}
	})
}

// isCommand reports whether name is a command's.
func isCommand(name string) bool {
	for _, c := range commands {
		if c.name == name {
			return true
		}
	}
	return false
}

// isHelp reports whether args asks for help: "-h" alone, or a command
// followed by "-h".
func isHelp(args []string) bool {
	h := func(a string) bool { return a == "-h" || a == "-help" || a == "--help" }
	switch len(args) {
	case 1:
		return h(args[0])
	case 2:
		for _, c := range commands {
			if c.name == args[0] {
				return h(args[1])
			}
		}
	}
	return false
}

// fuzzTempDir returns a temporary directory removed at the end of the
// test, in memory (/dev/shm) where possible: synth syncs every file it
// writes, which on a busy disk costs more than the rest of a fuzz call.
func fuzzTempDir(t *testing.T) string {
	t.Helper()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "tempora-fuzz-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}
