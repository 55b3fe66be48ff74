package tempora

import (
	"fmt"
	"math"

	"github.com/tempora-dev/tempora/internal/finite"
)

// Tensor is a dense M × D × L array of float64: M instances, D features and
// L timesteps. It is stored contiguously in row-major (C) order, so element
// (i, j, t) lives at Data[(i*D+j)*L+t]. A feature's series for one instance is
// therefore a contiguous slice of length L, and one instance is a contiguous
// slice of length D*L (the "unrolled" row used by tabular explainers, whose
// column j*L+t is feature j at timestep t).
//
// The zero value is an empty tensor. Methods panic on out-of-range indices,
// like slice indexing; functions that accept user data return errors instead.
type Tensor struct {
	M, D, L int
	Data    []float64
}

// NewTensor returns a zeroed M × D × L tensor. It panics if a dimension is
// negative.
func NewTensor(m, d, l int) *Tensor {
	if m < 0 || d < 0 || l < 0 {
		panic(fmt.Sprintf("tempora: negative tensor dimension %d×%d×%d", m, d, l))
	}
	return &Tensor{M: m, D: d, L: l, Data: make([]float64, m*d*l)}
}

// TensorFrom wraps data (not copied) as an M × D × L tensor. It returns an
// error if the length of data does not match the shape.
func TensorFrom(m, d, l int, data []float64) (*Tensor, error) {
	if m < 0 || d < 0 || l < 0 {
		return nil, fmt.Errorf("tempora: negative tensor dimension %d×%d×%d", m, d, l)
	}
	if len(data) != m*d*l {
		return nil, fmt.Errorf("tempora: %d values cannot fill a %d×%d×%d tensor (need %d)", len(data), m, d, l, m*d*l)
	}
	return &Tensor{M: m, D: d, L: l, Data: data}, nil
}

// Index returns the offset of element (i, j, t) in Data.
func (x *Tensor) Index(i, j, t int) int { return (i*x.D+j)*x.L + t }

// At returns element (i, j, t).
func (x *Tensor) At(i, j, t int) float64 { return x.Data[(i*x.D+j)*x.L+t] }

// Set sets element (i, j, t) to v.
func (x *Tensor) Set(i, j, t int, v float64) { x.Data[(i*x.D+j)*x.L+t] = v }

// Series returns feature j of instance i as a slice of length L that aliases
// the tensor's storage.
func (x *Tensor) Series(i, j int) []float64 {
	o := (i*x.D + j) * x.L
	return x.Data[o : o+x.L : o+x.L]
}

// Window returns timesteps [start, end] (inclusive) of feature j of instance
// i as a slice that aliases the tensor's storage.
func (x *Tensor) Window(i, j, start, end int) []float64 {
	o := (i*x.D + j) * x.L
	return x.Data[o+start : o+end+1 : o+end+1]
}

// Instance returns instance i as a slice of length D*L that aliases the
// tensor's storage (feature-major: column j*L+t).
func (x *Tensor) Instance(i int) []float64 {
	n := x.D * x.L
	return x.Data[i*n : (i+1)*n : (i+1)*n]
}

// Rows returns instances [lo, hi) as a tensor that aliases x's storage.
func (x *Tensor) Rows(lo, hi int) *Tensor {
	n := x.D * x.L
	return &Tensor{M: hi - lo, D: x.D, L: x.L, Data: x.Data[lo*n : hi*n : hi*n]}
}

// Clone returns a deep copy of x.
func (x *Tensor) Clone() *Tensor {
	return &Tensor{M: x.M, D: x.D, L: x.L, Data: append([]float64(nil), x.Data...)}
}

// SameShape reports whether x and y have the same dimensions.
func (x *Tensor) SameShape(y *Tensor) bool { return x.M == y.M && x.D == y.D && x.L == y.L }

