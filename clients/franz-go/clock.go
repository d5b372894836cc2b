package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// clock gives CLOCK_MONOTONIC in nanoseconds, the clock kafkabench's stamps and the run's
// origin count on (Java's nanoTime on Linux). Go keeps that clock's value to itself (time.Now
// carries it only for differences), so it is read once with clock_gettime, between two
// time.Now calls, and every later reading is that value plus time.Since on Go's own reading of
// the same clock: one vDSO call per reading, no syscall.
type clock struct {
	base   int64 // CLOCK_MONOTONIC at `anchor`, ns
	anchor time.Time
}

func newClock() (clock, error) {
	var best clock
	bestGap := time.Duration(1<<63 - 1)
	// The narrowest of a few brackets: a preemption between the reads would widen the error.
	for range 5 {
		before := time.Now()
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			return clock{}, err
		}
		after := time.Now()
		if gap := after.Sub(before); gap < bestGap {
			bestGap = gap
			mid := before.Add(gap / 2)
			best = clock{base: ts.Nano(), anchor: mid}
		}
	}
	return best, nil
}

// now is CLOCK_MONOTONIC in nanoseconds.
func (c *clock) now() int64 { return c.base + int64(time.Since(c.anchor)) }
