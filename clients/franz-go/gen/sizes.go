package gen

import "math/bits"

// SizeTable draws a record's size as kafkabench's SizeTable::draw (src/model/size.rs): bins of
// whole sizes, picked by an alias table with integer thresholds, then a size uniformly within
// the bin. Two draws, integer arithmetic only, so every client draws the same sizes.
type SizeTable struct {
	Lo, Span []uint32 // bin i holds sizes Lo[i] .. Lo[i]+Span[i]-1
	Keep     []uint64 // slot i keeps its bin below Keep[i] (of 2^64), else takes Alias[i]
	Alias    []uint32
}

// Draw is one size from r (the size stream's own generator).
func (t *SizeTable) Draw(r *Rng) int {
	i, low := bits.Mul64(r.Next(), uint64(len(t.Keep)))
	b := i
	if low >= t.Keep[i] {
		b = uint64(t.Alias[i])
	}
	within, _ := bits.Mul64(r.Next(), uint64(t.Span[b]))
	return int(t.Lo[b]) + int(within)
}

// Largest is the largest size the table draws.
func (t *SizeTable) Largest() int {
	n := len(t.Lo) - 1
	return int(t.Lo[n]) + int(t.Span[n]) - 1
}
