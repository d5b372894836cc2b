package main

import (
	"time"
	_ "unsafe" // runtime.nanotime, below

	"golang.org/x/sys/unix"
)

// nanotime is Go's runtime clock: CLOCK_MONOTONIC on Linux, read by one vDSO call. time.Now
// reads the wall clock too (two vDSO calls), and a completion needs only the monotonic one:
// on this VM that halves the clock's cost per record (BenchmarkClock). The runtime keeps
// this name linkable on purpose (go.dev/issue/67401).
//
//go:linkname nanotime runtime.nanotime
func nanotime() int64

// clock gives CLOCK_MONOTONIC in nanoseconds, the clock kafkabench's stamps and the run's
// origin count on (Java's nanoTime on Linux). It is checked once against clock_gettime: when
// the runtime's clock is that clock (Linux), a reading is nanotime() alone; otherwise the
// value is read once with clock_gettime, between two time.Now calls, and every later reading
// is that value plus time.Since on Go's own reading of the same clock.
type clock struct {
	direct bool
	base   int64 // CLOCK_MONOTONIC at `anchor`, ns
	anchor time.Time
}

func newClock() (clock, error) {
	var best clock
	bestGap := time.Duration(1<<63 - 1)
	direct := true
	// The narrowest of a few brackets: a preemption between the reads would widen the error.
	for range 5 {
		before := time.Now()
		n0 := nanotime()
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			return clock{}, err
		}
		n1 := nanotime()
		after := time.Now()
		// The runtime's clock is CLOCK_MONOTONIC when it brackets clock_gettime's reading.
		direct = direct && n0 <= ts.Nano() && ts.Nano() <= n1
		if gap := after.Sub(before); gap < bestGap {
			bestGap = gap
			mid := before.Add(gap / 2)
			best = clock{base: ts.Nano(), anchor: mid}
		}
	}
	best.direct = direct
	return best, nil
}

// now is CLOCK_MONOTONIC in nanoseconds.
func (c *clock) now() int64 {
	if c.direct {
		return nanotime()
	}
	return c.base + int64(time.Since(c.anchor))
}
