//go:build unix

package cli

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tempora-dev/tempora"
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

// TestStartModelHolds checks that both model sources, -model-cmd and
// -model-fd, yield a pool with the held data capability (so that the
// explainers' draws go as blocks), which explain passes on explicitly.
func TestStartModelHolds(t *testing.T) {
	t.Setenv(serverEnv, "1")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := "'" + strings.ReplaceAll(exe, "'", `'\''`) + "' -test.run=^$"
	pair, err := socketpair()
	if err != nil {
		t.Fatal(err)
	}
	model := os.NewFile(uintptr(pair[0]), "model end")
	done := make(chan error, 1)
	go func() {
		done <- procmodel.Serve(model, model, tempora.ModelFunc(func(dst []float64, x *tempora.Tensor) error { return nil }))
		model.Close()
	}()
	for _, src := range []struct{ cmd, fds string }{{cmd, ""}, {"", strconv.Itoa(pair[1])}} {
		pm, err := startModel(t.Context(), src.cmd, 1, src.fds, procmodel.Options{}, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if pm.Held() == nil {
			t.Errorf("model source %+v: no held data capability", src)
		}
		if err := pm.Close(); err != nil {
			t.Error(err)
		}
	}
	if err := <-done; err != nil {
		t.Errorf("model server: %v", err)
	}
}
