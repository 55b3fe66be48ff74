package tempora

import "math/rand/v2"

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
		s = splitMix64(s ^ fnv64a(k))
	}
	return s
}

// fnv64a is the 64-bit FNV-1a hash of k, computed without allocating (it
// runs once per permutation draw).
func fnv64a(k string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(k); i++ {
		h ^= uint64(k[i])
		h *= prime
	}
	return h
}

// NewRand returns a PCG generator for the stream (seed, key...). The
// generator is not safe for concurrent use: create one per goroutine or task.
func NewRand(seed uint64, key ...string) *rand.Rand {
	pcg := new(rand.PCG)
	SeedPCG(pcg, seed, key...)
	return rand.New(pcg)
}

// SeedPCG resets pcg to the start of the stream (seed, key...): a generator
// wrapping pcg then yields exactly what NewRand(seed, key...) would. Hot
// loops use it to reuse one generator instead of allocating one per stream.
func SeedPCG(pcg *rand.PCG, seed uint64, key ...string) {
	s := DeriveSeed(seed, key...)
	pcg.Seed(s, splitMix64(s))
}

// splitMix64 is the finaliser of Steele, Lea and Flood's SplitMix64: a
// bijective mixer with full avalanche.
func splitMix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
