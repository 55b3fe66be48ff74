package cli

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/procmodel"
	"github.com/tempora-dev/tempora/synth"
)

// serveArgsEnv makes TestServeHelperProcess run "tempora serve" with the
// arguments in the variable (separated by newlines) on the test binary's
// standard input and output, so that the protocol is tested across a real
// process boundary without building another program.
const serveArgsEnv = "TEMPORA_CLI_TEST_SERVE_ARGS"

func TestServeHelperProcess(t *testing.T) {
	args := os.Getenv(serveArgsEnv)
	if args == "" {
		t.Skip("helper process for TestServe")
	}
	err := run(append([]string{"serve"}, strings.Split(args, "\n")...), os.Stdout, os.Stderr)
	if err != nil {
		os.Stderr.WriteString("tempora: " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}

// TestServe starts "tempora serve -problem DIR" as a child speaking the
// model protocol and checks that its predictions are bit for bit those of
// the problem's model in-process, and that a request of the wrong shape
// gets an error answer.
func TestServe(t *testing.T) {
	dir := smallProblem(t)
	p, err := synth.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), serveArgsEnv+"=-problem\n"+dir)
	ctx := context.Background()
	start := func() *procmodel.Model {
		m, err := procmodel.Start(ctx, []string{exe, "-test.run=^TestServeHelperProcess$"},
			procmodel.Options{Env: env, Timeout: time.Minute, Stderr: &strings.Builder{}})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	m := start()
	x := p.Data.X
	want := make([]float64, x.M)
	if err := p.Model.Predict(want, x); err != nil {
		t.Fatal(err)
	}
	// One call with every instance, then one with a single instance.
	got := make([]float64, x.M)
	if err := m.Predict(got, x); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("instance %d: served prediction %v, in-process %v", i, got[i], want[i])
		}
	}
	one := make([]float64, 1)
	if err := m.Predict(one, x.Rows(7, 8)); err != nil || one[0] != want[7] {
		t.Errorf("single instance: %v, %v; want %v", one[0], err, want[7])
	}
	if err := m.Close(); err != nil {
		t.Errorf("close: %v", err)
	}

	// A request with one feature too many is answered with an error.
	m = start()
	defer m.Close()
	bad := tempora.NewTensor(2, x.D+1, x.L)
	err = m.Predict(make([]float64, 2), bad)
	if !errors.Is(err, procmodel.ErrModel) {
		t.Errorf("wrong shape: error %v, want one wrapping procmodel.ErrModel", err)
	}
}

func TestServeUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "-problem is required"},
		{[]string{"serve", "-problem", "x", "extra"}, "unexpected arguments"},
		{[]string{"serve", "-bogus"}, "flag provided but not defined"},
	} {
		_, _, err := runCmd(t, tc.args...)
		var u usageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("tempora %q: error %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
	_, _, err := runCmd(t, "serve", "-problem", t.TempDir())
	var u usageError
	if err == nil || errors.As(err, &u) {
		t.Errorf("serve of an empty directory: error %v, want a failure that is not a usage error", err)
	}
	out := mustRun(t, "serve", "-h")
	golden(t, "serve-help.stdout", out)
}
