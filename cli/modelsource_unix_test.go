//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tempora-dev/tempora/internal/examplemodel"
	"github.com/tempora-dev/tempora/procmodel"
)

// socketpair returns a connected pair of unix stream sockets, close-on-exec
// so that no child process inherits a copy (which would hide the end of a
// connection from the other side).
func socketpair() ([2]int, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return fds, err
	}
	syscall.CloseOnExec(fds[0])
	syscall.CloseOnExec(fds[1])
	return fds, nil
}

// TestExplainModelFD serves the example model over a socketpair whose end
// is passed with -model-fd, and checks that the explanation equals the one
// through -model-cmd.
func TestExplainModelFD(t *testing.T) {
	t.Setenv(serverEnv, "1")
	p := filepath.Join(t.TempDir(), "p")
	mustRun(t, "synth", "-out", p, "-instances", "60", "-features", "8", "-timesteps", "20", "-task", "regression", "-noise", "auto", "-seed", "4")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data := []string{"explain", "-data", filepath.Join(p, "data.npy"), "-targets", filepath.Join(p, "targets.npy"), "-task", "regression", "-permutations", "20", "-seed", "2"}
	want := mustRun(t, append(data, "-model-cmd", "'"+strings.ReplaceAll(exe, "'", `'\''`)+"' -test.run=^$")...)

	terms, err := examplemodel.ParseTerms(examplemodel.DefaultTerms)
	if err != nil {
		t.Fatal(err)
	}
	var fds []string
	for range 2 {
		pair, err := socketpair()
		if err != nil {
			t.Fatal(err)
		}
		model := os.NewFile(uintptr(pair[0]), "model end")
		done := make(chan error, 1)
		go func() {
			done <- procmodel.Serve(model, model, &examplemodel.Model{Terms: terms})
			model.Close()
		}()
		t.Cleanup(func() {
			if err := <-done; err != nil {
				t.Errorf("model server: %v", err)
			}
		})
		fds = append(fds, strconv.Itoa(pair[1]))
	}
	got := mustRun(t, append(data, "-model-fd", strings.Join(fds, ","))...)
	if got != want {
		t.Errorf("-model-fd report differs from -model-cmd:\n%s\n%s", got, want)
	}
}
