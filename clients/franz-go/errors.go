package main

import (
	"context"
	"errors"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// errorKinds numbers the kinds of error completions carry, naming each to kafkabench once,
// before the first completion that uses it (PROTOCOL.md, `error_kind`).
type errorKinds struct {
	mu  sync.Mutex
	w   *writer
	ids map[string]uint8
}

func newErrorKinds(w *writer) *errorKinds { return &errorKinds{w: w, ids: map[string]uint8{}} }

// otherKind is the id every kind past the 254th shares.
const otherKind = 255

func (k *errorKinds) id(err error) uint8 {
	name := errorName(err)
	k.mu.Lock()
	defer k.mu.Unlock()
	if id, ok := k.ids[name]; ok {
		return id
	}
	id := uint8(otherKind)
	if len(k.ids) < otherKind-1 {
		id = uint8(len(k.ids) + 1)
	} else {
		name = "other"
		if _, ok := k.ids[name]; ok {
			return id
		}
	}
	k.ids[name] = id
	k.w.send(map[string]any{"msg": "error_kind", "id": id, "name": name})
	return id
}

// errorName is the client's own name for an error: the Kafka error code's (kerr), franz-go's
// sentinel's, or the error's text.
func errorName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	for _, s := range []struct {
		err  error
		name string
	}{
		{kgo.ErrRecordTimeout, "ErrRecordTimeout"},
		{kgo.ErrRecordRetries, "ErrRecordRetries"},
		{kgo.ErrMaxBuffered, "ErrMaxBuffered"},
		{kgo.ErrClientClosed, "ErrClientClosed"},
		{kgo.ErrAborting, "ErrAborting"},
		{context.Canceled, "Canceled"},
		{context.DeadlineExceeded, "DeadlineExceeded"},
	} {
		if errors.Is(err, s.err) {
			return s.name
		}
	}
	text := err.Error()
	if len(text) > 120 {
		text = text[:120]
	}
	return text
}
