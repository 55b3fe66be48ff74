package tempora

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// sequential returns an m × d × l tensor whose element (i, j, t) is
// 10000·i + 100·j + t, so every value names its own position.
func sequential(m, d, l int) *Tensor {
	x := NewTensor(m, d, l)
	for i := 0; i < m; i++ {
		for j := 0; j < d; j++ {
			for t := 0; t < l; t++ {
				x.Set(i, j, t, float64(10000*i+100*j+t))
			}
		}
	}
	return x
}

func TestTensorLayout(t *testing.T) {
	x := sequential(3, 4, 5)
	// Row-major (C) order: element (i, j, t) at (i*D+j)*L+t.
	for i := 0; i < 3; i++ {
		for j := 0; j < 4; j++ {
			for s := 0; s < 5; s++ {
				if got, want := x.Data[(i*4+j)*5+s], float64(10000*i+100*j+s); got != want {
					t.Fatalf("Data at (%d, %d, %d) = %v, want %v", i, j, s, got, want)
				}
				if x.Index(i, j, s) != (i*4+j)*5+s {
					t.Fatalf("Index(%d, %d, %d) = %d", i, j, s, x.Index(i, j, s))
				}
			}
		}
	}
	if got := x.Series(1, 2); !slices.Equal(got, []float64{10200, 10201, 10202, 10203, 10204}) {
		t.Errorf("Series(1, 2) = %v", got)
	}
	if got := x.Window(2, 3, 1, 3); !slices.Equal(got, []float64{20301, 20302, 20303}) {
		t.Errorf("Window(2, 3, 1, 3) = %v", got)
	}
	inst := x.Instance(1)
	if len(inst) != 20 || inst[0] != 10000 || inst[2*5+4] != 10204 {
		t.Errorf("Instance(1) = %v", inst)
	}
	rows := x.Rows(1, 3)
	if rows.M != 2 || rows.At(0, 0, 0) != 10000 || rows.At(1, 3, 4) != 20304 {
		t.Errorf("Rows(1, 3) = %+v", rows)
	}
	// Views alias the storage; appending to one must not overwrite the next
	// row (full slice expressions cap the capacity).
	x.Series(0, 0)[0] = -1
	if x.At(0, 0, 0) != -1 {
		t.Error("Series does not alias the tensor")
	}
	s := append(x.Series(0, 0), 99)
	if x.At(0, 1, 0) != 100 || len(s) != 6 {
		t.Error("append to a Series overwrote the next series")
	}
	c := x.Clone()
	c.Data[0] = 42
	if x.Data[0] == 42 {
		t.Error("Clone shares storage")
	}
	if !c.SameShape(x) || c.SameShape(NewTensor(3, 4, 4)) {
		t.Error("SameShape")
	}
}

func TestTensorFrom(t *testing.T) {
	if _, err := TensorFrom(2, 3, 4, make([]float64, 24)); err != nil {
		t.Errorf("matching length: %v", err)
	}
	for _, tc := range []struct {
		m, d, l, n int
		want       string
	}{
		{2, 3, 4, 23, "23 values cannot fill a 2×3×4 tensor (need 24)"},
		{-1, 3, 4, 0, "negative tensor dimension -1×3×4"},
	} {
		_, err := TensorFrom(tc.m, tc.d, tc.l, make([]float64, tc.n))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "tempora: ") {
			t.Errorf("TensorFrom(%d, %d, %d, %d values) error %v, want %q", tc.m, tc.d, tc.l, tc.n, err, tc.want)
		}
	}
}

