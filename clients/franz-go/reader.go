package main

// The reader role (PROTOCOL.md, "setup for a reader"): a franz-go consumer, a group member or
// assigned its partitions by hand, handing every record it reads to kafkabench as a 48-byte
// R record; kafkabench verifies each (lost, duplicated, reordered, end-to-end latency) with
// the code that verifies librdkafka's reads.

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sys/unix"

	"kafkabench/clients/franz-go/gen"
)

const readLen = 48

type readerSetup struct {
	Msg               string               `json:"msg"`
	Role              string               `json:"role"`
	OriginMonotonicNs u64                  `json:"origin_monotonic_ns"`
	UnixMsAtOrigin    u64                  `json:"unix_ms_at_origin"`
	Properties        map[string]string    `json:"properties"`
	Topics            []string             `json:"topics"`
	Partitions        int32                `json:"partitions"`
	Group             bool                 `json:"group"`
	Assign            [][3]json.RawMessage `json:"assign"`
	Commit            struct {
		Kind       string `json:"kind"`
		IntervalMs int64  `json:"interval_ms"`
		Records    int64  `json:"records"`
		Sync       bool   `json:"sync"`
	} `json:"commit"`
	Paused bool `json:"paused"`
}

// fetchSums are the reader's internals: fetch responses read and the bytes of their batches.
type fetchSums struct {
	requests, bytes atomic.Int64
}

func (h *fetchSums) OnFetchBatchRead(_ kgo.BrokerMetadata, _ string, _ int32, m kgo.FetchBatchMetrics) {
	h.bytes.Add(int64(m.CompressedBytes))
}

// fetchKey is the Fetch request's API key.
const fetchKey = 1

func (h *fetchSums) OnBrokerRead(_ kgo.BrokerMetadata, key int16, _ int, _, _ time.Duration, err error) {
	if key == fetchKey && err == nil {
		h.requests.Add(1)
	}
}

type reader struct {
	s      *readerSetup
	w      *writer
	clk    clock
	origin int64
	opts   []kgo.Opt
	index  map[string]int // topic → its index in setup.topics
	sums   *fetchSums

	mu        sync.Mutex // the client and the polling goroutine, swapped by leave/rejoin
	cl        *kgo.Client
	polling   chan struct{} // closed when the polling goroutine has returned
	cancel    context.CancelFunc
	measuring atomic.Bool
	held      map[string][]int32 // paused until `measure`
	atEnd     map[int32]bool     // parts whose end was said since their last record
	from      map[int32]int64    // assigned by hand: where each part's reading starts (-2: its log start)
	sinceCmt  int64

	requests0, bytes0 int64
	cpu0              int64
}

func (r *reader) part(topic string, p int32) int32 { return int32(r.index[topic])*r.s.Partitions + p }

func newReader(w *writer, s *readerSetup) (*reader, error) {
	if len(s.Topics) == 0 || s.Partitions <= 0 {
		return nil, fmt.Errorf("setup names %d topics of %d partitions", len(s.Topics), s.Partitions)
	}
	clk, err := newClock()
	if err != nil {
		return nil, fmt.Errorf("reading CLOCK_MONOTONIC: %w", err)
	}
	props := map[string]string{}
	for k, v := range s.Properties {
		props[k] = v
	}
	groupID := props["group.id"]
	delete(props, "group.id")
	// kafkabench's run asks every reader for partition ends (librdkafka's partition EOF), which
	// this worker always says (`end`); no franz-go option stands for it.
	if v, ok := props["enable.partition.eof"]; ok {
		if v != "true" {
			return nil, fmt.Errorf("enable.partition.eof = %s: franz-go's worker always says partition ends", v)
		}
		delete(props, "enable.partition.eof")
	}
	opts, err := options("reader", props)
	if err != nil {
		return nil, err
	}
	r := &reader{s: s, w: w, clk: clk, origin: int64(s.OriginMonotonicNs), sums: &fetchSums{},
		index: map[string]int{}, held: map[string][]int32{}, atEnd: map[int32]bool{},
		from: map[int32]int64{}}
	for i, t := range s.Topics {
		r.index[t] = i
	}
	opts = append(opts, kgo.WithHooks(r.sums))
	if s.Group {
		if groupID == "" {
			return nil, errors.New("a group reader without group.id")
		}
		opts = append(opts, kgo.ConsumerGroup(groupID), kgo.ConsumeTopics(s.Topics...),
			kgo.OnPartitionsAssigned(r.assigned), kgo.OnPartitionsRevoked(r.revoked(false)),
			kgo.OnPartitionsLost(r.revoked(true)))
		switch s.Commit.Kind {
		case "auto":
			opts = append(opts, kgo.AutoCommitInterval(time.Duration(s.Commit.IntervalMs)*time.Millisecond))
		case "every", "off":
			opts = append(opts, kgo.DisableAutoCommit())
		default:
			return nil, fmt.Errorf("a commit policy of kind %q", s.Commit.Kind)
		}
	} else {
		parts := map[string]map[int32]kgo.Offset{}
		for _, a := range s.Assign {
			var ti int
			var p int32
			var at u64str
			if json.Unmarshal(a[0], &ti) != nil || json.Unmarshal(a[1], &p) != nil || json.Unmarshal(a[2], &at) != nil ||
				ti < 0 || ti >= len(s.Topics) {
				return nil, fmt.Errorf("an assignment %s", a)
			}
			o := kgo.NewOffset().At(int64(at))
			if at == -2 {
				o = kgo.NewOffset().AtStart()
			}
			t := s.Topics[ti]
			r.from[r.part(t, p)] = int64(at)
			if parts[t] == nil {
				parts[t] = map[int32]kgo.Offset{}
			}
			parts[t][p] = o
		}
		opts = append(opts, kgo.ConsumePartitions(parts))
	}
	r.opts = opts
	return r, nil
}

