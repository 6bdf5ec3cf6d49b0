package remote

import (
	"errors"
	"testing"
	"time"
)

// FuzzDecodeResult: any body is a RemoteReconcileResult or a CallError that says what is
// wrong with it; never a panic.
//
//	go test ./internal/run/remote -run '^$' -fuzz FuzzDecodeResult -fuzztime 5m
func FuzzDecodeResult(f *testing.F) {
	for _, s := range []string{
		`{"result":"ok","status":{"phase":"Ready"},"resources":[{"type":"deployment","fields":{"name":"a","image":"b"}}]}`,
		`{"result":"requeue","requeueAfter":"30s"}`, `{"result":"error","error":"x"}`, `{}`, `[]`, `{"result":1}`,
		`{"result":"ok","result":"ok"}`, `{"Result":"ok"}`, `{"result":"ok"} x`, ``, `null`, `{"resources":{}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		res, err := decodeResult(body)
		if err == nil {
			if res == nil || res.RequeueAfter < 0 {
				t.Errorf("decodeResult(%q) = %+v without error", body, res)
			}
			return
		}
		var ce *CallError
		if !errors.As(err, &ce) || ce.Message == "" {
			t.Errorf("decodeResult(%q): %v, want a CallError with a message", body, err)
		}
	})
}

// FuzzParseRetryAfter: any header value is a delay of zero or more.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"2", "0", "-1", "99999999999999999999", "Wed, 21 Oct 2026 07:28:00 GMT", "soon", " 7 "} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		if d := parseRetryAfter(v, now); d < 0 {
			t.Errorf("parseRetryAfter(%q) = %v, want >= 0", v, d)
		}
	})
}
