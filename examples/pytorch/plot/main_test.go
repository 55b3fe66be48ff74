package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMeanCI(t *testing.T) {
	const tol = 1e-12 // exact arithmetic on small integers, up to rounding
	for _, tc := range []struct {
		v          []float64
		mean, half float64
	}{
		{[]float64{3}, 3, 0},
		{[]float64{1, 3}, 2, 1.96 * math.Sqrt(2) / math.Sqrt(2)}, // SD √2, n 2
		{[]float64{2, 4, 4, 4, 5, 5, 7, 9}, 5, 1.96 * math.Sqrt(32.0/7) / math.Sqrt(8)},
	} {
		m, h := meanCI(tc.v)
		if math.Abs(m-tc.mean) > tol || math.Abs(h-tc.half) > tol {
			t.Errorf("meanCI(%v) = %v, %v; want %v, %v", tc.v, m, h, tc.mean, tc.half)
		}
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("selection-per-problem.csv", "network,problem,set,features,auroc\n"+
		"cnn,0,all,10,0.9\ncnn,0,time,5,0.92\ncnn,0,random,5,0.7\ncnn,1,all,10,0.95\ncnn,1,time,4,0.96\ncnn,1,random,4,0.8\n")
	write("detection-per-problem.csv", "network,problem,method,feature_power,feature_fdr,timestep_power,timestep_fdr\n"+
		"cnn,0,time,1,0,0.9,0.1\ncnn,1,time,0.8,0.2,0.7,0.3\ncnn,0,perm,1,0,0.8,0.2\ncnn,1,perm,1,0,0.85,0.15\n")
	if err := run(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"selection.png", "selection.svg", "detection.png", "detection.svg"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.Size() == 0 {
			t.Errorf("%s: not written (%v)", name, err)
		}
	}
	svg, err := os.ReadFile(filepath.Join(dir, "selection.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, label := range []string{"(a) all", "(b) TIME", "(d) random", "CNN"} {
		if !strings.Contains(string(svg), label) {
			t.Errorf("selection.svg lacks %q", label)
		}
	}
	if strings.Contains(string(svg), "(c) PERM") {
		t.Errorf("selection.svg shows a feature set absent from the data")
	}

	write("detection-per-problem.csv", "network,problem,method,feature_power\ncnn,0,time,1\n")
	if err := run(dir); err == nil || !strings.Contains(err.Error(), "feature_fdr") {
		t.Errorf("missing column: got error %v, want one naming feature_fdr", err)
	}
}