func TestTensorValidate(t *testing.T) {
	bad := func(i int, v float64) *Tensor {
		x := sequential(2, 3, 4)
		x.Data[i] = v
		return x
	}
	for _, tc := range []struct {
		name string
		x    *Tensor
		want string // "" for no error
	}{
		{"valid", sequential(2, 3, 4), ""},
		{"nil", nil, "nil data tensor"},
		{"zero value", &Tensor{}, "empty shape 0×0×0"},
		{"no timesteps", &Tensor{M: 2, D: 3}, "empty shape 2×3×0"},
		{"short storage", &Tensor{M: 2, D: 3, L: 4, Data: make([]float64, 23)}, "holds 23 values, shape 2×3×4 needs 24"},
		// Element 1*12 + 2*4 + 3 = 23 is instance 1, feature 2, timestep 3.
		{"NaN", bad(23, math.NaN()), "instance 1, feature 2, timestep 3 is NaN"},
		{"+Inf", bad(5, math.Inf(1)), "instance 0, feature 1, timestep 1 is +Inf"},
		{"-Inf", bad(12, math.Inf(-1)), "instance 1, feature 0, timestep 0 is -Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.x.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one containing %q", err, tc.want)
			case err != nil && !strings.HasPrefix(err.Error(), "tempora: "):
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// TestTensorValidateFirst checks, on a tensor of several of the blocks
// Validate checks at a time, that the error names the first NaN or
// infinite value wherever it lies, as the loop over every value did
// (validateValuesReference).
func TestTensorValidateFirst(t *testing.T) {
	validateValuesReference := func(x *Tensor) error {
		for k, v := range x.Data {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				i, r := k/(x.D*x.L), k%(x.D*x.L)
				if math.IsNaN(v) {
					return fmt.Errorf("tempora: data value at instance %d, feature %d, timestep %d is NaN (a missing value), and this needs complete data", i, r/x.L, r%x.L)
				}
				return fmt.Errorf("tempora: data value at instance %d, feature %d, timestep %d is %v", i, r/x.L, r%x.L, v)
			}
		}
		return nil
	}
	nan, inf := math.NaN(), math.Inf(1)
	for _, bad := range []map[int]float64{ // offset: value
		nil, {0: nan}, {1023: inf}, {1024: -inf}, {1025: nan}, {2047: nan, 2048: inf},
		{1500: inf, 1501: nan}, {1500: nan, 1501: inf}, {4499: -inf}, {0: inf, 4499: nan},
	} {
		x := sequential(3, 5, 300) // 4500 values: four blocks and a part
		for k, v := range bad {
			x.Data[k] = v
		}
		got, want := x.Validate(), validateValuesReference(x)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("error %v, want %v", got, want)
		}
	}
}

// naivePermuteInstances is the definition of PermuteInstances written
// element by element on a full copy.
func naivePermuteInstances(src *Tensor, feats []int, start, end int, perm []int) *Tensor {
	out := src.Clone()
	for i := 0; i < src.M; i++ {
		for _, j := range feats {
			for t := start; t <= end; t++ {
				out.Set(i, j, t, src.At(perm[i], j, t))
			}
		}
	}
	return out
}

// naivePermuteTimesteps is the definition of PermuteTimesteps written
// element by element on a full copy.
func naivePermuteTimesteps(src *Tensor, feats []int, start, end int, order []int) *Tensor {
	out := src.Clone()
	for i := 0; i < src.M; i++ {
		for _, j := range feats {
			for k := 0; k <= end-start; k++ {
				out.Set(i, j, start+k, src.At(i, j, start+order[k]))
			}
		}
	}
	return out
}