// begin starts reading, after `ready`: kafkabench takes no `assigned` before it.
func (r *reader) begin() error {
	if err := r.start(); err != nil {
		return err
	}
	if !r.s.Group {
		// Assigned by hand: said at once, and the empty ones reached their end already.
		all := map[string][]int32{}
		for _, a := range r.s.Assign {
			var ti int
			var p int32
			_ = json.Unmarshal(a[0], &ti)
			_ = json.Unmarshal(a[1], &p)
			all[r.s.Topics[ti]] = append(all[r.s.Topics[ti]], p)
		}
		r.mu.Lock()
		cl := r.cl
		r.mu.Unlock()
		r.assigned(context.Background(), cl, all)
	}
	return nil
}

// u64str is a JSON offset: a decimal string or a number, possibly negative.
type u64str int64

func (v *u64str) UnmarshalJSON(b []byte) error {
	var s json.Number
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, (*string)(&s)); err != nil {
			return err
		}
	} else {
		s = json.Number(b)
	}
	n, err := s.Int64()
	*v = u64str(n)
	return err
}

// start creates the client (again after `leave`) and starts polling.
func (r *reader) start() error {
	cl, err := kgo.NewClient(r.opts...)
	if err != nil {
		return fmt.Errorf("cannot create the client: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.mu.Lock()
	r.cl, r.cancel, r.polling = cl, cancel, make(chan struct{})
	if r.s.Paused && !r.measuring.Load() && !r.s.Group {
		for _, a := range r.s.Assign {
			var ti int
			var p int32
			_ = json.Unmarshal(a[0], &ti)
			_ = json.Unmarshal(a[1], &p)
			r.held[r.s.Topics[ti]] = append(r.held[r.s.Topics[ti]], p)
		}
		cl.PauseFetchPartitions(r.held)
	}
	done := r.polling
	r.mu.Unlock()
	go r.poll(ctx, cl, done)
	return nil
}

// stopPolling ends the polling goroutine and closes the client (leaving the group).
func (r *reader) stopPolling() {
	r.mu.Lock()
	cl, cancel, done := r.cl, r.cancel, r.polling
	r.cl = nil
	r.mu.Unlock()
	if cl == nil {
		return
	}
	cancel()
	<-done
	if r.s.Group && r.s.Commit.Kind == "every" {
		ctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		if err := cl.CommitUncommittedOffsets(ctx); err != nil {
			r.w.send(map[string]any{"msg": "error", "message": "commit: " + err.Error(), "fatal": false})
		}
		c()
	}
	cl.Close()
}

func (r *reader) assigned(_ context.Context, cl *kgo.Client, tps map[string][]int32) {
	var parts []int32
	for t, ps := range tps {
		for _, p := range ps {
			parts = append(parts, r.part(t, p))
		}
	}
	gen := int32(-1)
	if r.s.Group {
		_, gen = cl.GroupMetadata()
		if r.s.Paused && !r.measuring.Load() {
			cl.PauseFetchPartitions(tps)
			r.mu.Lock()
			for t, ps := range tps {
				r.held[t] = append(r.held[t], ps...)
			}
			r.mu.Unlock()
		}
	}
	r.w.send(map[string]any{"msg": "assigned", "parts": parts, "generation": gen})
	r.emptyEnds(cl, tps)
}

// emptyEnds says `end` for each partition with nothing to read from where reading starts
// (librdkafka says so with a partition EOF at once; without it kafkabench would wait).
func (r *reader) emptyEnds(cl *kgo.Client, tps map[string][]int32) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	topics := make([]string, 0, len(tps))
	for t := range tps {
		topics = append(topics, t)
	}
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return
	}
	for t, ps := range tps {
		for _, p := range ps {
			e, ok1 := ends.Lookup(t, p)
			s, ok2 := starts.Lookup(t, p)
			from := s.Offset
			if at, ok := r.from[r.part(t, p)]; ok && at >= 0 {
				from = max(from, at)
			}
			if ok1 && ok2 && e.Err == nil && s.Err == nil && e.Offset <= from {
				r.end(r.part(t, p))
			}
		}
	}
}

