// Command gomodel is an example model program for tempora's subprocess
// protocol (docs/protocol.md): it serves the additive windowed model of
// package examplemodel over its standard input and output, so that
//
//	tempora explain -model-cmd "gomodel -task classification" …
//
// explains it like any other model. A model in Go needs only to build its
// tempora.Model and call procmodel.Serve(os.Stdin, os.Stdout, model).
// Serve speaks protocol version 2: it keeps the data tempora sends once and
// applies the perturbed blocks of later requests to its own copy before
// calling Predict, and a missing value reaches Predict as NaN.
//
// Usage:
//
//	gomodel [-terms "feature:start:end:weight;…"] [-bias b] [-task regression|classification]
//
// The default terms are examplemodel.DefaultTerms.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/tempora-dev/tempora"
	"github.com/tempora-dev/tempora/internal/examplemodel"
	"github.com/tempora-dev/tempora/procmodel"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "gomodel:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("gomodel", flag.ContinueOnError)
	terms := fs.String("terms", examplemodel.DefaultTerms, "model terms `feature:start:end:weight;…`")
	bias := fs.Float64("bias", 0, "constant added to the score")
	task := fs.String("task", "regression", "regression (predict the score) or classification (predict sigmoid(score))")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	tk, err := tempora.ParseTask(*task)
	if err != nil {
		return err
	}
	ts, err := examplemodel.ParseTerms(*terms)
	if err != nil {
		return err
	}
	m := &examplemodel.Model{Terms: ts, Bias: *bias, Classification: tk == tempora.Classification}
	return procmodel.Serve(os.Stdin, os.Stdout, m)
}
