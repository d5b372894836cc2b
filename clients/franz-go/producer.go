package main

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sys/unix"

	"kafkabench/clients/franz-go/gen"
)

// rec is one record in flight: franz-go's Record first, so the promise finds the rest from
// the *kgo.Record it is given; reused once its promise has run, so the hot path allocates
// nothing per record. 192 bytes, three cache lines and a size class of Go's own (so every rec
// starts a line): what a record needs beyond the Record lives in the Record's own fields (its
// key and value buffers, its headers with the stamp's bytes), allocated only for records that
// carry them. At 288 bytes (those fields kept here) a rec spanned five lines, and at an
// unlimited rate millions of recs in flight were each written cold.
type rec struct {
	kgo.Record
	// What the promise reads, packed into 31 bytes on the Record's last line (with Offset,
	// which franz-go writes just before the promise runs).
	intendedNs uint64
	seq        uint64
	sendDelay  uint32
	size       uint32
	valueBytes uint32
	topic      uint16
	flags      uint8
}

// recOf is the rec a promise's record belongs to (every record this worker produces is one).
func recOf(r *kgo.Record) *rec { return (*rec)(unsafe.Pointer(r)) }

// Waits shorter than this spin; longer ones sleep (precisely: timer slack 1 µs on a thread
// of the sender's own). Go's time.Sleep wakes about 1 ms late for short waits here, which
// would be most of a paced record's send delay.
const spinNs = 5_000

type phaseMsg struct {
	Msg            string `json:"msg"`
	Phase          string `json:"phase"`
	Count          *u64   `json:"count"`
	DurationNs     *u64   `json:"duration_ns"`
	Drain          bool   `json:"drain"`
	DrainTimeoutMs int64  `json:"drain_timeout_ms"`
}

type producer struct {
	cl      *kgo.Client
	clk     clock
	origin  int64 // CLOCK_MONOTONIC at the run's origin
	unixMs  uint64
	s       *setupMsg
	comp    *completions
	kinds   *errorKinds
	hooks   *internals
	brokers *ackBrokers
	buffer  *bufferWatch
	payload *gen.PayloadGen
	keys    *gen.KeyGen
	tombs   gen.Tombstones
	rate    gen.Rate
	stop    atomic.Bool
	stopCut atomic.Int64 // Unix ns by which a drain under way must end, once `stop` came
	// Counted over the run: every record handed to Produce, and every promise run. The
	// promise's counters have cache lines of their own: beside the sender's fields written per
	// record (handed, seq, j), every promise's add was a line bounced between the cores.
	handed    uint64 // the sender's own
	_         [64]byte
	completed atomic.Uint64
	failed    atomic.Uint64 // promises with an error
	_         [64]byte
	// inFlightWake is signalled by a promise when a sender waits on `in_flight`.
	inFlightWake chan struct{}
	sentInPhase  atomic.Uint64
	seq          uint64
	j            uint64 // records sent across phases, for the topic layout
	stock        []*rec
	shared       bool
	userHeaders  []kgo.RecordHeader
	manual       bool
	nextPart     int
	promise      func(*kgo.Record, error)
}

// now is the time since the run's origin, in ns.
func (p *producer) now() uint64 { return uint64(p.clk.now() - p.origin) }

func (p *producer) onPromise(r *kgo.Record, err error) {
	x := recOf(r)
	c := completion{
		intendedNs: x.intendedNs,
		doneNs:     p.now(),
		sendDelay:  x.sendDelay,
		partition:  r.Partition,
		bytes:      x.size,
		topic:      x.topic,
		flags:      x.flags,
		valueBytes: x.valueBytes,
	}
	if err == nil {
		c.offsetOr = r.Offset
		c.broker = p.brokers.acked(int(x.topic), r.Partition)
	} else {
		c.offsetOr = int64(x.seq)
		c.broker = noBroker
		p.brokers.failed(int(x.topic), r.Partition)
		c.partition = -1
		c.errKind = p.kinds.id(err)
		p.failed.Add(1)
	}
	p.comp.add(&c, x)
	p.completed.Add(1)
	if p.inFlightWake != nil {
		select {
		case p.inFlightWake <- struct{}{}:
		default:
		}
	}
}

// take gives a free rec: one given back by a promise, or a new one.
func (p *producer) take() *rec {
	if len(p.stock) == 0 {
		p.stock = p.comp.takeFree(p.stock)
		if len(p.stock) == 0 {
			return p.newRec()
		}
	}
	r := p.stock[len(p.stock)-1]
	p.stock = p.stock[:len(p.stock)-1]
	return r
}