func TestBlockOperations(t *testing.T) {
	const m, d, l = 7, 5, 9
	for _, tc := range []struct {
		name       string
		feats      []int
		start, end int
	}{
		{"one feature, whole sequence", []int{2}, 0, l - 1},
		{"one feature, one timestep", []int{0}, 4, 4},
		{"group, window", []int{1, 3, 4}, 2, 6},
		{"unsorted group, prefix", []int{4, 0}, 0, 2},
		{"all features, suffix", []int{0, 1, 2, 3, 4}, 5, l - 1},
		{"no features", nil, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := NewRand(1, "test", tc.name)
			src := sequential(m, d, l)
			orig := src.Clone()
			dst := src.Clone()
			for trial := 0; trial < 5; trial++ {
				perm := rng.Perm(m)
				PermuteInstances(dst, src, tc.feats, tc.start, tc.end, perm)
				if want := naivePermuteInstances(src, tc.feats, tc.start, tc.end, perm); !slices.Equal(dst.Data, want.Data) {
					t.Fatalf("PermuteInstances(perm %v) differs from the reference", perm)
				}
				RestoreBlock(dst, src, tc.feats, tc.start, tc.end)
				if !slices.Equal(dst.Data, src.Data) {
					t.Fatal("RestoreBlock after PermuteInstances did not restore the data")
				}

				order := rng.Perm(tc.end - tc.start + 1)
				PermuteTimesteps(dst, src, tc.feats, tc.start, tc.end, order)
				if want := naivePermuteTimesteps(src, tc.feats, tc.start, tc.end, order); !slices.Equal(dst.Data, want.Data) {
					t.Fatalf("PermuteTimesteps(order %v) differs from the reference", order)
				}
				RestoreBlock(dst, src, tc.feats, tc.start, tc.end)
				if !slices.Equal(dst.Data, src.Data) {
					t.Fatal("RestoreBlock after PermuteTimesteps did not restore the data")
				}

				// The block writers give the perturbed copy's block, in
				// Block's layout, without a copy.
				if len(tc.feats) == 0 {
					continue
				}
				vals := make([]float64, m*len(tc.feats)*(tc.end-tc.start+1))
				PermuteInstancesBlock(vals, src, tc.feats, tc.start, tc.end, perm)
				if want := blockOf(naivePermuteInstances(src, tc.feats, tc.start, tc.end, perm), tc.feats, tc.start, tc.end); !slices.Equal(vals, want) {
					t.Fatalf("PermuteInstancesBlock(perm %v) differs from the block of PermuteInstances", perm)
				}
				PermuteTimestepsBlock(vals, src, tc.feats, tc.start, tc.end, order)
				if want := blockOf(naivePermuteTimesteps(src, tc.feats, tc.start, tc.end, order), tc.feats, tc.start, tc.end); !slices.Equal(vals, want) {
					t.Fatalf("PermuteTimestepsBlock(order %v) differs from the block of PermuteTimesteps", order)
				}
			}
			if !slices.Equal(src.Data, orig.Data) {
				t.Error("a block operation modified its source")
			}
		})
	}
}

// blockOf returns x's values of feats over [start, end], in Block's
// layout, as a Block applied to the data would carry them.
func blockOf(x *Tensor, feats []int, start, end int) []float64 {
	var out []float64
	for i := range x.M {
		for _, j := range feats {
			for t := start; t <= end; t++ {
				out = append(out, x.At(i, j, t))
			}
		}
	}
	return out
}

// TestBlockOperationsTouchOnlyTheBlock fills the working copy with a
// sentinel and checks that every element outside the block keeps it, so
// the operations neither read from nor write to anything else.
func TestBlockOperationsTouchOnlyTheBlock(t *testing.T) {
	const m, d, l = 6, 4, 8
	const sentinel = -12345.0
	feats, start, end := []int{1, 3}, 2, 5
	inBlock := func(j, s int) bool { return slices.Contains(feats, j) && s >= start && s <= end }
	src := sequential(m, d, l)
	perm := []int{5, 4, 3, 2, 1, 0}
	order := []int{3, 0, 2, 1}
	for name, op := range map[string]func(dst *Tensor){
		"PermuteInstances": func(dst *Tensor) { PermuteInstances(dst, src, feats, start, end, perm) },
		"PermuteTimesteps": func(dst *Tensor) { PermuteTimesteps(dst, src, feats, start, end, order) },
		"RestoreBlock":     func(dst *Tensor) { RestoreBlock(dst, src, feats, start, end) },
	} {
		dst := NewTensor(m, d, l)
		for k := range dst.Data {
			dst.Data[k] = sentinel
		}
		op(dst)
		for i := 0; i < m; i++ {
			for j := 0; j < d; j++ {
				for s := 0; s < l; s++ {
					v := dst.At(i, j, s)
					if inBlock(j, s) && v == sentinel {
						t.Errorf("%s left block element (%d, %d, %d) unwritten", name, i, j, s)
					}
					if !inBlock(j, s) && v != sentinel {
						t.Errorf("%s wrote element (%d, %d, %d) outside the block", name, i, j, s)
					}
				}
			}
		}
	}
}

