package exchange

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	sigsjson "sigs.k8s.io/json"

	"github.com/orkspace/ork/internal/dotpath"
)

// RecorderOptions tune a Recorder.
type RecorderOptions struct {
	// Redact are dot-paths ("spec.password") masked wherever they lead from one of these
	// roots: the request body, its args, its object, each child; the response body, its
	// status, each full-object resource, each intent entry's fields. Default none. Secret
	// data and stringData are masked regardless.
	Redact []string
	// OnError is called with every failed write (a recording must not stop reconciling);
	// default nil: Err still reports the first.
	OnError func(error)
}

// Recorder writes each Exchange it is given as one JSON file in a directory, named
// <sequence>-<namespace>_<name>-<trigger>.json. It is safe for concurrent use.
type Recorder struct {
	dir       string
	redact    []dotpath.Path
	redactRaw []string
	onError   func(error)

	mu  sync.Mutex
	seq int
	err error
}

// NewRecorder creates dir when missing. Sequence numbers continue after the files already
// in it, so that a second run into the same directory appends.
func NewRecorder(dir string, opts RecorderOptions) (*Recorder, error) {
	redact, err := ParseRedact(opts.Redact)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("recording directory: %w", err)
	}
	existing, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("recording directory: %w", err)
	}
	return &Recorder{dir: dir, redact: redact, redactRaw: opts.Redact, onError: opts.OnError, seq: len(existing)}, nil
}

// Record masks x and writes it. Its signature is remote.Options.Record's.
func (r *Recorder) Record(x Exchange) {
	if err := r.write(x); err != nil {
		r.mu.Lock()
		if r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
		if r.onError != nil {
			r.onError(err)
		}
	}
}

// Err is the first write error, nil when every exchange was written.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *Recorder) write(x Exchange) error {
	e, err := newEntry(x, r.redact)
	if err != nil {
		return fmt.Errorf("record %s: %w", x.Key, err)
	}
	e.Redact = r.redactRaw
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("record %s: %w", x.Key, err)
	}
	data = append(data, '\n')
	r.mu.Lock()
	defer r.mu.Unlock()
	// O_EXCL: another ork writing into the same directory makes us skip its numbers, never
	// overwrite its files.
	for range 1000 {
		r.seq++
		name := filepath.Join(r.dir, fmt.Sprintf("%06d-%s-%s.json", r.seq, fileSafe(x.Key), fileSafe(x.Trigger)))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("record %s: %w", x.Key, err)
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("record %s: %w", x.Key, err)
		}
		return nil
	}
	return fmt.Errorf("record %s: no free file name in %s", x.Key, r.dir)
}

// newEntry is the masked, file form of x: the auth header is not in x already; Secret data
// and the redact paths are masked in the request and the response.
func newEntry(x Exchange, redact []dotpath.Path) (Entry, error) {
	e := Entry{
		Version: Version, Time: x.Time.UTC(), Key: x.Key, Trigger: x.Trigger, Attempt: x.Attempt,
		Duration: x.Duration.String(), URL: x.URL, RequestHeader: x.RequestHeader,
		StatusCode: x.StatusCode, ResponseHeader: x.ResponseHeader,
		Outcome: recordOutcome{Outcome: x.Outcome},
	}
	if x.Outcome.After > 0 {
		e.Outcome.After = x.Outcome.After.String()
	}
	req, err := decode(x.Request)
	if err != nil {
		return Entry{}, fmt.Errorf("request body: %w", err)
	}
	maskRequest(req, redact)
	if e.Request, err = json.Marshal(req); err != nil {
		return Entry{}, fmt.Errorf("request body: %w", err)
	}
	if e.Digest, err = Digest(x.Request, redact); err != nil {
		return Entry{}, err
	}
	if len(x.Response) == 0 {
		return e, nil
	}
	if resp, ok := strictJSON(x.Response); ok {
		maskResponse(resp, redact)
		if e.Response, err = json.Marshal(resp); err != nil {
			return Entry{}, fmt.Errorf("response body: %w", err)
		}
		return e, nil
	}
	// Not JSON that ork's decoder could read: kept as text, so that replay fails the same
	// way. Nothing in it can be masked but the token, which the remote client scrubbed.
	text := strings.ToValidUTF8(string(x.Response), "\uFFFD")
	e.ResponseText = &text
	return e, nil
}

// strictJSON decodes b when it is one JSON document without duplicate keys: re-encoding
// would silently drop a duplicate that ork's decoder rejects.
func strictJSON(b []byte) (any, bool) {
	var probe any
	strict, err := sigsjson.UnmarshalStrict(b, &probe, sigsjson.DisallowDuplicateFields)
	if err != nil || len(strict) > 0 {
		return nil, false
	}
	v, err := decode(b)
	return v, err == nil
}

// fileSafe keeps letters, digits, dots and dashes of s; anything else becomes "_".
func fileSafe(s string) string {
	if s == "" {
		return "_"
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-':
			return r
		}
		return '_'
	}, s)
}
