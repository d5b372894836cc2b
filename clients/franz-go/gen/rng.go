// Package gen is kafkabench's record generator ported from Rust (src/random.rs,
// src/run/payload.rs, src/run/pacer.rs, src/run/stamp.rs): the same seed gives the same keys,
// payload bytes, tombstones and send schedule as kafkabench's own producer, checked against the
// shared vectors in clients/vectors/.
//
// Floating-point expressions are written with explicit float64() conversions where Rust rounds
// after each operation: the Go spec lets a compiler fuse x*y+z into one FMA (it does on
// GOAMD64=v3 and on arm64), which would change a due time or a ramp's root in its last bit.
package gen

import "math/bits"

// goldenGamma is 2^64 divided by the golden ratio (Rust's GOLDEN_GAMMA).
const goldenGamma uint64 = 0x9E3779B97F4A7C15

// Rng is wyrand, as src/random.rs: one u64 per call, no allocation.
type Rng struct{ s uint64 }

// NewRng seeds the generator as Rust's Rng::new.
func NewRng(seed uint64) Rng { return Rng{seed ^ goldenGamma} }

// Next is Rust's Rng::next_u64.
func (r *Rng) Next() uint64 {
	r.s += 0xa0761d6478bd642f
	hi, lo := bits.Mul64(r.s, r.s^0xe7037ed1a0b428db)
	return hi ^ lo
}

// Float is uniform in [0, 1) (Rust's next_f64).
func (r *Rng) Float() float64 {
	return float64(r.Next()>>11) * (1.0 / float64(uint64(1)<<53))
}

// Fill writes random bytes into buf: 8 little-endian bytes per draw, the last draw's first
// bytes for a remainder (Rust's fill_with).
func (r *Rng) Fill(buf []byte) {
	n := len(buf) &^ 7
	for i := 0; i < n; i += 8 {
		x := r.Next()
		buf[i] = byte(x)
		buf[i+1] = byte(x >> 8)
		buf[i+2] = byte(x >> 16)
		buf[i+3] = byte(x >> 24)
		buf[i+4] = byte(x >> 32)
		buf[i+5] = byte(x >> 40)
		buf[i+6] = byte(x >> 48)
		buf[i+7] = byte(x >> 56)
	}
	if n < len(buf) {
		x := r.Next()
		for i := n; i < len(buf); i++ {
			buf[i] = byte(x)
			x >>= 8
		}
	}
}
