// Command franz-go is kafkabench's franz-go worker: one producer on franz-go, driven over
// the framed protocol of clients/PROTOCOL.md on its standard input and output. It sends on
// kafkabench's schedule with kafkabench's generator (package gen) and reports one completion
// record per record from franz-go's promise; kafkabench measures everything.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sys/unix"

	"kafkabench/clients/franz-go/gen"
)

const franzModule = "github.com/twmb/franz-go"

func utoa(v uint64) string { return strconv.FormatUint(v, 10) }

// clientVersion is franz-go's module version this binary was built with.
func clientVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == franzModule {
				if d.Replace != nil {
					return d.Replace.Version
				}
				return d.Version
			}
		}
	}
	return "unknown"
}

func main() {
	if path := os.Getenv("FRANZ_GO_WORKER_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			defer pprof.StopCPUProfile()
		}
	}
	w := newWriter()
	err := serve(w)
	if err != nil {
		w.send(map[string]any{"msg": "fail", "message": err.Error()})
	}
	if cerr := w.close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "franz-go worker:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func serve(w *writer) error {
	w.send(map[string]any{"msg": "hello", "protocol": protocolVersion, "client": "franz-go",
		"version": clientVersion(), "roles": []string{"producer", "reader"}})
	in := &frameReader{r: bufio.NewReaderSize(os.Stdin, 1<<20)}
	typ, body, err := in.next()
	if err != nil {
		return fmt.Errorf("reading setup: %w", err)
	}
	if typ != 'J' {
		return fmt.Errorf("a %q frame where setup was due", typ)
	}
	if name, err := msgName(body); err != nil || name != "setup" {
		return fmt.Errorf("%q where setup was due (%v)", name, err)
	}
	var role struct {
		Role string `json:"role"`
	}
	_ = json.Unmarshal(body, &role)
	if role.Role == "reader" {
		var s readerSetup
		if err := decode(body, &s); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
		r, err := newReader(w, &s)
		if err != nil {
			return err
		}
		w.send(map[string]any{"msg": "ready"})
		if err := r.begin(); err != nil {
			return err
		}
		return r.serve(in)
	}
	var s setupMsg
	if err := decode(body, &s); err != nil {
		return fmt.Errorf("setup: %w", err)
	}
	if s.Role != "producer" {
		return fmt.Errorf("the %q role (franz-go's worker has producer and reader)", s.Role)
	}
	p, err := newProducer(w, &s)
	if err != nil {
		return err
	}
	defer p.cl.Close()
	w.send(map[string]any{"msg": "ready"})
	return p.serve(in)
}

func newProducer(w *writer, s *setupMsg) (*producer, error) {
	if len(s.Topics) == 0 || len(s.Topics) > 1<<16 {
		return nil, fmt.Errorf("setup names %d topics", len(s.Topics))
	}
	if s.ShareOf == 0 || s.ShareIndex >= s.ShareOf {
		return nil, fmt.Errorf("share %d of %d", s.ShareIndex, s.ShareOf)
	}
	if s.TopicFirst < 0 || s.TopicFirst >= len(s.Topics) || s.TopicStep < 0 {
		return nil, fmt.Errorf("topic_first %d, topic_step %d over %d topics", s.TopicFirst, s.TopicStep, len(s.Topics))
	}
	rate, err := s.Rate.rate()
	if err != nil {
		return nil, err
	}
	keys, err := s.Key.key()
	if err != nil {
		return nil, err
	}
	clk, err := newClock()
	if err != nil {
		return nil, fmt.Errorf("reading CLOCK_MONOTONIC: %w", err)
	}
	opts, err := options("producer", s.Properties)
	if err != nil {
		return nil, err
	}
	hooks := &internals{}
	brokers := newAckBrokers(s.Topics)
	opts = append(opts, kgo.WithHooks(hooks, brokers))
	if s.Partitions != nil {
		if len(s.Partitions) == 0 {
			return nil, errors.New("setup gives an empty list of partitions")
		}
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("cannot create the client: %w", err)
	}
	if err := awaitLeaders(cl, s.Topics); err != nil {
		cl.Close()
		return nil, err
	}
	p := &producer{
		cl: cl, clk: clk, origin: int64(s.OriginMonotonicNs), unixMs: uint64(s.UnixMsAtOrigin),
		s: s, hooks: hooks, brokers: brokers, comp: newCompletions(w), kinds: newErrorKinds(w),
		keys: gen.NewKeyGen(keys, uint64(s.Seeds.Key)), rate: rate,
		manual: s.Partitions != nil,
	}
	if s.TombstoneAtMost != nil {
		p.tombs = gen.NewTombstonesAtMost(uint64(*s.TombstoneAtMost), uint64(s.Seeds.Tombstone))
	}
	for _, h := range s.Headers {
		p.userHeaders = append(p.userHeaders, kgo.RecordHeader{Key: h[0], Value: []byte(h[1])})
	}
	if s.InFlight != nil {
		p.inFlightWake = make(chan struct{}, 1)
	}
	p.promise = p.onPromise
	p.buffer = newBufferWatch(cl)
	return p, nil
}