// Validate checks that the shape is positive and consistent with the storage
// and that every value is finite. The error, a *DataError, names the first
// offending element.
func (x *Tensor) Validate() error {
	if err := x.validateShape(); err != nil {
		return err
	}
	k := finite.Index(x.Data, func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
	if k < 0 {
		return nil
	}
	v := x.Data[k]
	i, r := k/(x.D*x.L), k%(x.D*x.L)
	j, t := r/x.L, r%x.L
	if math.IsNaN(v) {
		return dataErrorf(KindMissing, "tempora: data value at instance %d, feature %d, timestep %d is NaN (a missing value), and this needs complete data", i, j, t).At(i, j, t).WithValue(v)
	}
	return dataErrorf(KindInfinite, "tempora: data value at instance %d, feature %d, timestep %d is %v", i, j, t, v).At(i, j, t).WithValue(v).WithCount(CountInf(x.Data))
}

// validateShape checks that the shape is positive and consistent with the
// storage.
func (x *Tensor) validateShape() error {
	if x == nil {
		return dataErrorf(KindShape, "tempora: nil data tensor")
	}
	if x.M <= 0 || x.D <= 0 || x.L <= 0 {
		return dataErrorf(KindShape, "tempora: data tensor has empty shape %d×%d×%d", x.M, x.D, x.L)
	}
	if len(x.Data) != x.M*x.D*x.L {
		return dataErrorf(KindShape, "tempora: data tensor holds %d values, shape %d×%d×%d needs %d", len(x.Data), x.M, x.D, x.L, x.M*x.D*x.L)
	}
	return nil
}

// The following operations are what permutation tests need: they rewrite
// only a block (a set of features over a window of timesteps) of a working
// copy dst, reading the original values from src, so a test never copies a
// whole tensor per permutation. dst and src must have the same shape and must
// not share storage. feats lists feature indices; start and end are the
// inclusive timestep bounds of the block.

// PermuteInstances sets, for every instance i and every feature j in feats,
// dst[i, j, start..end] = src[perm[i], j, start..end]. perm must be a
// permutation of 0..M-1 (one instance permutation shared by the whole block,
// so a group of features moves together).
func PermuteInstances(dst, src *Tensor, feats []int, start, end int, perm []int) {
	checkBlock(dst, src, feats, start, end)
	permuteInstances(dst.Data, func(i, j, _ int) int { return dst.Index(i, j, start) }, src, feats, start, end, perm)
}

// PermuteTimesteps sets, for every instance i and every feature j in feats,
// dst[i, j, start+k] = src[i, j, start+order[k]] for k = 0..end-start. order
// must be a permutation of 0..end-start, shared by all instances.
func PermuteTimesteps(dst, src *Tensor, feats []int, start, end int, order []int) {
	checkBlock(dst, src, feats, start, end)
	permuteTimesteps(dst.Data, func(i, j, _ int) int { return dst.Index(i, j, start) }, src, feats, start, end, order)
}

// PermuteInstancesBlock writes into vals the block that PermuteInstances
// writes into a working copy, in the layout of a block of held data
// (package resident: value (i, f, t) at (i·len(feats) + f)·(end−start+1) +
// t): src[perm[i], feats[f], start+t]. A draw for a model that holds the
// data is written so, straight from the data, without a working copy. vals must hold
// M·len(feats)·(end−start+1) values.
func PermuteInstancesBlock(vals []float64, src *Tensor, feats []int, start, end int, perm []int) {
	checkBlockValues(vals, src, feats, start, end)
	w := end - start + 1
	permuteInstances(vals, func(i, _, f int) int { return (i*len(feats) + f) * w }, src, feats, start, end, perm)
}

// PermuteTimestepsBlock is PermuteInstancesBlock for PermuteTimesteps:
// value (i, f, k) of vals is src[i, feats[f], start+order[k]].
func PermuteTimestepsBlock(vals []float64, src *Tensor, feats []int, start, end int, order []int) {
	checkBlockValues(vals, src, feats, start, end)
	w := end - start + 1
	permuteTimesteps(vals, func(i, _, f int) int { return (i*len(feats) + f) * w }, src, feats, start, end, order)
}

// permuteInstances is the rule of PermuteInstances and
// PermuteInstancesBlock: the values of instance perm[i] and feature j =
// feats[f] over [start, end] go to dst[at(i, j, f):].
func permuteInstances(dst []float64, at func(i, j, f int) int, src *Tensor, feats []int, start, end int, perm []int) {
	if len(perm) != src.M {
		panic(fmt.Sprintf("tempora: instance permutation of length %d for %d instances", len(perm), src.M))
	}
	w := end - start + 1
	for i, p := range perm {
		for f, j := range feats {
			do := at(i, j, f)
			so := src.Index(p, j, start)
			copy(dst[do:do+w], src.Data[so:so+w])
		}
	}
}

// permuteTimesteps is the rule of PermuteTimesteps and
// PermuteTimestepsBlock: src[i, j, start+order[k]] goes to dst[at(i, j,
// f)+k], j = feats[f].
func permuteTimesteps(dst []float64, at func(i, j, f int) int, src *Tensor, feats []int, start, end int, order []int) {
	if len(order) != end-start+1 {
		panic(fmt.Sprintf("tempora: timestep permutation of length %d for a window of %d", len(order), end-start+1))
	}
	for i := 0; i < src.M; i++ {
		for f, j := range feats {
			d := dst[at(i, j, f):][:len(order)]
			s := src.Data[src.Index(i, j, start):]
			for k, o := range order {
				d[k] = s[o]
			}
		}
	}
}

// RestoreBlock copies src's values for feats over [start, end] back into dst,
// undoing PermuteInstances or PermuteTimesteps.
func RestoreBlock(dst, src *Tensor, feats []int, start, end int) {
	checkBlock(dst, src, feats, start, end)
	w := end - start + 1
	for i := 0; i < src.M; i++ {
		for _, j := range feats {
			o := src.Index(i, j, start)
			copy(dst.Data[o:o+w], src.Data[o:o+w])
		}
	}
}

func checkBlock(dst, src *Tensor, feats []int, start, end int) {
	if !dst.SameShape(src) {
		panic(fmt.Sprintf("tempora: block operation on tensors of shape %d×%d×%d and %d×%d×%d", dst.M, dst.D, dst.L, src.M, src.D, src.L))
	}
	checkWindow(src, feats, start, end)
}

// checkBlockValues checks a block's values for PermuteInstancesBlock and
// PermuteTimestepsBlock.
func checkBlockValues(vals []float64, src *Tensor, feats []int, start, end int) {
	checkWindow(src, feats, start, end)
	if want := src.M * len(feats) * (end - start + 1); len(vals) != want {
		panic(fmt.Sprintf("tempora: block of %d values for %d instances × %d features × %d timesteps", len(vals), src.M, len(feats), end-start+1))
	}
}

// checkWindow checks a block's features and timesteps against src.
func checkWindow(src *Tensor, feats []int, start, end int) {
	if start < 0 || end >= src.L || start > end {
		panic(fmt.Sprintf("tempora: block window [%d, %d] outside 0..%d", start, end, src.L-1))
	}
	for _, j := range feats {
		if j < 0 || j >= src.D {
			panic(fmt.Sprintf("tempora: block feature %d outside 0..%d", j, src.D-1))
		}
	}
}
