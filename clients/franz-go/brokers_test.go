package main

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

func hook(a *ackBrokers, topic string, partition int32, broker int32, n int) {
	a.OnProduceBatchWritten(kgo.BrokerMetadata{NodeID: broker}, topic, partition, kgo.ProduceBatchMetrics{NumRecords: n})
}

// Each partition's records fall into its own batches, in order, whatever the other
// partitions do; a hook that comes after its records' promises started is waited for.
func TestAckBrokersMatchEachPartitionsBatchesInOrder(t *testing.T) {
	a := newAckBrokers([]string{"a", "b"})
	hook(a, "a", 0, 1, 2)
	hook(a, "b", 3, 7, 1)
	hook(a, "a", 0, 2, 1) // the leader moved
	want := []struct {
		topic int
		part  int32
		br    int32
	}{{0, 0, 1}, {1, 3, 7}, {0, 0, 1}, {0, 0, 2}}
	for i, w := range want {
		if got := a.acked(w.topic, w.part); got != w.br {
			t.Fatalf("record %d: broker %d, want %d", i, got, w.br)
		}
	}
	go hook(a, "a", 1, 3, 1)
	if got := a.acked(0, 1); got != 3 {
		t.Fatalf("a record whose hook came later: broker %d, want 3", got)
	}
	if got := a.acked(5, 0); got != noBroker {
		t.Fatalf("a topic the run does not have: broker %d", got)
	}
}

// After a failure on a partition its brokers are unknown (-1), never a neighbour's; other
// partitions keep theirs.
func TestAckBrokersSayUnknownOnceAPartitionIsOutOfStep(t *testing.T) {
	a := newAckBrokers([]string{"a"})
	hook(a, "a", 0, 1, 3)
	hook(a, "a", 1, 2, 1)
	if got := a.acked(0, 0); got != 1 {
		t.Fatalf("broker %d, want 1", got)
	}
	a.failed(0, 0)
	hook(a, "a", 0, 4, 1)
	for range 3 {
		if got := a.acked(0, 0); got != noBroker {
			t.Fatalf("after a failure: broker %d, want unknown", got)
		}
	}
	if got := a.acked(0, 1); got != 2 {
		t.Fatalf("another partition: broker %d, want 2", got)
	}
}
