package atomicfile

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteContextStops checks that a fill writing through a buffer stops
// at the first flush after ctx is cancelled, with ctx's error, and that the
// destination keeps its old content and no temporary file is left.
func TestWriteContextStops(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteBytes(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const chunk, chunks = 1 << 12, 1000
	flushes := 0
	err := WriteContext(ctx, path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, chunk)
		b := make([]byte, chunk)
		for k := range chunks {
			if k == 3 {
				cancel()
			}
			if _, err := bw.Write(b); err != nil {
				return err
			}
			flushes++
		}
		return bw.Flush()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	// bufio holds each chunk until the next write flushes it: the write
	// of chunk 3, just after the cancellation, flushes chunk 2 and fails.
	if flushes != 3 {
		t.Errorf("%d chunks written, want 3 (stop at the first write after the cancellation)", flushes)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "old" {
		t.Errorf("destination now %q, %v; want it untouched", b, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("files left in the directory: %v", entries)
	}
}

// TestWriteContextDoneAfterFill checks that a ctx cancelled while fill
// runs, by a fill that never writes after it, still stops the write before
// the rename.
func TestWriteContextDoneAfterFill(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	ctx, cancel := context.WithCancel(context.Background())
	err := WriteContext(ctx, path, func(w io.Writer) error {
		_, err := w.Write([]byte("complete"))
		cancel()
		return err
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("destination exists (%v); want none", err)
	}
}
