package main

import (
	"testing"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkPromise: the worker's own cost per completion (clock read, record encoded into a
// C frame, the rec given back), with the frames drained by the writer into /dev/null.
func BenchmarkPromise(b *testing.B) {
	w := &writer{frames: make(chan []byte, 64), done: make(chan struct{})}
	go func() {
		for f := range w.frames {
			w.free.Put(f[:0])
		}
		close(w.done)
	}()
	clk, _ := newClock()
	p := &producer{clk: clk, comp: newCompletions(w), kinds: newErrorKinds(w), hooks: &internals{},
		brokers: newAckBrokers([]string{"t"})}
	r := &rec{}
	r.Record = kgo.Record{Partition: 1, Offset: 5}
	// Batches of 100 records, their hooks ahead of their promises.
	meta := kgo.BrokerMetadata{NodeID: 1}
	b.ResetTimer()
	for i := range b.N {
		if i%100 == 0 {
			p.brokers.OnProduceBatchWritten(meta, "t", 1, kgo.ProduceBatchMetrics{NumRecords: 100})
		}
		p.onPromise(&r.Record, nil)
		if len(p.comp.free) > 1024 {
			p.stock = p.comp.takeFree(p.stock[:0])
		}
	}
}

func BenchmarkClock(b *testing.B) {
	clk, _ := newClock()
	var s int64
	for range b.N {
		s += clk.now()
	}
	_ = s
}

// A rec is three cache lines, a Go size class of its own (so each starts a line): what the
// sender writes per record and the promise reads back stays on those three.
func TestRecSize(t *testing.T) {
	if n := unsafe.Sizeof(rec{}); n != 192 {
		t.Fatalf("rec is %d bytes, not 192", n)
	}
}
