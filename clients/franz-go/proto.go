package main

// The framed protocol of clients/PROTOCOL.md (version 2): a frame is a u32 little-endian
// length, a type letter and a body; `J` frames hold one JSON message, `C` frames completion
// records, `L` frames payload lines.

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
)

const (
	protocolVersion = 2
	maxFrame        = 16 << 20
	// completionFrame: completion records are written in frames of up to this many bytes,
	// or every flushEvery while records wait.
	completionFrame = 64 << 10
	completionLen   = 48
)

// u64 is a JSON 64-bit integer: a decimal string (as the protocol writes every value that
// may exceed 2^53) or a plain number.
type u64 uint64

func (v *u64) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	x, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return fmt.Errorf("not an unsigned 64-bit integer: %s", b)
	}
	*v = u64(x)
	return nil
}

// frameReader reads kafkabench's frames from standard input.
type frameReader struct{ r *bufio.Reader }

func (f *frameReader) next() (byte, []byte, error) {
	var head [5]byte
	if _, err := io.ReadFull(f.r, head[:4]); err != nil {
		return 0, nil, err
	}
	n := binary.LittleEndian.Uint32(head[:4])
	if n < 1 || n > maxFrame {
		return 0, nil, fmt.Errorf("a frame of %d bytes (1 to %d allowed)", n, maxFrame)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(f.r, body); err != nil {
		return 0, nil, fmt.Errorf("a frame cut short: %w", err)
	}
	return body[0], body[1:], nil
}

// decode reads a J frame's body into v, refusing fields v does not have.
func decode(body []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// msgName reads a J frame's "msg" field.
func msgName(body []byte) (string, error) {
	var m struct {
		Msg string `json:"msg"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return "", err
	}
	if m.Msg == "" {
		return "", errors.New(`a message without "msg"`)
	}
	return m.Msg, nil
}

// writer owns standard output: frames are handed to it whole, in order, and written by one
// goroutine, so the promise goroutine never waits on the pipe while holding anything.
type writer struct {
	frames chan []byte
	done   chan struct{}
	err    error
	free   sync.Pool
}

func newWriter() *writer {
	w := &writer{frames: make(chan []byte, 64), done: make(chan struct{})}
	go w.loop()
	return w
}

func (w *writer) loop() {
	defer close(w.done)
	out := bufio.NewWriterSize(os.Stdout, 256<<10)
	for f := range w.frames {
		if w.err == nil {
			_, w.err = out.Write(f)
		}
		if cap(f) >= completionFrame {
			w.free.Put(f[:0])
		}
		// Write out once nothing more is waiting: a burst of frames is one write.
		if len(w.frames) == 0 && w.err == nil {
			w.err = out.Flush()
		}
	}
	if w.err == nil {
		w.err = out.Flush()
	}
}

// buffer is an empty frame buffer with room for a completion frame.
func (w *writer) buffer() []byte {
	if b, ok := w.free.Get().([]byte); ok {
		return b
	}
	return make([]byte, 0, completionFrame+5+completionLen)
}

// send writes one JSON message as a J frame.
func (w *writer) send(v any) {
	body, err := json.Marshal(v)
	if err != nil {
		panic(err) // our own messages always marshal
	}
	f := make([]byte, 5, 5+len(body))
	binary.LittleEndian.PutUint32(f, uint32(len(body)+1))
	f[4] = 'J'
	w.frames <- append(f, body...)
}

// close writes what is queued and waits for it.
func (w *writer) close() error {
	close(w.frames)
	<-w.done
	return w.err
}
