package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A Kafka property name and the franz-go option it stands for. kafkabench checks a
// scenario's names against the same table (clients/franz-go/properties.tsv; props_test.go
// holds the two together), so a name reaching the worker unknown is a bug, not a user's slip.
type property struct {
	role  string // producer, reader or both
	apply func(v string) ([]kgo.Opt, error)
}

func ms(v string) (time.Duration, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("milliseconds expected, not %q", v)
	}
	return time.Duration(n) * time.Millisecond, nil
}

func integer(v string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("an integer expected, not %q", v)
	}
	return n, nil
}

func one(o kgo.Opt) ([]kgo.Opt, error) { return []kgo.Opt{o}, nil }

func msOpt(f func(time.Duration) kgo.Opt) func(string) ([]kgo.Opt, error) {
	return func(v string) ([]kgo.Opt, error) {
		d, err := ms(v)
		if err != nil {
			return nil, err
		}
		return one(f(d))
	}
}

func intOpt(f func(int64) kgo.Opt) func(string) ([]kgo.Opt, error) {
	return func(v string) ([]kgo.Opt, error) {
		n, err := integer(v)
		if err != nil {
			return nil, err
		}
		return one(f(n))
	}
}

var properties = map[string]property{
	"bootstrap.servers": {"both", func(v string) ([]kgo.Opt, error) {
		return one(kgo.SeedBrokers(strings.Split(v, ",")...))
	}},
	"client.id":           {"both", func(v string) ([]kgo.Opt, error) { return one(kgo.ClientID(v)) }},
	"metadata.max.age.ms": {"both", msOpt(func(d time.Duration) kgo.Opt { return kgo.MetadataMaxAge(d) })},
	"acks": {"producer", func(v string) ([]kgo.Opt, error) {
		switch v {
		case "0":
			return one(kgo.RequiredAcks(kgo.NoAck()))
		case "1":
			return one(kgo.RequiredAcks(kgo.LeaderAck()))
		case "all", "-1":
			return one(kgo.RequiredAcks(kgo.AllISRAcks()))
		}
		return nil, fmt.Errorf("0, 1, all or -1 expected, not %q", v)
	}},
	"enable.idempotence": {"producer", func(v string) ([]kgo.Opt, error) {
		switch v {
		case "true":
			return nil, nil // franz-go's default
		case "false":
			return one(kgo.DisableIdempotentWrite())
		}
		return nil, fmt.Errorf("true or false expected, not %q", v)
	}},
	"linger.ms":  {"producer", msOpt(func(d time.Duration) kgo.Opt { return kgo.ProducerLinger(d) })},
	"batch.size": {"producer", intOpt(func(n int64) kgo.Opt { return kgo.ProducerBatchMaxBytes(int32(n)) })},
	"max.request.size": {"producer", intOpt(func(n int64) kgo.Opt {
		return kgo.BrokerMaxWriteBytes(int32(n))
	})},
	"compression.type": {"producer", func(v string) ([]kgo.Opt, error) {
		c, ok := map[string]kgo.CompressionCodec{
			"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(),
			"snappy": kgo.SnappyCompression(), "lz4": kgo.Lz4Compression(),
			"zstd": kgo.ZstdCompression(),
		}[v]
		if !ok {
			return nil, fmt.Errorf("none, gzip, snappy, lz4 or zstd expected, not %q", v)
		}
		return one(kgo.ProducerBatchCompression(c))
	}},
	"max.in.flight.requests.per.connection": {"producer", intOpt(func(n int64) kgo.Opt {
		return kgo.MaxProduceRequestsInflightPerBroker(int(n))
	})},
	"buffer.memory": {"producer", intOpt(func(n int64) kgo.Opt { return kgo.MaxBufferedBytes(int(n)) })},
	"max.buffered.records": {"producer", intOpt(func(n int64) kgo.Opt {
		return kgo.MaxBufferedRecords(int(n))
	})},
	"request.timeout.ms":      {"producer", msOpt(func(d time.Duration) kgo.Opt { return kgo.ProduceRequestTimeout(d) })},
	"delivery.timeout.ms":     {"producer", msOpt(func(d time.Duration) kgo.Opt { return kgo.RecordDeliveryTimeout(d) })},
	"retries":                 {"producer", intOpt(func(n int64) kgo.Opt { return kgo.RecordRetries(int(n)) })},
	"connections.max.idle.ms": {"both", msOpt(func(d time.Duration) kgo.Opt { return kgo.ConnIdleTimeout(d) })},
	"socket.connection.setup.timeout.ms": {"both", msOpt(func(d time.Duration) kgo.Opt {
		return kgo.DialTimeout(d)
	})},
	"transactional.id": {"producer", func(v string) ([]kgo.Opt, error) { return one(kgo.TransactionalID(v)) }},
	"transaction.timeout.ms": {"producer", msOpt(func(d time.Duration) kgo.Opt {
		return kgo.TransactionTimeout(d)
	})},
	// The reader's.
	"auto.offset.reset": {"reader", func(v string) ([]kgo.Opt, error) {
		switch v {
		case "earliest", "smallest", "beginning":
			return one(kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		case "latest", "largest", "end":
			return one(kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()))
		case "none", "error":
			return one(kgo.ConsumeResetOffset(kgo.NoResetOffset()))
		}
		return nil, fmt.Errorf("earliest, latest or none expected, not %q", v)
	}},
	"isolation.level": {"reader", func(v string) ([]kgo.Opt, error) {
		switch v {
		case "read_committed":
			return one(kgo.FetchIsolationLevel(kgo.ReadCommitted()))
		case "read_uncommitted":
			return one(kgo.FetchIsolationLevel(kgo.ReadUncommitted()))
		}
		return nil, fmt.Errorf("read_committed or read_uncommitted expected, not %q", v)
	}},
	"fetch.min.bytes":           {"reader", intOpt(func(n int64) kgo.Opt { return kgo.FetchMinBytes(int32(n)) })},
	"fetch.max.wait.ms":         {"reader", msOpt(func(d time.Duration) kgo.Opt { return kgo.FetchMaxWait(d) })},
	"fetch.max.bytes":           {"reader", intOpt(func(n int64) kgo.Opt { return kgo.FetchMaxBytes(int32(n)) })},
	"max.partition.fetch.bytes": {"reader", intOpt(func(n int64) kgo.Opt { return kgo.FetchMaxPartitionBytes(int32(n)) })},
	"session.timeout.ms":        {"reader", msOpt(func(d time.Duration) kgo.Opt { return kgo.SessionTimeout(d) })},
	"heartbeat.interval.ms":     {"reader", msOpt(func(d time.Duration) kgo.Opt { return kgo.HeartbeatInterval(d) })},
	"auto.commit.interval.ms":   {"reader", msOpt(func(d time.Duration) kgo.Opt { return kgo.AutoCommitInterval(d) })},
	"enable.auto.commit": {"reader", func(v string) ([]kgo.Opt, error) {
		switch v {
		case "true":
			return nil, nil // franz-go's default
		case "false":
			return one(kgo.DisableAutoCommit())
		}
		return nil, fmt.Errorf("true or false expected, not %q", v)
	}},
	"max.poll.interval.ms": {"reader", msOpt(func(d time.Duration) kgo.Opt { return kgo.RebalanceTimeout(d) })},
	"client.rack":          {"reader", func(v string) ([]kgo.Opt, error) { return one(kgo.Rack(v)) }},
	"check.crcs": {"reader", func(v string) ([]kgo.Opt, error) {
		switch v {
		case "true":
			return nil, nil // franz-go's default
		case "false":
			return one(kgo.DisableFetchCRCValidation())
		}
		return nil, fmt.Errorf("true or false expected, not %q", v)
	}},
	"group.instance.id": {"reader", func(v string) ([]kgo.Opt, error) { return one(kgo.InstanceID(v)) }},
	"partition.assignment.strategy": {"reader", func(v string) ([]kgo.Opt, error) {
		b, ok := map[string]func() kgo.GroupBalancer{
			"range": kgo.RangeBalancer, "roundrobin": kgo.RoundRobinBalancer,
			"sticky": kgo.StickyBalancer, "cooperative-sticky": kgo.CooperativeStickyBalancer,
		}[v]
		if !ok {
			return nil, fmt.Errorf("range, roundrobin, sticky or cooperative-sticky expected, not %q", v)
		}
		return one(kgo.Balancers(b()))
	}},
	// KIP-848 (`consumer`): the broker assigns, which franz-go calls ServerSideBalancer (with
	// a range or sticky balancer; its default cooperative-sticky is one). franz-go's own
	// GroupProtocol option is another thing: the classic JoinGroup's protocol type, whose
	// default is the string "consumer" too.
	"group.protocol": {"reader", func(v string) ([]kgo.Opt, error) {
		switch v {
		case "classic":
			return nil, nil
		case "consumer":
			return []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(kgo.CooperativeStickyBalancer())}, nil
		}
		return nil, fmt.Errorf("classic or consumer expected, not %q", v)
	}},
}

// options turns a role's properties into franz-go options; a name the table lacks is an error.
func options(role string, props map[string]string) ([]kgo.Opt, error) {
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	var opts []kgo.Opt
	// FRANZ_GO_WORKER_LOG=debug|info|warn|error: franz-go's own log on standard error, which
	// kafkabench keeps the end of and shows when the worker fails.
	if lvl, ok := map[string]kgo.LogLevel{"debug": kgo.LogLevelDebug, "info": kgo.LogLevelInfo,
		"warn": kgo.LogLevelWarn, "error": kgo.LogLevelError}[os.Getenv("FRANZ_GO_WORKER_LOG")]; ok {
		opts = append(opts, kgo.WithLogger(kgo.BasicLogger(os.Stderr, lvl, nil)))
	}
	for _, k := range names {
		p, ok := properties[k]
		if !ok || (p.role != "both" && p.role != role) {
			return nil, fmt.Errorf("franz-go's worker has no option for the %s property %q", role, k)
		}
		o, err := p.apply(props[k])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		opts = append(opts, o...)
	}
	return opts, nil
}
