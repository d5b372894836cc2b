package main

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The worker's clock reads CLOCK_MONOTONIC (what kafkabench's origin counts on): a reading
// of clock_gettime falls between two of its readings.
func TestClockIsClockMonotonic(t *testing.T) {
	clk, err := newClock()
	if err != nil {
		t.Fatal(err)
	}
	if !clk.direct {
		t.Log("the runtime's clock is not CLOCK_MONOTONIC here: the offset clock is used")
	}
	for range 100 {
		a := clk.now()
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		b := clk.now()
		// The offset clock may be off by its bracket (a few µs); the direct one not at all.
		slack := int64(0)
		if !clk.direct {
			slack = 50_000
		}
		if ts.Nano() < a-slack || ts.Nano() > b+slack {
			t.Fatalf("clock_gettime %d outside [%d, %d]", ts.Nano(), a, b)
		}
	}
}