func TestBlockOperationsPanicOnMisuse(t *testing.T) {
	src := sequential(3, 2, 4)
	dst := src.Clone()
	for _, tc := range []struct {
		name string
		op   func()
		want string
	}{
		{"shape mismatch", func() { RestoreBlock(NewTensor(3, 2, 5), src, []int{0}, 0, 1) }, "block operation on tensors of shape"},
		{"window past the end", func() { RestoreBlock(dst, src, []int{0}, 2, 4) }, "block window [2, 4] outside 0..3"},
		{"reversed window", func() { RestoreBlock(dst, src, []int{0}, 2, 1) }, "block window [2, 1]"},
		{"negative start", func() { RestoreBlock(dst, src, []int{0}, -1, 1) }, "block window [-1, 1]"},
		{"feature out of range", func() { RestoreBlock(dst, src, []int{2}, 0, 1) }, "block feature 2 outside 0..1"},
		{"short instance permutation", func() { PermuteInstances(dst, src, []int{0}, 0, 1, []int{0, 1}) }, "instance permutation of length 2 for 3 instances"},
		{"long timestep order", func() { PermuteTimesteps(dst, src, []int{0}, 0, 1, []int{0, 1, 2}) }, "timestep permutation of length 3 for a window of 2"},
		{"negative dimension", func() { NewTensor(1, -2, 3) }, "negative tensor dimension"},
		{"short block values", func() { PermuteInstancesBlock(make([]float64, 5), src, []int{0}, 0, 1, []int{0, 1, 2}) }, "block of 5 values for 3 instances × 1 features × 2 timesteps"},
		{"block feature out of range", func() { PermuteTimestepsBlock(make([]float64, 6), src, []int{2}, 0, 1, []int{1, 0}) }, "block feature 2 outside 0..1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				msg, _ := r.(string)
				if !strings.Contains(msg, tc.want) {
					t.Errorf("panic %v, want one containing %q", r, tc.want)
				}
			}()
			tc.op()
		})
	}
}

func TestBlockOperationsDoNotAllocate(t *testing.T) {
	src := sequential(50, 4, 10)
	dst := src.Clone()
	feats, perm, order := []int{0, 2}, NewRand(2, "perm").Perm(50), []int{2, 0, 1}
	vals := make([]float64, 50*len(feats)*3)
	allocs := testing.AllocsPerRun(10, func() {
		PermuteInstances(dst, src, feats, 3, 5, perm)
		PermuteTimesteps(dst, src, feats, 3, 5, order)
		RestoreBlock(dst, src, feats, 3, 5)
		PermuteInstancesBlock(vals, src, feats, 3, 5, perm)
		PermuteTimestepsBlock(vals, src, feats, 3, 5, order)
	})
	if allocs != 0 {
		t.Errorf("block operations allocate %v times per run, want 0", allocs)
	}
}

func BenchmarkPermuteInstances(b *testing.B) {
	// Table 1's shape: 1000 instances, 10 features, 20 timesteps.
	src := sequential(1000, 10, 20)
	dst := src.Clone()
	perm := NewRand(3, "bench").Perm(1000)
	b.ReportAllocs()
	for b.Loop() {
		PermuteInstances(dst, src, []int{4}, 0, 19, perm)
		RestoreBlock(dst, src, []int{4}, 0, 19)
	}
}
