// Package reconcilertest tests a reconciler built on the Go SDK against what ork recorded:
// Replay sends every request of an `ork run --record` directory to an http.Handler and
// compares each answer with the recorded one as `ork rollout diff` does.
package reconcilertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// exchangeVersion is the format of the files `ork run --record` writes.
const exchangeVersion = "ork.exchange/v1"

// Exchange is one recorded call, as read from one file of a recording.
type Exchange struct {
	File       string
	Key        string
	Trigger    string
	Request    json.RawMessage
	StatusCode int
	Response   json.RawMessage
}

// Load reads every *.json file of dir, in name order (the order ork recorded them in).
func Load(dir string) ([]Exchange, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("replay %s: no recorded exchange (*.json)", dir)
	}
	slices.Sort(names)
	out := make([]Exchange, 0, len(names))
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		var e struct {
			Version    string          `json:"version"`
			Key        string          `json:"key"`
			Trigger    string          `json:"trigger"`
			Request    json.RawMessage `json:"request"`
			StatusCode int             `json:"statusCode"`
			Response   json.RawMessage `json:"response"`
		}
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, fmt.Errorf("replay %s: %w", name, err)
		}
		if e.Version != exchangeVersion {
			return nil, fmt.Errorf("replay %s: version %q, want %q", name, e.Version, exchangeVersion)
		}
		out = append(out, Exchange{File: filepath.Base(name), Key: e.Key, Trigger: e.Trigger,
			Request: e.Request, StatusCode: e.StatusCode, Response: e.Response})
	}
	return out, nil
}

// Options tune Replay.
type Options struct {
	// Token is sent as "Bearer <Token>" in the Authorization header (AuthHeader: the bare
	// token); default none.
	Token string
	// AuthHeader is the header Token goes in; default "Authorization".
	AuthHeader string
	// Path is where the requests are POSTed; default "/reconcile".
	Path string
	// IncludeDelete sends recorded deletes too; default false, as `ork rollout diff`
	// without --include-delete.
	IncludeDelete bool
}

// Report is the outcome of a replay.
type Report struct {
	// Exchanges were sent; Compared had a recorded and a new 200 answer; Divergent differ.
	Exchanges, Compared, Divergent int
	// SkippedDeletes are the recorded deletes not sent.
	SkippedDeletes int
	Results        []Result
}

// Result is one recorded exchange sent again.
type Result struct {
	File, Key, Trigger string
	// Status is the handler's HTTP status.
	Status int
	// Compared is false when either answer was no 200 (nothing to compare).
	Compared bool
	// Divergences are the differing field paths (see Diff).
	Divergences []string
	// Err is why the answers could not be compared though both were 200 (a body that does
	// not decode).
	Err error
}

// Replay sends each recorded request to h as a dry run (prepared.dryRun: true, as `ork
// rollout diff` does) and compares the answers.
func Replay(h http.Handler, dir string, opts Options) (Report, error) {
	xs, err := Load(dir)
	if err != nil {
		return Report{}, err
	}
	if opts.Path == "" {
		opts.Path = "/reconcile"
	}
	if opts.AuthHeader == "" {
		opts.AuthHeader = "Authorization"
	}
	var rep Report
	for _, x := range xs {
		body, namespace, deleting, err := dryRun(x.Request)
		if err != nil {
			return rep, fmt.Errorf("replay %s: %w", x.File, err)
		}
		if deleting && !opts.IncludeDelete {
			rep.SkippedDeletes++
			continue
		}
		rep.Exchanges++
		req := httptest.NewRequest(http.MethodPost, opts.Path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Ork-Contract-Version", "1")
		if opts.Token != "" {
			v := opts.Token
			if http.CanonicalHeaderKey(opts.AuthHeader) == "Authorization" {
				v = "Bearer " + v
			}
			req.Header.Set(opts.AuthHeader, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		res := Result{File: x.File, Key: x.Key, Trigger: x.Trigger, Status: w.Code, Divergences: []string{}}
		if w.Code == http.StatusOK && x.StatusCode == http.StatusOK && len(x.Response) > 0 {
			paths, err := Diff(x.Response, w.Body.Bytes(), namespace)
			if err != nil {
				res.Err = err
			} else {
				res.Compared, res.Divergences = true, paths
				rep.Compared++
				if len(paths) > 0 {
					rep.Divergent++
				}
			}
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

// dryRun is the request with prepared.dryRun set, its namespace, and whether it is a
// delete (trigger delete, or a deletionTimestamp).
func dryRun(raw json.RawMessage) (body []byte, namespace string, deleting bool, err error) {
	var req map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&req); err != nil {
		return nil, "", false, err
	}
	prepared, _ := req["prepared"].(map[string]any)
	if prepared == nil {
		return nil, "", false, fmt.Errorf("request without prepared")
	}
	prepared["dryRun"] = true
	obj, _ := req["object"].(map[string]any)
	md, _ := obj["metadata"].(map[string]any)
	namespace, _ = md["namespace"].(string)
	deleting = prepared["trigger"] == "delete" || md["deletionTimestamp"] != nil
	body, err = json.Marshal(req)
	return body, namespace, deleting, err
}

// AssertReplay replays dir against h and fails t for every exchange whose answer differs
// from the recorded one (naming the field paths), that h did not answer with 200 where ork
// recorded a 200, or whose answer does not decode.
func AssertReplay(t testing.TB, h http.Handler, dir string, opts Options) Report {
	t.Helper()
	rep, err := Replay(h, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	xs := map[string]int{}
	if loaded, err := Load(dir); err == nil {
		for _, x := range loaded {
			xs[x.File] = x.StatusCode
		}
	}
	for _, r := range rep.Results {
		switch {
		case r.Err != nil:
			t.Errorf("%s (%s, %s): %v", r.File, r.Key, r.Trigger, r.Err)
		case r.Status != http.StatusOK && xs[r.File] == http.StatusOK:
			t.Errorf("%s (%s, %s): HTTP %d, recorded 200", r.File, r.Key, r.Trigger, r.Status)
		case len(r.Divergences) > 0:
			t.Errorf("%s (%s, %s): the answer differs from the recorded one at %v", r.File, r.Key, r.Trigger, r.Divergences)
		}
	}
	return rep
}