func (r *reader) end(part int32) {
	r.mu.Lock()
	said := r.atEnd[part]
	r.atEnd[part] = true
	r.mu.Unlock()
	if !said {
		r.w.send(map[string]any{"msg": "end", "part": part})
	}
}

func (r *reader) revoked(lost bool) func(context.Context, *kgo.Client, map[string][]int32) {
	return func(_ context.Context, _ *kgo.Client, tps map[string][]int32) {
		parts := []int32{}
		for t, ps := range tps {
			for _, p := range ps {
				parts = append(parts, r.part(t, p))
			}
		}
		r.w.send(map[string]any{"msg": "revoked", "parts": parts, "lost": lost})
	}
}

// poll reads until its context ends: one clock reading per poll, one R frame per poll.
func (r *reader) poll(ctx context.Context, cl *kgo.Client, done chan struct{}) {
	defer close(done)
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		now := uint64(r.clk.now() - r.origin)
		for _, e := range fs.Errors() {
			if errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, kgo.ErrClientClosed) {
				return
			}
			r.w.send(map[string]any{"msg": "error", "message": e.Err.Error(), "fatal": false})
		}
		n := fs.NumRecords()
		if n == 0 {
			continue
		}
		f := make([]byte, 5, 5+readLen*n)
		f[4] = 'R'
		var ends []int32
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if len(p.Records) == 0 {
				return
			}
			part := r.part(p.Topic, p.Partition)
			for _, rec := range p.Records {
				var b [readLen]byte
				binary.LittleEndian.PutUint64(b[0:], now)
				binary.LittleEndian.PutUint64(b[8:], uint64(rec.Offset))
				binary.LittleEndian.PutUint32(b[16:], uint32(part))
				binary.LittleEndian.PutUint32(b[20:], uint32(len(rec.Key)+len(rec.Value)))
				for _, h := range rec.Headers {
					if h.Key == gen.StampHeader && len(h.Value) == gen.StampLen {
						copy(b[24:45], h.Value)
						b[45] = 1
					}
				}
				f = append(f, b[:]...)
			}
			r.mu.Lock()
			r.atEnd[part] = false
			r.mu.Unlock()
			if last := p.Records[len(p.Records)-1]; last.Offset+1 >= p.HighWatermark {
				ends = append(ends, part)
			}
		})
		binary.LittleEndian.PutUint32(f, uint32(len(f)-4))
		r.w.frames <- f
		for _, part := range ends {
			r.end(part)
		}
		if r.s.Group && r.s.Commit.Kind == "every" {
			r.sinceCmt += int64(n)
			if r.sinceCmt >= max(r.s.Commit.Records, 1) {
				r.sinceCmt = 0
				if r.s.Commit.Sync {
					if err := cl.CommitUncommittedOffsets(ctx); err != nil && ctx.Err() == nil {
						r.w.send(map[string]any{"msg": "error", "message": "commit: " + err.Error(), "fatal": false})
					}
				} else {
					cl.CommitRecords(context.Background(), lastOf(fs)...)
				}
			}
		}
	}
}

// lastOf is each partition's last record of a poll: what an asynchronous commit marks.
func lastOf(fs kgo.Fetches) []*kgo.Record {
	var out []*kgo.Record
	fs.EachPartition(func(p kgo.FetchTopicPartition) {
		if n := len(p.Records); n > 0 {
			out = append(out, p.Records[n-1])
		}
	})
	return out
}

func processCPU() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_PROCESS_CPUTIME_ID, &ts)
	return ts.Nano()
}

// serve reads kafkabench's messages: measure, leave, rejoin, stop, close.
func (r *reader) serve(in *frameReader) error {
	for {
		typ, body, err := in.next()
		if err != nil {
			return fmt.Errorf("reading from kafkabench: %w", err)
		}
		if typ != 'J' {
			return fmt.Errorf("a %q frame for a reader", typ)
		}
		name, err := msgName(body)
		if err != nil {
			return err
		}
		switch name {
		case "measure":
			r.measuring.Store(true)
			r.requests0, r.bytes0, r.cpu0 = r.sums.requests.Load(), r.sums.bytes.Load(), processCPU()
			r.mu.Lock()
			if r.cl != nil && len(r.held) > 0 {
				r.cl.ResumeFetchPartitions(r.held)
			}
			r.held = map[string][]int32{}
			r.mu.Unlock()
		case "leave":
			r.stopPolling()
		case "rejoin":
			if err := r.start(); err != nil {
				return err
			}
		case "stop":
			r.stopPolling()
		case "close":
			r.stopPolling()
			cpu := processCPU() - r.cpu0
			r.w.send(map[string]any{"msg": "bye", "reader_cpu_ns": utoa(uint64(max(cpu, 0))),
				"internals": map[string]map[string]any{
					"fetch-requests": {"total": float64(r.sums.requests.Load() - r.requests0)},
					"fetch-bytes":    {"total": float64(r.sums.bytes.Load() - r.bytes0)},
				}})
			return nil
		default:
			return fmt.Errorf("%q from kafkabench (a reader expects measure, leave, rejoin, stop or close)", name)
		}
	}
}