// newRec is a rec whose headers are set once for all its uses: the stamp's room first (its
// bytes rewritten per send), then the run's own headers, which never change. No headers at all
// when records carry none: one object fewer per record in flight for the collector to scan
// (millions of them at an unlimited rate).
func (p *producer) newRec() *rec {
	r := &rec{}
	if p.s.Stamp || len(p.userHeaders) > 0 {
		h := make([]kgo.RecordHeader, 0, 1+len(p.userHeaders))
		if p.s.Stamp {
			h = append(h, kgo.RecordHeader{Key: gen.StampHeader, Value: make([]byte, gen.StampLen)})
		}
		r.Headers = append(h, p.userHeaders...)
	}
	return r
}

// waitUntil sleeps or spins until t (ns since the origin); never returns early.
func (p *producer) waitUntil(t uint64) {
	for {
		now := p.now()
		if now >= t {
			return
		}
		rem := t - now
		if rem > spinNs {
			ts := unix.NsecToTimespec(int64(rem))
			_ = unix.Nanosleep(&ts, nil)
		} else {
			runtime.Gosched()
		}
	}
}

func (p *producer) waitInFlight(limit uint64) {
	for !p.stop.Load() && p.handed-p.completed.Load() >= limit {
		select {
		case <-p.inFlightWake:
		case <-time.After(time.Millisecond):
		}
	}
}

type phaseResult struct {
	Msg         string                    `json:"msg"`
	Sent        uint64                    `json:"sent"`
	Refused     uint64                    `json:"refused"`
	FirstSendNs string                    `json:"first_send_ns"`
	LastSendNs  string                    `json:"last_send_ns"`
	SenderCPUNs string                    `json:"sender_cpu_ns"`
	Drained     bool                      `json:"drained"`
	Outstanding uint64                    `json:"outstanding"`
	Internals   map[string]map[string]any `json:"internals"`
}

// paced says whether a phase's sender waits between records (and so runs locked to a thread
// of its own).
func (p *producer) paced(ph *phaseMsg) bool {
	return ph.Phase != "backlog" && (!p.rate.Unlimited() || p.s.InFlight != nil)
}

// senderCPU is the CPU time of the sender: its thread's when it runs locked to one (paced),
// else the whole worker's (an unlimited sender moves between threads; it is busy throughout,
// and franz-go's goroutines run beside it).
func senderCPU(locked bool) int64 {
	var ts unix.Timespec
	if locked {
		_ = unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	} else {
		_ = unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
	}
	return ts.Nano()
}

