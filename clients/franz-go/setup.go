package main

import (
	"errors"
	"fmt"

	"kafkabench/clients/franz-go/gen"
)

// setupMsg is a producer's `setup` (PROTOCOL.md).
type setupMsg struct {
	Msg               string            `json:"msg"`
	Role              string            `json:"role"`
	OriginMonotonicNs u64               `json:"origin_monotonic_ns"`
	UnixMsAtOrigin    u64               `json:"unix_ms_at_origin"`
	Properties        map[string]string `json:"properties"`
	Topics            []string          `json:"topics"`
	TopicFirst        int               `json:"topic_first"`
	TopicStep         int               `json:"topic_step"`
	Partitions        []int32           `json:"partitions"`
	Ordinal           uint32            `json:"ordinal"`
	ShareIndex        u64               `json:"share_index"`
	ShareOf           u64               `json:"share_of"`
	Seeds             struct {
		Payload   u64 `json:"payload"`
		Key       u64 `json:"key"`
		Tombstone u64 `json:"tombstone"`
	} `json:"seeds"`
	Rate            rateMsg     `json:"rate"`
	InFlight        *int64      `json:"in_flight"`
	Payload         payloadMsg  `json:"payload"`
	Key             keyMsg      `json:"key"`
	TombstoneAtMost *u64        `json:"tombstone_at_most"`
	Stamp           bool        `json:"stamp"`
	Headers         [][2]string `json:"headers"`
}

type rateMsg struct {
	Kind     string  `json:"kind"`
	PerSec   float64 `json:"per_sec"`
	Segments []struct {
		PerSec     float64  `json:"per_sec"`
		RampTo     *float64 `json:"ramp_to"`
		DurationNs u64      `json:"duration_ns"`
	} `json:"segments"`
}

type payloadMsg struct {
	Kind            string    `json:"kind"`
	Size            int       `json:"size"`
	Compressibility float64   `json:"compressibility"`
	Event           string    `json:"event"`
	Offset          u64       `json:"offset"`
	Count           int       `json:"count"` // lines: how many the L frames hold
	Sizes           *sizesMsg `json:"sizes"`
}

// sizesMsg is a size distribution's compiled table (PROTOCOL.md, "Record sizes").
type sizesMsg struct {
	Seed  u64         `json:"seed"`
	Bins  [][2]uint32 `json:"bins"`
	Slots [][2]u64    `json:"slots"`
}

// table checks the table's shape (a bad one would index out of range mid-run) and builds it.
func (m *sizesMsg) table(largest int) (*gen.SizeTable, error) {
	n := len(m.Bins)
	if n == 0 || len(m.Slots) != n {
		return nil, fmt.Errorf("a size table of %d bins and %d slots", n, len(m.Slots))
	}
	t := &gen.SizeTable{Lo: make([]uint32, n), Span: make([]uint32, n), Keep: make([]uint64, n), Alias: make([]uint32, n)}
	for i, b := range m.Bins {
		if b[1] == 0 {
			return nil, fmt.Errorf("size bin %d spans nothing", i)
		}
		t.Lo[i], t.Span[i] = b[0], b[1]
		if uint64(m.Slots[i][1]) >= uint64(n) {
			return nil, fmt.Errorf("size slot %d's alias %d is not a bin", i, m.Slots[i][1])
		}
		t.Keep[i], t.Alias[i] = uint64(m.Slots[i][0]), uint32(m.Slots[i][1])
	}
	if t.Largest() > largest {
		return nil, fmt.Errorf("sizes up to %d bytes in a payload of %d", t.Largest(), largest)
	}
	return t, nil
}

type keyMsg struct {
	Kind  string  `json:"kind"`
	Value string  `json:"value"`
	N     u64     `json:"n"`
	S     float64 `json:"s"`
}

func (r rateMsg) rate() (gen.Rate, error) {
	switch r.Kind {
	case "unlimited":
		return gen.Rate{}, nil
	case "fixed":
		if !(r.PerSec > 0) {
			return gen.Rate{}, fmt.Errorf("a fixed rate of %v/s", r.PerSec)
		}
		return gen.Rate{Fixed: r.PerSec}, nil
	case "shape":
		segs := make([]gen.Segment, 0, len(r.Segments))
		for _, s := range r.Segments {
			segs = append(segs, gen.Segment{DurationNs: uint64(s.DurationNs), PerSec: s.PerSec, RampTo: s.RampTo})
		}
		return gen.Rate{Shape: segs}, nil
	}
	return gen.Rate{}, fmt.Errorf("a rate of kind %q", r.Kind)
}

// payload builds the generator's spec; lines arrive afterwards in L frames.
func (p payloadMsg) payload(lines [][]byte) (gen.Payload, error) {
	spec, err := p.generated(lines)
	if err != nil || p.Sizes == nil {
		return spec, err
	}
	largest := p.Size
	if p.Kind == "lines" {
		if len(lines) != 1 {
			return gen.Payload{}, fmt.Errorf("drawn sizes over %d payload lines (a constant is one)", len(lines))
		}
		largest = len(lines[0])
	}
	if spec.Sizes, err = p.Sizes.table(largest); err != nil {
		return gen.Payload{}, err
	}
	spec.SizeSeed = uint64(p.Sizes.Seed)
	return spec, nil
}

func (p payloadMsg) generated(lines [][]byte) (gen.Payload, error) {
	switch p.Kind {
	case "random":
		return gen.Payload{Kind: gen.PayloadRandom, Size: p.Size, Compressibility: p.Compressibility}, nil
	case "json":
		return gen.Payload{Kind: gen.PayloadJSON, Size: p.Size, Event: p.Event}, nil
	case "lines":
		if len(lines) == 0 || len(lines) != p.Count {
			return gen.Payload{}, fmt.Errorf("%d payload lines where setup said %d", len(lines), p.Count)
		}
		return gen.Payload{Kind: gen.PayloadLines, Lines: lines, Offset: uint64(p.Offset)}, nil
	}
	return gen.Payload{}, fmt.Errorf("a payload of kind %q (franz-go's worker generates random, json and lines)", p.Kind)
}

func (k keyMsg) key() (gen.Key, error) {
	switch k.Kind {
	case "none":
		return gen.Key{Kind: gen.KeyNone}, nil
	case "fixed":
		return gen.Key{Kind: gen.KeyFixed, Fixed: []byte(k.Value)}, nil
	case "sequence":
		return gen.Key{Kind: gen.KeySequence}, nil
	case "uniform":
		if k.N == 0 {
			return gen.Key{}, errors.New("uniform keys over 0 keys")
		}
		return gen.Key{Kind: gen.KeyUniform, N: uint64(k.N)}, nil
	case "zipf":
		if k.N == 0 {
			return gen.Key{}, errors.New("zipf keys over 0 keys")
		}
		return gen.Key{Kind: gen.KeyZipf, N: uint64(k.N), S: k.S}, nil
	}
	return gen.Key{}, fmt.Errorf("a key of kind %q", k.Kind)
}
