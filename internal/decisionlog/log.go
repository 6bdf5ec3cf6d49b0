package decisionlog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/orkspace/ork/internal/decision"
)

// MaxLine bounds a line, in bytes without its newline. An entry longer than that is written
// without its children's field paths (FieldsDropped); one still longer is refused.
const MaxLine = 256 << 10

// ErrStopped is in every Append error once a write or an fsync of the log failed: the last
// line on disk is then unknown (written in part, or not at all), so no line can be chained
// after it, and the log appends nothing more until it is opened again (Open cuts off a
// partial last line).
var ErrStopped = errors.New("decision log stopped")

// Options configure a Log.
type Options struct {
	// SyncInterval is the longest an appended line stays written but not fsynced to disk;
	// default 1s. Every line reaches the operating system at once (one write each, so a
	// crash of ork loses nothing); the interval bounds what a crash of the machine loses,
	// and keeps workers from waiting for the disk at every decision. Negative: fsync after
	// every line. Close always fsyncs.
	SyncInterval time.Duration
	// Now is the clock of the sync interval; default time.Now.
	Now func() time.Time
}

// Log appends chained entries to one file or writer. It is safe for concurrent use: lines
// are written whole and in the order their hashes chain.
type Log struct {
	mu       sync.Mutex
	w        io.Writer
	f        *os.File // nil when writing to a stream, which is never synced
	prev     string
	err      error // a failed write leaves the chain unknown: every later Append fails (ErrStopped)
	dirty    bool
	lastSync time.Time
	dropped  int64
	opts     Options
}

// Open opens dest for appending: "-" is stdout (a new chain each time), anything else a
// file, created 0600 if missing, whose chain continues from its last line. A last line cut
// short by a crash (no newline) is cut off first, as it was never completely written
// (Dropped says how many bytes); a last line that is complete but broken refuses the open,
// since continuing would chain to a line Verify rejects.
func Open(dest string, stdout io.Writer, o Options) (*Log, error) {
	if dest == "-" {
		return NewWriter(stdout, o), nil
	}
	f, err := os.OpenFile(dest, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open decision log: %w", err)
	}
	l := newLog(f, o)
	l.f = f
	if l.prev, l.dropped, err = tail(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("decision log %s: %w", dest, err)
	}
	return l, nil
}

// NewWriter returns a Log writing a new chain to w.
func NewWriter(w io.Writer, o Options) *Log { return newLog(w, o) }

func newLog(w io.Writer, o Options) *Log {
	if o.SyncInterval == 0 {
		o.SyncInterval = time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Log{w: w, prev: Genesis, opts: o, lastSync: o.Now()}
}

// Dropped is the number of bytes of a partial last line Open cut off.
func (l *Log) Dropped() int64 { return l.dropped }

// Append chains e after the last line and writes it; it returns e as written (Prev, Hash,
// and FieldsDropped if the line had to shrink).
func (l *Log) Append(e decision.Entry) (decision.Entry, error) {
	if err := e.Check(); err != nil {
		return e, fmt.Errorf("append to decision log: %w", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return e, l.err
	}
	line, out, err := encode(e, l.prev)
	if err == nil && len(line) > MaxLine {
		line, out, err = encode(e.DropFields(), l.prev)
	}
	if err != nil {
		return e, fmt.Errorf("append to decision log: %w", err)
	}
	if len(line) > MaxLine {
		return e, fmt.Errorf("append to decision log: entry %s is %d bytes without its field paths, over the bound of %d", e.Decision, len(line), MaxLine)
	}
	if _, err := l.w.Write(append(line, '\n')); err != nil {
		l.err = fmt.Errorf("%w: write: %w", ErrStopped, err)
		return e, l.err
	}
	l.prev, l.dirty = out.Hash, true
	if l.f != nil && (l.opts.SyncInterval < 0 || l.opts.Now().Sub(l.lastSync) >= l.opts.SyncInterval) {
		if err := l.syncLocked(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Sync fsyncs what was appended, for a file.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.syncLocked()
}

func (l *Log) syncLocked() error {
	if l.f == nil || !l.dirty {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		l.err = fmt.Errorf("%w: sync: %w", ErrStopped, err)
		return l.err
	}
	l.dirty, l.lastSync = false, l.opts.Now()
	return nil
}

// Close fsyncs and closes a file; a stream is left open.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	syncErr := l.syncLocked()
	closeErr := l.f.Close()
	l.f, l.err = nil, errors.New("decision log closed")
	if syncErr != nil {
		return syncErr
	}
	if closeErr != nil {
		return fmt.Errorf("close decision log: %w", closeErr)
	}
	return nil
}

// tail returns the hash of f's last line, cutting off a partial last line first.
func tail(f *os.File) (prev string, dropped int64, err error) {
	st, err := f.Stat()
	if err != nil {
		return "", 0, err
	}
	size := st.Size()
	if size == 0 {
		return Genesis, 0, nil
	}
	// The last complete line and the partial one after it fit in two bounds.
	window := min(size, 2*int64(MaxLine+1))
	buf := make([]byte, window)
	if _, err := f.ReadAt(buf, size-window); err != nil && !errors.Is(err, io.EOF) {
		return "", 0, fmt.Errorf("read its last line: %w", err)
	}
	if end := bytes.LastIndexByte(buf, '\n'); end != len(buf)-1 {
		keep := size - window + int64(end+1) // end is -1 without a newline: keep window's start
		if end < 0 && size > window {
			return "", 0, fmt.Errorf("its last %d bytes hold no line", window)
		}
		if err := f.Truncate(keep); err != nil {
			return "", 0, fmt.Errorf("cut off a partial last line: %w", err)
		}
		dropped = size - keep
		buf = buf[:end+1]
		if keep == 0 {
			return Genesis, dropped, nil
		}
	}
	buf = buf[:len(buf)-1]
	start := bytes.LastIndexByte(buf, '\n') + 1
	if start == 0 && int64(len(buf)+1) < size-dropped {
		return "", 0, fmt.Errorf("its last line is longer than %d bytes", MaxLine)
	}
	line := buf[start:]
	body, e, err := decode(line)
	if err != nil {
		return "", 0, fmt.Errorf("its last line is broken (%v): check it with ork audit verify, or move the log aside to start a new chain", err)
	}
	if hashOf(e.Prev, body) != e.Hash {
		return "", 0, errors.New("its last line was edited (its hash does not match): check it with ork audit verify, or move the log aside to start a new chain")
	}
	return e.Hash, dropped, nil
}
