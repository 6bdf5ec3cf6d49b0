package exchange

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/orkspace/ork/internal/dotpath"
)

// Replay answers requests from a recording instead of an endpoint: it is an
// http.RoundTripper for remote.Options.HTTPClient. A request is matched by its Digest
// (computed again from each recorded request, so a hand-edited file still matches what it
// says). Requests with the same digest get the recorded answers in the order they were
// recorded, the last one again once they run out. It is safe for concurrent use.
type Replay struct {
	dir    string
	redact []dotpath.Path

	mu       sync.Mutex
	byDigest map[string][]*Entry
	served   map[string]int
	misses   []Miss
}

// Miss is a request that had no recording.
type Miss struct {
	Key, Trigger, Digest string
}

// NoRecordingError is a Replay's answer to a request it has no recording for.
type NoRecordingError struct {
	Miss
	Dir string
}

func (e *NoRecordingError) Error() string {
	return fmt.Sprintf("no recorded exchange in %s for %s (trigger %s, request %s): record the scenario again",
		e.Dir, e.Key, e.Trigger, short(e.Digest))
}

// LoadReplay reads every *.json file of dir, in name order.
func LoadReplay(dir string) (*Replay, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", dir, err)
	}
	if len(names) == 0 {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		return nil, fmt.Errorf("replay %s: no recorded exchange (*.json) in it", dir)
	}
	slices.Sort(names)
	r := &Replay{dir: dir, byDigest: map[string][]*Entry{}, served: map[string]int{}}
	var redact []string
	for i, name := range names {
		e, err := readEntry(name)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			redact = e.Redact
			if r.redact, err = ParseRedact(redact); err != nil {
				return nil, fmt.Errorf("replay %s: %w", name, err)
			}
		} else if !slices.Equal(redact, e.Redact) {
			return nil, fmt.Errorf("replay %s: recorded with redact paths %q, %s with %q: replay one recording at a time",
				dir, e.Redact, filepath.Base(names[0]), redact)
		}
		d, err := Digest(e.Request, r.redact)
		if err != nil {
			return nil, fmt.Errorf("replay %s: %w", name, err)
		}
		r.byDigest[d] = append(r.byDigest[d], e)
	}
	return r, nil
}

func readEntry(name string) (*Entry, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	e := &Entry{}
	if err := json.Unmarshal(data, e); err != nil {
		return nil, fmt.Errorf("replay %s: %w", name, err)
	}
	if e.Version != Version {
		return nil, fmt.Errorf("replay %s: version %q, want %q", name, e.Version, Version)
	}
	if len(e.Request) == 0 {
		return nil, fmt.Errorf("replay %s: no request", name)
	}
	return e, nil
}

// Len is the number of recorded exchanges.
func (r *Replay) Len() int {
	n := 0
	for _, es := range r.byDigest {
		n += len(es)
	}
	return n
}

// Misses lists, in order, the requests that had no recording.
func (r *Replay) Misses() []Miss {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.misses)
}

// RoundTrip answers req with its recorded response. A recorded timeout comes back as
// context.DeadlineExceeded, any other recorded failure without a response as an error
// with its recorded message.
func (r *Replay) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("replay: read request: %w", err)
		}
	}
	d, err := Digest(body, r.redact)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	r.mu.Lock()
	entries := r.byDigest[d]
	if len(entries) == 0 {
		miss := Miss{Digest: d}
		miss.Key, miss.Trigger = describe(body)
		r.misses = append(r.misses, miss)
		r.mu.Unlock()
		return nil, &NoRecordingError{Miss: miss, Dir: r.dir}
	}
	e := entries[min(r.served[d], len(entries)-1)]
	r.served[d]++
	r.mu.Unlock()

	if e.StatusCode == 0 {
		if e.Outcome.Reason == "RemoteTimeout" {
			return nil, fmt.Errorf("recorded: %s: %w", e.Outcome.Message, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("recorded: %s", e.Outcome.Message)
	}
	var out []byte
	switch {
	case e.ResponseText != nil:
		out = []byte(*e.ResponseText)
	case len(e.Response) > 0:
		var b bytes.Buffer
		if err := json.Compact(&b, e.Response); err != nil {
			return nil, fmt.Errorf("replay: recorded response of %s: %w", e.Key, err)
		}
		out = b.Bytes()
	}
	return &http.Response{
		Status:        strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode),
		StatusCode:    e.StatusCode,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        e.ResponseHeader.Clone(),
		Body:          io.NopCloser(bytes.NewReader(out)),
		ContentLength: int64(len(out)),
		Request:       req,
	}, nil
}

// describe reads the key and trigger of a request body for messages.
func describe(body []byte) (key, trigger string) {
	var head struct {
		Key      string `json:"key"`
		Prepared struct {
			Trigger string `json:"trigger"`
		} `json:"prepared"`
	}
	_ = json.Unmarshal(body, &head)
	return head.Key, head.Prepared.Trigger
}

// short cuts a digest to "sha256:" and 12 hex digits, enough to tell requests apart.
func short(d string) string {
	if i := strings.IndexByte(d, ':'); i >= 0 && len(d) > i+13 {
		return d[:i+13]
	}
	return d
}
