package testkit

import (
	"bytes"
	"io"
)

// LineWriter is a process's stderr for tests that wait for a log line: it passes every
// write to Sink and each complete line to Lines. Lines is buffered; a line nobody reads in
// time is dropped rather than blocking the process (a test waiting for it then times out).
// Write is called from one goroutine at a time, as exec.Cmd does.
type LineWriter struct {
	Sink    io.Writer
	Lines   chan string
	partial []byte
}

// NewLineWriter is a LineWriter whose Lines holds up to buffer unread lines.
func NewLineWriter(sink io.Writer, buffer int) *LineWriter {
	return &LineWriter{Sink: sink, Lines: make(chan string, buffer)}
}

// Write passes p to Sink and its complete lines to Lines.
func (w *LineWriter) Write(p []byte) (int, error) {
	if _, err := w.Sink.Write(p); err != nil {
		return 0, err
	}
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		select {
		case w.Lines <- string(w.partial[:i]):
		default: // nobody waits for lines any more
		}
		w.partial = w.partial[i+1:]
	}
	return len(p), nil
}
