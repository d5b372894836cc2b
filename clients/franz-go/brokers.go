package main

// The broker that acknowledged each record (PROTOCOL.md, `C`, `broker`). franz-go's promise
// does not say it; its HookProduceBatchWritten does, per batch (the broker's node id, the
// topic, the partition and the batch's record count), but on a goroutine of its own started
// after that batch's promises were queued, and with no offset. So the match is by count, per
// partition: a partition's batches are acknowledged in order and its promises run in that
// order (one promise goroutine), so its successful records, counted in promise order, fall
// into its hooks' batches in the order the hooks arrive. The promise of a batch's first record
// waits for that batch's hook (it always comes for a batch the broker took).
//
// Where this could be wrong, it says "unknown" (-1) instead:
//   - a hook that does not come within ackWait (the partition is then out of step for good:
//     every later record of it is -1, never a neighbour's broker);
//   - after a failed record on the partition (a failed batch has no hook, and records failed
//     while their batch was in flight would leave a hook that counts them): -1 from there on.
// What remains is the order of two hooks of one partition from two different brokers: each
// runs on its own goroutine, so a hook of the old leader delayed past the whole round trip of
// the new leader's first produce (franz-go sends to the new leader only once every request
// to the old one has its response) would swap their counts. Hooks of one broker in any order
// give the same broker.

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// noBroker: the client does not say (or the record failed).
const noBroker = -1

// ackWait bounds the promise's wait for its batch's hook.
const ackWait = time.Second

// hookBatch is one HookProduceBatchWritten call.
type hookBatch struct {
	broker int32
	n      int
}

// partAcks is one partition's batches as the hooks give them, and the promise side's place in
// them (broker, left, lost: touched by the promise goroutine only).
type partAcks struct {
	batches  chan hookBatch
	overflow atomic.Bool // set by a hook that found batches full
	broker   int32
	left     int
	lost     bool
}

// ackBrokers maps the run's (topic index, partition) to its partAcks.
type ackBrokers struct {
	topics map[string]int
	mu     sync.Mutex
	parts  [][]*partAcks
	// The promise goroutine's own copy of parts, so a record costs no lock.
	mine [][]*partAcks
	// Records per broker (by batch, as their hooks are taken) and records written unknown,
	// for the worker's log at close (under mu).
	byBroker map[int32]int64
	unknown  int64
}

var _ kgo.HookProduceBatchWritten = (*ackBrokers)(nil)

func newAckBrokers(topics []string) *ackBrokers {
	a := &ackBrokers{topics: make(map[string]int, len(topics)), byBroker: map[int32]int64{}}
	for i, t := range topics {
		a.topics[t] = i
	}
	a.parts = make([][]*partAcks, len(topics))
	a.mine = make([][]*partAcks, len(topics))
	return a
}

func (a *ackBrokers) get(topic int, partition int32) *partAcks {
	a.mu.Lock()
	defer a.mu.Unlock()
	ps := a.parts[topic]
	for int(partition) >= len(ps) {
		ps = append(ps, nil)
	}
	a.parts[topic] = ps
	if ps[partition] == nil {
		// Room for many batches: a hook never waits on a slow promise goroutine.
		ps[partition] = &partAcks{batches: make(chan hookBatch, 1<<14)}
	}
	return ps[partition]
}

func (a *ackBrokers) OnProduceBatchWritten(meta kgo.BrokerMetadata, topic string, partition int32, m kgo.ProduceBatchMetrics) {
	t, ok := a.topics[topic]
	if !ok || partition < 0 || m.NumRecords <= 0 {
		return
	}
	pa := a.get(t, partition)
	select {
	case pa.batches <- hookBatch{broker: meta.NodeID, n: m.NumRecords}:
	default:
		// Full: the promises stopped taking batches (the partition is out of step) or are
		// impossibly far behind; either way the count is lost.
		pa.overflow.Store(true)
	}
}

// part is the promise goroutine's partAcks for (topic, partition).
func (a *ackBrokers) part(topic int, partition int32) *partAcks {
	if topic < 0 || topic >= len(a.mine) || partition < 0 {
		return nil
	}
	ps := a.mine[topic]
	if int(partition) < len(ps) && ps[partition] != nil {
		return ps[partition]
	}
	pa := a.get(topic, partition)
	for int(partition) >= len(ps) {
		ps = append(ps, nil)
	}
	ps[partition] = pa
	a.mine[topic] = ps
	return pa
}

// acked is the broker of a successful record, called from its promise in promise order.
func (a *ackBrokers) acked(topic int, partition int32) int32 {
	pa := a.part(topic, partition)
	if pa == nil || pa.lost {
		a.noted(noBroker, 1)
		return noBroker
	}
	if pa.left == 0 {
		var b hookBatch
		select {
		case b = <-pa.batches:
		default:
			t := time.NewTimer(ackWait)
			select {
			case b = <-pa.batches:
				t.Stop()
			case <-t.C:
				pa.lost = true
				a.noted(noBroker, 1)
				return noBroker
			}
		}
		pa.broker, pa.left = b.broker, b.n
		a.noted(b.broker, b.n)
	}
	pa.left--
	if pa.overflow.Load() {
		pa.lost = true
		a.noted(noBroker, 1)
		return noBroker
	}
	return pa.broker
}

// noted counts n records for broker (noBroker: written unknown), per batch or per unknown
// record, not per record.
func (a *ackBrokers) noted(broker int32, n int) {
	a.mu.Lock()
	if broker == noBroker {
		a.unknown += int64(n)
	} else {
		a.byBroker[broker] += int64(n)
	}
	a.mu.Unlock()
}

// summary is the log's line: records by the broker that acknowledged them.
func (a *ackBrokers) summary() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]int32, 0, len(a.byBroker))
	for id := range a.byBroker {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	b.WriteString("records by acknowledging broker (batches taken):")
	for _, id := range ids {
		fmt.Fprintf(&b, " node %d %d,", id, a.byBroker[id])
	}
	fmt.Fprintf(&b, " unknown %d", a.unknown)
	return b.String()
}

// failed marks the partition out of step: from here its records' brokers are unknown.
func (a *ackBrokers) failed(topic int, partition int32) {
	if pa := a.part(topic, partition); pa != nil {
		pa.lost = true
	}
}
