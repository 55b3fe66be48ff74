package tempora

import (
	"hash/fnv"
	"math/rand/v2"
)

// DeriveSeed derives the seed of a random stream from a run seed and a key
// path, for example DeriveSeed(seed, "time", "feature", "3", "overall"). The
// result depends only on its arguments, never on scheduling, so a stream can
// be created wherever the work happens to run and adding a key elsewhere
// never reshuffles existing streams. Each key is hashed with FNV-1a and mixed
// into the state with SplitMix64's finaliser; the separator between keys is
// significant ("ab" differs from "a", "b").
func DeriveSeed(seed uint64, key ...string) uint64 {
	s := splitMix64(seed ^ 0x9e3779b97f4a7c15)
	for _, k := range key {
		h := fnv.New64a()
		h.Write([]byte(k))
		s = splitMix64(s ^ h.Sum64())
	}
	return s
}

// NewRand returns a PCG generator for the stream (seed, key...). The
// generator is not safe for concurrent use: create one per goroutine or task.
func NewRand(seed uint64, key ...string) *rand.Rand {
	s := DeriveSeed(seed, key...)
	return rand.New(rand.NewPCG(s, splitMix64(s)))
}

// splitMix64 is the finaliser of Steele, Lea and Flood's SplitMix64: a
// bijective mixer with full avalanche.
func splitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
