package gen

import "strconv"

// KeyKind names the key kinds the port has (model::KeySpec without schema keys).
type KeyKind int

const (
	KeyNone KeyKind = iota
	KeyFixed
	KeySequence
	KeyUniform
	KeyZipf
)

type Key struct {
	Kind  KeyKind
	Fixed []byte
	N     uint64  // uniform and zipf
	S     float64 // zipf's exponent
}

// KeyGen writes one record's key per call (Rust's KeyGen); nil is no key. Its seed is the
// key generator's own (kafkabench mixes the producer's seed with its key stream and sends the
// result: a worker derives nothing).
type KeyGen struct {
	spec Key
	rng  Rng
	buf  []byte
	zipf *Zipf
}

func NewKeyGen(spec Key, seed uint64) *KeyGen {
	g := &KeyGen{spec: spec, rng: NewRng(seed), buf: make([]byte, 0, 24)}
	if spec.Kind == KeyZipf {
		g.zipf = NewZipf(spec.N, spec.S)
	}
	return g
}

func (g *KeyGen) Next(seq uint64) []byte {
	var k uint64
	switch g.spec.Kind {
	case KeyNone:
		return nil
	case KeyFixed:
		return g.spec.Fixed
	case KeySequence:
		k = seq
	case KeyUniform:
		k = g.rng.Next() % g.spec.N
	case KeyZipf:
		k = g.zipf.Sample(&g.rng) - 1
	}
	g.buf = append(g.buf[:0], "key-"...)
	g.buf = strconv.AppendUint(g.buf, k, 10)
	return g.buf
}

// Tombstones draws whether each record is a tombstone (`tombstones = f`), from a generator
// of its own: a record is a tombstone when its draw is at most the threshold kafkabench gives
// (`tombstone_at_most`, f × 2^64 − 1). Without a threshold nothing is drawn, as in Rust.
type Tombstones struct {
	rng     Rng
	atMost  uint64
	enabled bool
}

// NewTombstonesAtMost: a record is a tombstone when its draw is at most atMost (the protocol
// gives the threshold itself, `tombstone_at_most`).
func NewTombstonesAtMost(atMost, seed uint64) Tombstones {
	return Tombstones{rng: NewRng(seed), atMost: atMost, enabled: true}
}

// Next says whether the next record is a tombstone.
func (t *Tombstones) Next() bool {
	return t.enabled && t.rng.Next() <= t.atMost
}
