package gen

import (
	"math"
	"strconv"
)

const hexDigits = "0123456789abcdef"

// appendHex appends n random lowercase hex characters, low nibble first, 16 per draw (Rust's
// push_hex).
func appendHex(r *Rng, out []byte, n int) []byte {
	for n > 0 {
		x := r.Next()
		take := min(n, 16)
		for range take {
			out = append(out, hexDigits[x&0xf])
			x >>= 4
		}
		n -= take
	}
	return out
}

// PayloadKind names the payload kinds the port has; schema payloads are refused before a run.
type PayloadKind int

const (
	PayloadRandom PayloadKind = iota
	PayloadJSON
	PayloadConstant
	PayloadLines
)

// Payload describes a record's value, as model::PayloadSpec's simple kinds.
type Payload struct {
	Kind            PayloadKind
	Size            int
	Compressibility float64  // random
	Event           string   // json
	Bytes           []byte   // constant
	Lines           [][]byte // lines of a file (a constant is one line)
	Offset          uint64   // lines: record seq is line (seq + Offset) mod len(Lines)
	// Sizes, when set, draws each record's size (random, json, and a constant: one line cut to
	// the size) from its own stream, seeded SizeSeed; Size is then the largest.
	Sizes    *SizeTable
	SizeSeed uint64
}

// PayloadGen writes one record's value per call into a buffer it owns and reuses (Rust's
// PayloadGen): the slice it returns is valid until the next call.
type PayloadGen struct {
	spec   Payload
	rng    Rng
	buf    []byte
	offset uint64
	random int
	sizes  *SizeTable
	sizeR  Rng
}

func NewPayloadGen(spec Payload, seed uint64) *PayloadGen {
	g := &PayloadGen{spec: spec, rng: NewRng(seed), offset: spec.Offset, sizes: spec.Sizes}
	if spec.Sizes != nil {
		g.sizeR = NewRng(spec.SizeSeed)
	}
	switch spec.Kind {
	case PayloadRandom:
		g.random = int(math.Round(float64(spec.Size) * (1.0 - spec.Compressibility)))
		g.random = min(max(g.random, 0), spec.Size)
		// The compressible part stays zero: the buffer is never written past `random`.
		g.buf = make([]byte, spec.Size)
		if spec.Sizes != nil {
			g.random = 0 // nothing written yet (Rust's zero_from)
		}
	case PayloadJSON:
		g.buf = make([]byte, 0, max(spec.Size, 64)+128)
	}
	return g
}

// Shared says the values are slices of the spec's own data, never written again, so they may
// be handed to the client without a copy.
func (g *PayloadGen) Shared() bool {
	return g.spec.Kind == PayloadConstant || g.spec.Kind == PayloadLines
}

// Next is the value of record seq; unixMs is stamped into JSON records.
func (g *PayloadGen) Next(seq, unixMs uint64) []byte {
	if g.sizes != nil {
		return g.drawn(seq, unixMs)
	}
	switch g.spec.Kind {
	case PayloadConstant:
		return g.spec.Bytes
	case PayloadLines:
		// Rust indexes with usize arithmetic that wraps: the same on a 64-bit machine.
		return g.spec.Lines[(seq+g.offset)%uint64(len(g.spec.Lines))]
	case PayloadRandom:
		g.rng.Fill(g.buf[:g.random])
		return g.buf
	default:
		return g.json(seq, unixMs, g.spec.Size)
	}
}

// drawn is the value of a record whose size is drawn first (Rust's PayloadGen::generate).
func (g *PayloadGen) drawn(seq, unixMs uint64) []byte {
	size := g.sizes.Draw(&g.sizeR)
	switch g.spec.Kind {
	case PayloadConstant:
		return g.spec.Bytes[:size]
	case PayloadLines:
		// A constant is sent as one line, as long as the largest size.
		return g.spec.Lines[0][:size]
	case PayloadRandom:
		random := min(max(int(math.Round(float64(size)*(1.0-g.spec.Compressibility))), 0), size)
		// The compressible part is zero: random bytes a larger record left there are cleared.
		// g.random marks where the buffer is zero from; bytes past this record's size stay
		// as they are, so the mark only comes down to this record's own when it covered them.
		b := g.buf[:size]
		g.rng.Fill(b[:random])
		if g.random > random {
			clear(b[random:min(g.random, size)])
		}
		if g.random <= size {
			g.random = random
		}
		return b
	default:
		return g.json(seq, unixMs, size)
	}
}

func (g *PayloadGen) json(seq, unixMs uint64, size int) []byte {
	b := g.buf[:0]
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"id":"`...)
	b = appendHex(&g.rng, b, 16)
	b = append(b, `","ts":`...)
	b = strconv.AppendUint(b, unixMs, 10)
	b = append(b, `,"event":"`...)
	b = append(b, g.spec.Event...)
	b = append(b, `","payload":"`...)
	b = appendHex(&g.rng, b, max(size-(len(b)+2), 0))
	b = append(b, `"}`...)
	g.buf = b
	return b
}
