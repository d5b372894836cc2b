package main

// The port against the shared vectors (clients/vectors/generator.json, written by
// kafkabench's own test from its Rust generator): the same draws, payload bytes, keys,
// tombstones and due times for the same seeds. The build runs this test and refuses to build
// a worker that disagrees.

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"kafkabench/clients/franz-go/gen"
)

type vectors struct {
	Rng []struct {
		Seed  u64       `json:"seed"`
		Draws []u64     `json:"draws"`
		F64   []float64 `json:"f64"`
	} `json:"rng"`
	Payloads []struct {
		Payload     json.RawMessage `json:"payload"`
		PayloadSeed u64             `json:"payload_seed"`
		Lines       []string        `json:"lines"`
		Records     []struct {
			Seq    uint64 `json:"seq"`
			UnixMs u64    `json:"unix_ms"`
			Value  string `json:"value"`
		} `json:"records"`
	} `json:"payloads"`
	Keys []struct {
		Key  json.RawMessage `json:"key"`
		Seed u64             `json:"seed"`
		Keys []string        `json:"keys"`
	} `json:"keys"`
	Tombstones []struct {
		Seed       u64    `json:"seed"`
		AtMost     u64    `json:"at_most"`
		Tombstones []bool `json:"tombstones"`
	} `json:"tombstones"`
	Schedules []struct {
		Rate       json.RawMessage `json:"rate"`
		ShareIndex uint64          `json:"share_index"`
		ShareOf    uint64          `json:"share_of"`
		Slots      []string        `json:"slots"`
	} `json:"schedules"`
}

func loadVectors(t *testing.T) *vectors {
	path := os.Getenv("KAFKABENCH_VECTORS")
	if path == "" {
		path = filepath.Join("..", "vectors")
	}
	b, err := os.ReadFile(filepath.Join(path, "generator.json"))
	if err != nil {
		t.Fatalf("the shared vectors: %v", err)
	}
	var v vectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("the shared vectors: %v", err)
	}
	if len(v.Rng) == 0 || len(v.Payloads) == 0 || len(v.Keys) == 0 || len(v.Schedules) == 0 {
		t.Fatal("the shared vectors are empty")
	}
	return &v
}

func TestVectorsRng(t *testing.T) {
	for _, c := range loadVectors(t).Rng {
		r := gen.NewRng(uint64(c.Seed))
		for i, want := range c.Draws {
			if got := r.Next(); got != uint64(want) {
				t.Fatalf("seed %d: draw %d is %d, want %d", c.Seed, i, got, want)
			}
		}
		for i, want := range c.F64 {
			if got := r.Float(); got != want {
				t.Fatalf("seed %d: f64 %d is %v, want %v", c.Seed, i, got, want)
			}
		}
	}
}

func TestVectorsPayloads(t *testing.T) {
	for _, c := range loadVectors(t).Payloads {
		var pm payloadMsg
		if err := decode(c.Payload, &pm); err != nil {
			t.Fatalf("payload %s: %v", c.Payload, err)
		}
		var lines [][]byte
		for _, l := range c.Lines {
			b, _ := hex.DecodeString(l)
			lines = append(lines, b)
		}
		if pm.Kind != "lines" {
			lines = nil
		}
		spec, err := pm.payload(lines)
		if err != nil {
			t.Fatalf("payload %s: %v", c.Payload, err)
		}
		g := gen.NewPayloadGen(spec, uint64(c.PayloadSeed))
		for _, r := range c.Records {
			got := hex.EncodeToString(g.Next(r.Seq, uint64(r.UnixMs)))
			if got != r.Value {
				t.Fatalf("payload %s seed %d: record %d is\n%s, want\n%s", c.Payload, c.PayloadSeed, r.Seq, got, r.Value)
			}
		}
	}
}

