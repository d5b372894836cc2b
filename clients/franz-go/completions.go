package main

import (
	"encoding/binary"
	"sync"
	"time"
)

// flushEvery: completion records that wait are written at least this often.
const flushEvery = 10 * time.Millisecond

// completion is one record of a C frame (PROTOCOL.md, "C: completion records").
type completion struct {
	intendedNs uint64
	doneNs     uint64
	offsetOr   int64 // the offset on success, the record's seq on failure
	sendDelay  uint32
	partition  int32
	bytes      uint32
	topic      uint16
	errKind    uint8
	flags      uint8
	valueBytes uint32 // noValue for a tombstone
	broker     int32  // the node id that acknowledged it, noBroker when unknown
}

// noValue is a tombstone's valueBytes.
const noValue = 1<<32 - 1

const (
	completionMeasured = 1
	completionRefused  = 2
)

// encodeSendDelay: below 2^31 in ns, else bit 31 set and the rest in µs.
func encodeSendDelay(ns uint64) uint32 {
	if ns < 1<<31 {
		return uint32(ns)
	}
	return 1<<31 | uint32(min(ns/1000, 1<<31-1))
}

// putCompletion writes x's completionLen bytes at the start of b.
func putCompletion(b []byte, x *completion) {
	_ = b[completionLen-1]
	binary.LittleEndian.PutUint64(b, x.intendedNs)
	binary.LittleEndian.PutUint64(b[8:], x.doneNs)
	binary.LittleEndian.PutUint64(b[16:], uint64(x.offsetOr))
	binary.LittleEndian.PutUint32(b[24:], x.sendDelay)
	binary.LittleEndian.PutUint32(b[28:], uint32(x.partition))
	binary.LittleEndian.PutUint32(b[32:], x.bytes)
	binary.LittleEndian.PutUint16(b[36:], x.topic)
	b[38] = x.errKind
	b[39] = x.flags
	binary.LittleEndian.PutUint32(b[40:], x.valueBytes)
	binary.LittleEndian.PutUint32(b[44:], uint32(x.broker))
}

// completions batches completion records into C frames. Records are added by franz-go's
// promise goroutine (promises run one at a time); the lock is shared only with the flush
// ticker and the end of a phase, so it is almost never contended. The same lock keeps the
// records free for reuse (the sender takes them back in bulk).
type completions struct {
	mu   sync.Mutex
	w    *writer
	buf  []byte
	free []*rec
}

func newCompletions(w *writer) *completions {
	c := &completions{w: w}
	c.buf = c.fresh()
	go func() {
		for range time.Tick(flushEvery) {
			c.mu.Lock()
			c.flushLocked()
			c.mu.Unlock()
		}
	}()
	return c
}

func (c *completions) fresh() []byte {
	b := c.w.buffer()
	return append(b[:0], 0, 0, 0, 0, 'C')
}

// add appends one record and gives r back for reuse.
func (c *completions) add(x *completion, r *rec) {
	c.mu.Lock()
	b := c.buf
	n := len(b)
	b = b[:n+completionLen]
	putCompletion(b[n:], x)
	c.buf = b
	if r != nil {
		c.free = append(c.free, r)
	}
	if len(b)-5 >= completionFrame {
		c.flushLocked()
	}
	c.mu.Unlock()
}

// flush hands every waiting record to the writer: what is written after it (phase_done)
// reaches kafkabench after them.
func (c *completions) flush() {
	c.mu.Lock()
	c.flushLocked()
	c.mu.Unlock()
}

func (c *completions) flushLocked() {
	if len(c.buf) == 5 {
		return
	}
	binary.LittleEndian.PutUint32(c.buf, uint32(len(c.buf)-4))
	c.w.frames <- c.buf
	c.buf = c.fresh()
}

// takeFree moves the records given back since the last call into dst.
func (c *completions) takeFree(dst []*rec) []*rec {
	c.mu.Lock()
	dst = append(dst, c.free...)
	clear(c.free)
	c.free = c.free[:0]
	c.mu.Unlock()
	return dst
}
