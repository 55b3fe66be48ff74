package main

import (
	"testing"

	"github.com/tempora-dev/tempora/explainertest"
)

// TestContract checks Occlusion against the contract every tempora method
// keeps: identical output for any worker count, cancellation, bad input,
// the D × L shape, finite scores and feature scores from cells.
func TestContract(t *testing.T) {
	if err := explainertest.Test(&Method, explainertest.Options{}); err != nil {
		t.Fatal(err)
	}
}