func TestVectorsKeys(t *testing.T) {
	for _, c := range loadVectors(t).Keys {
		var km keyMsg
		if err := decode(c.Key, &km); err != nil {
			t.Fatalf("key %s: %v", c.Key, err)
		}
		spec, err := km.key()
		if err != nil {
			t.Fatalf("key %s: %v", c.Key, err)
		}
		g := gen.NewKeyGen(spec, uint64(c.Seed))
		for seq, want := range c.Keys {
			if got := string(g.Next(uint64(seq))); got != want {
				t.Fatalf("key %s seed %d: record %d has key %q, want %q", c.Key, c.Seed, seq, got, want)
			}
		}
	}
}

func TestVectorsTombstones(t *testing.T) {
	for _, c := range loadVectors(t).Tombstones {
		ts := gen.NewTombstonesAtMost(uint64(c.AtMost), uint64(c.Seed))
		for i, want := range c.Tombstones {
			if got := ts.Next(); got != want {
				t.Fatalf("tombstones at most %d seed %d: draw %d is %v, want %v", c.AtMost, c.Seed, i, got, want)
			}
		}
	}
}

func TestVectorsSchedules(t *testing.T) {
	for _, c := range loadVectors(t).Schedules {
		var rm rateMsg
		if err := decode(c.Rate, &rm); err != nil {
			t.Fatalf("rate %s: %v", c.Rate, err)
		}
		rate, err := rm.rate()
		if err != nil {
			t.Fatalf("rate %s: %v", c.Rate, err)
		}
		p := gen.NewPacer(rate, c.ShareIndex, c.ShareOf, 0)
		for i, want := range c.Slots {
			kind, at := p.NextSlot()
			var got string
			switch kind {
			case gen.SlotNow:
				got = "now"
			case gen.SlotDone:
				got = "done"
			default:
				got = strconv.FormatUint(at, 10)
			}
			if got != want {
				t.Fatalf("rate %s share %d/%d: slot %d is %s, want %s", c.Rate, c.ShareIndex, c.ShareOf, i, got, want)
			}
		}
	}
}

// TestVectorsCompletions: the worker's completion records byte for byte as kafkabench decodes
// them (clients/vectors/completions.json, written by kafkabench's test from its decoder).
func TestVectorsCompletions(t *testing.T) {
	path := os.Getenv("KAFKABENCH_VECTORS")
	if path == "" {
		path = filepath.Join("..", "vectors")
	}
	b, err := os.ReadFile(filepath.Join(path, "completions.json"))
	if err != nil {
		t.Fatalf("the completion vectors: %v", err)
	}
	var v struct {
		Completions []struct {
			IntendedNs  u64    `json:"intended_ns"`
			DoneNs      u64    `json:"done_ns"`
			OffsetOrSeq u64    `json:"offset_or_seq"`
			SendDelayNs u64    `json:"send_delay_ns"`
			Partition   int32  `json:"partition"`
			Bytes       uint32 `json:"bytes"`
			Topic       uint16 `json:"topic"`
			Error       uint8  `json:"error"`
			Flags       uint8  `json:"flags"`
			ValueBytes  uint32 `json:"value_bytes"`
			Broker      int32  `json:"broker"`
			Hex         string `json:"hex"`
		} `json:"completions"`
	}
	if err := json.Unmarshal(b, &v); err != nil || len(v.Completions) == 0 {
		t.Fatalf("the completion vectors: %v (%d records)", err, len(v.Completions))
	}
	for i, c := range v.Completions {
		x := completion{
			intendedNs: uint64(c.IntendedNs), doneNs: uint64(c.DoneNs),
			offsetOr: int64(c.OffsetOrSeq), sendDelay: encodeSendDelay(uint64(c.SendDelayNs)),
			partition: c.Partition, bytes: c.Bytes, topic: c.Topic, errKind: c.Error,
			flags: c.Flags, valueBytes: c.ValueBytes, broker: c.Broker,
		}
		got := make([]byte, completionLen)
		putCompletion(got, &x)
		if h := hex.EncodeToString(got); h != c.Hex {
			t.Fatalf("completion %d is\n%s, want\n%s", i, h, c.Hex)
		}
	}
}