// runPhase sends this producer's share of one phase's schedule. It runs on a goroutine locked
// to its OS thread (the sender's: its CPU time and its timer slack are its own).
func (p *producer) runPhase(ph *phaseMsg) phaseResult {
	before := p.hooks.snapshot()
	failedBefore := p.failed.Load()
	p.buffer.reset()
	locked := p.paced(ph)
	cpu0 := senderCPU(locked)
	start := p.now()
	backlog := ph.Phase == "backlog"
	measured := ph.Phase == "measured"
	rate := p.rate
	if backlog {
		rate = gen.Rate{}
	}
	pacer := gen.NewPacer(rate, uint64(p.s.ShareIndex), uint64(p.s.ShareOf), start)
	var end uint64
	hasEnd := ph.DurationNs != nil
	if hasEnd {
		end = start + uint64(*ph.DurationNs)
	}
	var inFlight uint64
	if p.s.InFlight != nil && !backlog {
		inFlight = uint64(max(*p.s.InFlight, 1))
	}
	var flags, stampFlags uint8
	if measured {
		flags, stampFlags = completionMeasured, gen.StampMeasured
	}
	if backlog {
		stampFlags = gen.StampBacklog
	}
	p.sentInPhase.Store(0)
	var sent, first, last uint64
	ctx := context.Background()
	for {
		if (ph.Count != nil && sent >= uint64(*ph.Count)) || p.stop.Load() {
			break
		}
		kind, t := pacer.NextSlot()
		if kind == gen.SlotDone {
			break
		}
		if inFlight > 0 {
			p.waitInFlight(inFlight)
		}
		var intended, actual uint64
		if kind == gen.SlotAt {
			if hasEnd && t >= end {
				break
			}
			p.waitUntil(t)
			intended, actual = t, p.now()
		} else {
			now := p.now()
			if hasEnd && now >= end {
				break
			}
			intended, actual = now, now
		}
		r := p.take()
		seq := p.seq
		p.seq++
		r.intendedNs, r.seq, r.flags = intended, seq, flags
		r.sendDelay = encodeSendDelay(actual - intended)
		unixMs := p.unixMs + intended/1_000_000
		// The fields franz-go reads of a record it is given, set one by one: zeroing the whole
		// Record per send showed in the profile. What franz-go writes back (offset, epochs,
		// attributes) it sets itself. The key and value are copied into the rec's own buffers
		// (r.Key and r.Value keep them between uses) unless the payload is one shared value.
		// The timestamp is the sender's own clock reading: franz-go would read the wall clock
		// again (and truncates it to milliseconds as before).
		var value []byte
		tomb := p.tombs.Next()
		if tomb {
			r.Value = nil
		} else {
			value = p.payload.Next(seq, unixMs)
			if p.shared {
				r.Value = value
			} else {
				r.Value = append(r.Value[:0], value...)
			}
		}
		key := p.keys.Next(seq)
		if key != nil {
			r.Key = append(r.Key[:0], key...)
		} else {
			r.Key = nil
		}
		r.Timestamp = time.UnixMilli(int64(p.unixMs + actual/1_000_000))
		r.size = uint32(len(key) + len(value))
		r.valueBytes = uint32(len(value))
		if tomb {
			r.valueBytes = noValue
		}
		if p.s.Stamp {
			gen.PutStamp(r.Headers[0].Value, intended, p.s.Ordinal, seq, stampFlags)
		}
		ti := p.topicOf(p.j)
		p.j++
		r.topic = uint16(ti)
		r.Topic = p.s.Topics[ti]
		if p.manual {
			r.Partition = p.partitionOf(key)
		}
		p.handed++
		p.cl.Produce(ctx, &r.Record, p.promise)
		sent++
		if sent&63 == 0 {
			p.sentInPhase.Store(sent)
		}
		if first == 0 {
			first = max(actual, 1)
		}
		last = actual
	}
	p.sentInPhase.Store(sent)
	cpu := senderCPU(locked) - cpu0
	if ph.Drain {
		deadline := time.Now().Add(time.Duration(ph.DrainTimeoutMs) * time.Millisecond)
		dctx, cancel := context.WithDeadline(ctx, deadline)
		// `stop` cuts a drain short: to its own drain_timeout_ms from when it came.
		go func() {
			for dctx.Err() == nil {
				if cut := p.stopCut.Load(); cut > 0 {
					select {
					case <-time.After(time.Until(time.Unix(0, cut))):
						cancel()
					case <-dctx.Done():
					}
					return
				}
				select {
				case <-time.After(10 * time.Millisecond):
				case <-dctx.Done():
				}
			}
		}()
		_ = p.cl.Flush(dctx)
		// Flush returns once every buffered record's promise has run; a record failed before
		// it was buffered has its promise queued behind them.
		for p.handed != p.completed.Load() && dctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}
	outstanding := p.handed - p.completed.Load()
	drained := outstanding == 0
	p.comp.flush()
	p.buffer.sample(p.cl)
	internals := p.hooks.since(before)
	internals["buffer-available-records"] = map[string]any{"min": float64(p.buffer.min.Load())}
	internals["record-error"] = map[string]any{"total": float64(p.failed.Load() - failedBefore)}
	return phaseResult{
		Msg: "phase_done", Sent: sent, Refused: 0,
		FirstSendNs: utoa(first), LastSendNs: utoa(last), SenderCPUNs: utoa(uint64(cpu)),
		Drained: drained, Outstanding: outstanding,
		Internals: internals,
	}
}

func (p *producer) topicOf(j uint64) int {
	n := uint64(len(p.s.Topics))
	if p.s.TopicStep == 0 {
		return p.s.TopicFirst
	}
	return int((uint64(p.s.TopicFirst) + j*uint64(p.s.TopicStep)) % n)
}

// partitionOf places a record among a shard's own partitions: a key by its FNV-1a 64 hash,
// no key in turn.
func (p *producer) partitionOf(key []byte) int32 {
	parts := p.s.Partitions
	if key != nil {
		h := uint64(0xcbf29ce484222325)
		for _, b := range key {
			h = (h ^ uint64(b)) * 0x100000001b3
		}
		return parts[h%uint64(len(parts))]
	}
	i := p.nextPart
	p.nextPart = (p.nextPart + 1) % len(parts)
	return parts[i]
}
