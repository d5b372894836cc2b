package main

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// internals are the producer's whole-run sums from franz-go's hooks, the counterpart of
// librdkafka's statistics as sums: every batch the broker took (HookProduceBatchWritten) and
// every Produce request written (HookBrokerWrite, key 0), so averages are ratios of exact sums.
// Batches are written from several broker goroutines at once, hence the atomics.
type internals struct {
	batches, records, uncompressed, compressed atomic.Int64
	requests, requestBytes                     atomic.Int64
	// Batches by codec: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd (a codec the broker refused
	// falls back to another, which this shows).
	byCodec [5]atomic.Int64
	// The sum over batches of compressed / uncompressed bytes (Java's compression-rate).
	mu       sync.Mutex
	ratioSum float64
}

var (
	_ kgo.HookProduceBatchWritten = (*internals)(nil)
	_ kgo.HookBrokerWrite         = (*internals)(nil)
)

func (h *internals) OnProduceBatchWritten(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.ProduceBatchMetrics) {
	h.batches.Add(1)
	h.records.Add(int64(m.NumRecords))
	h.uncompressed.Add(int64(m.UncompressedBytes))
	h.compressed.Add(int64(m.CompressedBytes))
	if m.UncompressedBytes > 0 {
		h.mu.Lock()
		h.ratioSum += float64(m.CompressedBytes) / float64(m.UncompressedBytes)
		h.mu.Unlock()
	}
	if int(m.CompressionType) < len(h.byCodec) {
		h.byCodec[m.CompressionType].Add(1)
	}
}

// batchHeader is a v2 record batch's header, in bytes: base offset 8, length 4, leader epoch
// 4, magic 1, CRC 4, attributes 2, last offset delta 4, first and max timestamp 16, producer
// id 8 and epoch 2, base sequence 4, record count 4.
const batchHeader = 61

// produceKey is the Produce request's API key.
const produceKey = 0

func (h *internals) OnBrokerWrite(_ kgo.BrokerMetadata, key int16, bytes int, _, _ time.Duration, err error) {
	if key == produceKey && err == nil {
		h.requests.Add(1)
		h.requestBytes.Add(int64(bytes))
	}
}

// sums is a snapshot of the hooks' counters, so a phase reports its own growth.
type sums struct {
	batches, records, uncompressed, compressed, requests, requestBytes int64
	ratioSum                                                           float64
}

func (h *internals) snapshot() sums {
	h.mu.Lock()
	r := h.ratioSum
	h.mu.Unlock()
	return sums{
		batches: h.batches.Load(), records: h.records.Load(),
		uncompressed: h.uncompressed.Load(), compressed: h.compressed.Load(),
		requests: h.requests.Load(), requestBytes: h.requestBytes.Load(), ratioSum: r,
	}
}

// since is the internals over a phase, in the protocol's form (PROTOCOL.md, `phase_done`),
// under the Java client's names where franz-go's hooks measure the same thing.
func (h *internals) since(before sums) map[string]map[string]any {
	now := h.snapshot()
	d := func(a, b int64) float64 { return float64(a - b) }
	batches := d(now.batches, before.batches)
	return map[string]map[string]any{
		// Bytes per batch as it goes on the wire: the records after compression (franz-go's
		// CompressedBytes) and the record batch's 61-byte v2 header, which librdkafka's
		// batchsize and the Java client's batch-size count too.
		"batch-size": {"sum": d(now.compressed, before.compressed) + batchHeader*batches,
			"count": batches},
		"records-per-request": {"sum": d(now.records, before.records), "count": d(now.requests, before.requests)},
		// Java's compression-rate-avg is the mean over batches of compressed / uncompressed.
		"compression-rate":         {"sum": now.ratioSum - before.ratioSum, "count": batches},
		"record-send":              {"total": d(now.records, before.records)},
		"produce-requests":         {"total": d(now.requests, before.requests)},
		"batches":                  {"total": batches},
		"batch-bytes-uncompressed": {"total": d(now.uncompressed, before.uncompressed)},
		"produce-request-bytes":    {"total": d(now.requestBytes, before.requestBytes)},
	}
}

// bufferWatch keeps the lowest room left in franz-go's record buffer over a phase
// (MaxBufferedRecords less the records buffered), read at every progress tick: the
// counterpart of the Java client's buffer-available-bytes.
type bufferWatch struct {
	limit int64
	min   atomic.Int64
}

func newBufferWatch(cl *kgo.Client) *bufferWatch {
	w := &bufferWatch{}
	if v, ok := cl.OptValue(kgo.MaxBufferedRecords).(int64); ok {
		w.limit = v
	}
	w.reset()
	return w
}

func (w *bufferWatch) reset() { w.min.Store(w.limit) }

func (w *bufferWatch) sample(cl *kgo.Client) {
	avail := w.limit - cl.BufferedProduceRecords()
	for {
		m := w.min.Load()
		if avail >= m || w.min.CompareAndSwap(m, avail) {
			return
		}
	}
}
