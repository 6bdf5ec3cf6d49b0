package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func decision(i int) Decision {
	return Decision{Time: t0.Add(time.Duration(i) * time.Second), Trigger: "resync", Attempt: 1, Reason: fmt.Sprint("R", i)}
}

func reasons(ds []Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Reason)
	}
	return out
}

func TestStoreKeepsTheLastDecisionsPerObject(t *testing.T) {
	tests := []struct {
		name     string
		recorded int
		want     []string
	}{
		{"fewer than the depth", 2, []string{"R0", "R1"}},
		{"exactly the depth", 3, []string{"R0", "R1", "R2"}},
		{"past the depth: oldest dropped", 5, []string{"R2", "R3", "R4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(Options{Depth: 3})
			k := Key{CRD: "webapp", Namespace: "default", Name: "a"}
			for i := range tt.recorded {
				s.Record(k, decision(i))
			}
			if d := cmp.Diff(tt.want, reasons(s.Decisions(k))); d != "" {
				t.Errorf("decisions (-want +got):\n%s", d)
			}
			if got := s.Objects(); len(got) != 1 || got[0].Reason != tt.want[len(tt.want)-1] || got[0].Decisions != len(tt.want) {
				t.Errorf("listing %+v", got)
			}
		})
	}
}

func TestStoreDefaultsAndBounds(t *testing.T) {
	s := NewStore(Options{MaxObjects: 2, Now: func() time.Time { return t0 }})
	a, b, c := Key{"w", "ns", "a"}, Key{"w", "ns", "b"}, Key{"w", "ns", "c"}
	for i := range DefaultDepth + 1 {
		s.Record(a, Decision{Reason: fmt.Sprint(i), Message: strings.Repeat("x", 2000)})
	}
	ds := s.Decisions(a)
	if len(ds) != DefaultDepth || ds[0].Reason != "1" || !ds[0].Time.Equal(t0) || len([]rune(ds[0].Message)) != maxText+1 {
		t.Errorf("%d decisions, first %q at %v, message of %d runes", len(ds), ds[0].Reason, ds[0].Time, len([]rune(ds[0].Message)))
	}
	s.Record(b, decision(1))
	s.Record(a, decision(2)) // a is now the most recent
	s.Record(c, decision(3)) // evicts b, the least recently decided
	if s.Decisions(b) != nil || s.Decisions(a) == nil || s.Decisions(c) == nil {
		t.Errorf("objects kept: %+v", s.Objects())
	}
	s.Forget(a)
	if got := s.Objects(); len(got) != 1 || got[0].Key != c {
		t.Errorf("after Forget: %+v", got)
	}
}

func TestStoreIsSafeForConcurrentUse(t *testing.T) {
	s := NewStore(Options{Depth: 5})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			k := Key{CRD: "webapp", Namespace: "ns", Name: fmt.Sprint(w % 2)}
			for i := range 100 {
				s.Record(k, decision(i))
				_ = s.Decisions(k)
				_ = s.Objects()
			}
		})
	}
	wg.Wait()
	for _, o := range s.Objects() {
		if o.Decisions != 5 {
			t.Errorf("%v holds %d decisions, want 5", o.Key, o.Decisions)
		}
	}
}

func TestHandlerServesJSON(t *testing.T) {
	s := NewStore(Options{})
	d := decision(0)
	d.Request, d.Result, d.Success, d.Next = "sha256:abc", "ok", true, "done"
	d.Applies = []Apply{{Ref: "deployments/web", Namespace: "default", Outcome: Created}}
	d.Durations = Durations{Remote: Duration(12 * time.Millisecond), Total: Duration(20 * time.Millisecond)}
	s.Record(Key{"webapp", "default", "web"}, d)
	s.Record(Key{"cluster", "", "c1"}, decision(1))
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)

	tests := []struct {
		path string
		code int
		want string
	}{
		{"/debug/decisions/", 200, `"objects": [`},
		{"/debug/decisions/webapp/default/web", 200, `"remote": "12ms"`},
		{"/debug/decisions/cluster/c1", 200, `"name": "c1"`},
		{"/debug/decisions/webapp/default/nope", 404, `"error": "no decisions for webapp default/nope"`},
	}
	for _, tt := range tests {
		resp, err := http.Get(srv.URL + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		if resp.StatusCode != tt.code || !strings.Contains(body, tt.want) || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s: %d %s\n%s", tt.path, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
	}

	var got ObjectTrace
	if err := json.Unmarshal([]byte(readAll(t, mustGet(t, srv.URL+"/debug/decisions/webapp/default/web"))), &got); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(ObjectTrace{Key: Key{"webapp", "default", "web"}, Decisions: []Decision{d}}, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

func TestClientFind(t *testing.T) {
	s := NewStore(Options{})
	s.Record(Key{"webapp", "default", "web"}, decision(0))
	s.Record(Key{"webapp", "default", "both"}, decision(1))
	s.Record(Key{"database", "default", "both"}, decision(2))
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	c := Client{Base: strings.TrimPrefix(srv.URL, "http://")} // host:port, as --addr takes it

	tests := []struct {
		name string
		key  Key
		want string // the found CRD, or the error
	}{
		{"CRD left out, one match", Key{Namespace: "default", Name: "web"}, "webapp"},
		{"CRD given", Key{CRD: "database", Namespace: "default", Name: "both"}, "database"},
		{"CRD left out, two matches", Key{Namespace: "default", Name: "both"},
			"default/both is an object of 2 CRDs (database, webapp): name the CRD"},
		{"no such object", Key{Namespace: "default", Name: "nope"}, "default/nope: no decisions"},
		{"no such object of the CRD", Key{CRD: "webapp", Namespace: "default", Name: "nope"}, "webapp default/nope: no decisions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Find(t.Context(), tt.key)
			switch {
			case err != nil && err.Error() != tt.want:
				t.Errorf("error %q, want %q", err, tt.want)
			case err == nil && got.CRD != tt.want:
				t.Errorf("found %v, want CRD %s", got.Key, tt.want)
			}
		})
	}
	_, err := c.Find(t.Context(), Key{Namespace: "default", Name: "both"})
	if _, ok := errors.AsType[*AmbiguousError](err); !ok {
		t.Errorf("%v is not an *AmbiguousError", err)
	}
	_, err = c.Find(t.Context(), Key{Namespace: "default", Name: "nope"})
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("%v is not ErrNotFound", err)
	}
}

func TestClientOnAServerWithoutDecisions(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler()) // a metrics port without --debug-decisions
	t.Cleanup(srv.Close)
	_, err := Client{Base: srv.URL}.Find(t.Context(), Key{Namespace: "default", Name: "web"})
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "it needs --debug-decisions") {
		t.Errorf("error %v", err)
	}
}

func mustGet(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