// awaitLeaders waits until every partition of the run's topics has a leader, and opens the
// produce connections to them, so that the first records do not wait for either. franz-go
// loads a topic's partitions into its producer on the first record sent to it: that one
// metadata request is the only wait left.
func awaitLeaders(cl *kgo.Client, topics []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	for {
		md, err := adm.Metadata(ctx, topics...)
		missing := ""
		if err == nil {
			for _, t := range topics {
				d, ok := md.Topics[t]
				switch {
				case !ok || d.Err != nil:
					missing = t
				case len(d.Partitions) == 0:
					missing = t
				}
				for _, pd := range d.Partitions {
					if pd.Err != nil || pd.Leader < 0 {
						missing = t
					}
				}
			}
			if missing == "" {
				leaders := map[int32]bool{}
				for _, t := range topics {
					for _, pd := range md.Topics[t].Partitions {
						leaders[pd.Leader] = true
					}
				}
				ids := make([]int32, 0, len(leaders))
				for id := range leaders {
					ids = append(ids, id)
				}
				if err := cl.EnsureProduceConnectionIsOpen(ctx, ids...); err != nil {
					return fmt.Errorf("opening produce connections: %w", err)
				}
				return nil
			}
		}
		select {
		case <-ctx.Done():
			if err != nil {
				return fmt.Errorf("no metadata for the run's topics: %w", err)
			}
			return fmt.Errorf("topic %s has no leader for every partition after 60 s", missing)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// serve reads kafkabench's messages after `ready`: payload lines, phases, stop and close.
// Phases run on a sender goroutine locked to its own thread, so `stop` is read meanwhile.
func (p *producer) serve(in *frameReader) error {
	var lines [][]byte
	done := make(chan phaseResult, 1)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	running := false
	msgs := make(chan frame, 16)
	go func() {
		for {
			typ, body, err := in.next()
			msgs <- frame{typ, body, err}
			if err != nil {
				return
			}
		}
	}()
	for {
		var f frame
		select {
		case r := <-done:
			running = false
			p.comp.w.send(r)
			continue
		case <-tick.C:
			if running {
				p.buffer.sample(p.cl)
				p.comp.w.send(map[string]any{"msg": "progress", "sent": p.sentInPhase.Load()})
			}
			continue
		case f = <-msgs:
		}
		if f.err != nil {
			if errors.Is(f.err, io.EOF) {
				return errors.New("standard input closed before close")
			}
			return f.err
		}
		switch f.typ {
		case 'L':
			if p.payload != nil {
				return errors.New("payload lines after the first phase")
			}
			ls, err := splitLines(f.body)
			if err != nil {
				return err
			}
			lines = append(lines, ls...)
			continue
		case 'J':
		default:
			return fmt.Errorf("a %q frame from kafkabench", f.typ)
		}
		name, err := msgName(f.body)
		if err != nil {
			return err
		}
		switch name {
		case "phase":
			if running {
				return errors.New("a phase while one runs")
			}
			var ph phaseMsg
			if err := decode(f.body, &ph); err != nil {
				return fmt.Errorf("phase: %w", err)
			}
			if p.payload == nil {
				spec, err := p.s.Payload.payload(lines)
				if err != nil {
					return err
				}
				p.payload = gen.NewPayloadGen(spec, uint64(p.s.Seeds.Payload))
				p.shared = p.payload.Shared()
			}
			running = true
			go func() {
				if p.paced(&ph) {
					// A paced sender sleeps between records: on a thread of its own with a 1 µs
					// timer slack (the default 50 µs would dominate at high rates), as
					// kafkabench's own sender. An unlimited one never sleeps, and locked it
					// would wake franz-go's goroutines through other threads (10–20 % more CPU
					// per record here).
					runtime.LockOSThread()
					_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0)
					defer runtime.UnlockOSThread()
				}
				done <- p.runPhase(&ph)
			}()
		case "stop":
			var st struct {
				Msg            string `json:"msg"`
				DrainTimeoutMs *int64 `json:"drain_timeout_ms"`
			}
			if err := decode(f.body, &st); err != nil {
				return fmt.Errorf("stop: %w", err)
			}
			if st.DrainTimeoutMs != nil {
				p.stopCut.Store(time.Now().Add(time.Duration(*st.DrainTimeoutMs) * time.Millisecond).UnixNano())
			}
			p.stop.Store(true)
		case "close":
			if running {
				p.stop.Store(true)
				p.comp.w.send(<-done)
			}
			p.cl.Close()
			p.comp.flush()
			fmt.Fprintln(os.Stderr, "franz-go worker:", p.brokers.summary())
			p.comp.w.send(map[string]any{"msg": "bye"})
			return nil
		default:
			return fmt.Errorf("%q from kafkabench (a producer expects phase, stop or close)", name)
		}
	}
}

type frame struct {
	typ  byte
	body []byte
	err  error
}

// splitLines reads an L frame: any number of (u32 LE length, bytes).
func splitLines(b []byte) ([][]byte, error) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, errors.New("an L frame cut inside a length")
		}
		n := int(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
		if n > len(b)-4 {
			return nil, errors.New("an L frame cut inside a line")
		}
		out = append(out, b[4:4+n:4+n])
		b = b[4+n:]
	}
	return out, nil
}
