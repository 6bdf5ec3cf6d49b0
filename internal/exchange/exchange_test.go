package exchange

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// request is a PreparedRequest with a Secret child, a CR field to redact, and the fields
// that change between runs.
func request(attempt int, uid string) []byte {
	return []byte(`{"key":"default/my-webapp","gvk":{"Group":"myorg.io","Version":"v1","Kind":"WebApp"},
"object":{"apiVersion":"myorg.io/v1","kind":"WebApp","metadata":{"name":"my-webapp","namespace":"default","uid":"` + uid + `","resourceVersion":"` + uid + `7"},
  "spec":{"password":"hunter2","replicas":2},
  "status":{"conditions":[{"type":"Ready","status":"True","lastTransitionTime":"` + uid + `"}]}},
"args":{"password":"hunter2"},
"prepared":{"trigger":"resync","attempt":` + strings.Repeat("1", attempt) + `,"generation":1,"deleting":false,"children":{
  "secret":{"db":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","ownerReferences":[{"name":"my-webapp","uid":"` + uid + `"}]},"data":{"pw":"aHVudGVyMg=="},"stringData":{"pw":"hunter2"}}}}}}`)
}

// response returns a Secret in both forms and a status with a field to redact.
const response = `{"result":"ok","status":{"password":"hunter2","phase":"Ready"},"resources":[
 {"type":"secret","fields":{"name":"db","data":{"pw":"aHVudGVyMg=="},"stringData":{"pw":"hunter2"}}},
 {"apiVersion":"v1","kind":"Secret","metadata":{"name":"db2"},"stringData":{"pw":"hunter2"},"data":{"pw":"aHVudGVyMg=="}},
 {"type":"deployment","fields":{"name":"web","image":"nginx","replicas":2.50}}]}`

func exchangeOf(req []byte, status int, resp string) Exchange {
	return Exchange{
		Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Duration: 12 * time.Millisecond,
		Key: "default/my-webapp", Trigger: "resync", Attempt: 1, URL: "http://127.0.0.1:8088/reconcile",
		RequestHeader: http.Header{"Content-Type": {"application/json"}},
		Request:       req, StatusCode: status, Response: []byte(resp),
		ResponseHeader: http.Header{"Content-Type": {"application/json"}},
		Outcome:        Outcome{Action: "Done", Success: true, Reason: "ReconcileSucceeded", Message: "remote reconciler returned ok"},
	}
}

func TestRecorderMasksSecretsAndRedactPaths(t *testing.T) {
	dir := t.TempDir()
	rec, err := NewRecorder(dir, RecorderOptions{Redact: []string{"spec.password", "password"}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Record(exchangeOf(request(1, "u1"), 200, response))
	if err := rec.Err(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 || filepath.Base(files[0]) != "000001-default_my-webapp-resync.json" {
		t.Fatalf("files %v, want one named 000001-default_my-webapp-resync.json", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("hunter2")) || bytes.Contains(data, []byte("aHVudGVyMg==")) {
		t.Errorf("a secret value is in the recording:\n%s", data)
	}
	for _, want := range []string{
		`"password": "[REDACTED]"`, // args, spec and status by the redact paths
		`"pw": "W1JFREFDVEVEXQ=="`, // Secret data: still base64
		`"pw": "[REDACTED]"`,       // Secret stringData
		`"replicas": 2.50`,         // numbers kept as written
		`"version": "ork.exchange/v1"`,
		`"redact": [`,
	} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("recording lacks %s:\n%s", want, data)
		}
	}
}

func TestDigestIgnoresVolatileFieldsOnly(t *testing.T) {
	base, err := Digest(request(1, "u1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		req  []byte
		same bool
	}{
		{"another attempt, uid, resourceVersion, owner uid and transition time", request(3, "u2"), true},
		{"another trigger", bytes.Replace(request(1, "u1"), []byte(`"resync"`), []byte(`"create"`), 1), false},
		{"another spec", bytes.Replace(request(1, "u1"), []byte(`"replicas":2`), []byte(`"replicas":3`), 1), false},
		{"another secret value: masked, so the same question", bytes.Replace(request(1, "u1"), []byte(`"pw":"hunter2"`), []byte(`"pw":"other"`), 1), true},
	}
	// A poll of a held operation, recorded at one time and replayed at another: its start,
	// deadline and uid-derived key differ, its id and polls do not.
	poll := func(started, id string, polls int) []byte {
		op := fmt.Sprintf(`"operation":{"id":%q,"key":"u1/1/%s","startedAt":%q,"deadline":%q,"polls":%d},"trigger"`, id, id, started, started, polls)
		return bytes.Replace(request(1, "u1"), []byte(`"trigger"`), []byte(op), 1)
	}
	opBase, err := Digest(poll("2026-01-01T00:00:00Z", "op-1", 2), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		req  []byte
		same bool
	}{
		{"an operation polled at another time", poll("2026-06-01T10:00:00Z", "op-1", 2), true},
		{"another operation", poll("2026-01-01T00:00:00Z", "op-2", 2), false},
		{"another poll", poll("2026-01-01T00:00:00Z", "op-1", 3), false},
	} {
		if got, err := Digest(tt.req, nil); err != nil || (got == opBase) != tt.same {
			t.Errorf("%s: digest same=%v (err %v), want same=%v", tt.name, got == opBase, err, tt.same)
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Digest(tt.req, nil)
			if err != nil {
				t.Fatal(err)
			}
			if (got == base) != tt.same {
				t.Errorf("digest %s vs %s: want same=%v", got, base, tt.same)
			}
		})
	}
}

func TestReplayAnswersFromTheRecording(t *testing.T) {
	dir := t.TempDir()
	rec, err := NewRecorder(dir, RecorderOptions{Redact: []string{"spec.password"}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Record(exchangeOf(request(1, "u1"), 200, response))
	second := exchangeOf(request(1, "u1"), 200, `{"result":"requeue"}`)
	rec.Record(second)
	timeout := exchangeOf(bytes.Replace(request(1, "u1"), []byte(`"resync"`), []byte(`"update"`), 1), 0, "")
	timeout.Outcome = Outcome{Action: "Backoff", Reason: "RemoteTimeout", Message: "POST x: no response within 30s"}
	rec.Record(timeout)
	broken := exchangeOf(bytes.Replace(request(1, "u1"), []byte(`"resync"`), []byte(`"create"`), 1), 200, "<html>oops</html>")
	rec.Record(broken)
	if err := rec.Err(); err != nil {
		t.Fatal(err)
	}

	rp, err := LoadReplay(dir)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: rp}
	post := func(body []byte) (*http.Response, string, error) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://replay.invalid/reconcile", bytes.NewReader(body))
		resp, err := client.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b), nil
	}

	// The same question again (another attempt, another uid) gets the recorded answers in
	// order, then the last one again.
	for i, want := range []string{`"result":"ok"`, `"result":"requeue"`, `"result":"requeue"`} {
		resp, body, err := post(request(2, "u9"))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || !strings.Contains(body, want) {
			t.Errorf("replay %d: %d %s, want %s", i, resp.StatusCode, body, want)
		}
	}
	if _, body, _ := post(bytes.Replace(request(1, "u1"), []byte(`"resync"`), []byte(`"create"`), 1)); body != "<html>oops</html>" {
		t.Errorf("a non-JSON answer replays as %q", body)
	}
	if _, _, err := post(bytes.Replace(request(1, "u1"), []byte(`"resync"`), []byte(`"update"`), 1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a recorded timeout replays as %v, want context.DeadlineExceeded", err)
	}

	_, _, err = post(bytes.Replace(request(1, "u1"), []byte(`"replicas":2`), []byte(`"replicas":5`), 1))
	var miss *NoRecordingError
	if !errors.As(err, &miss) || miss.Key != "default/my-webapp" || miss.Trigger != "resync" {
		t.Fatalf("unrecorded request: %v, want a NoRecordingError naming default/my-webapp resync", err)
	}
	if !strings.Contains(err.Error(), "no recorded exchange in "+dir+" for default/my-webapp (trigger resync, request sha256:") {
		t.Errorf("message %q", err)
	}
	if m := rp.Misses(); len(m) != 1 || m[0].Digest != miss.Digest {
		t.Errorf("misses %+v", m)
	}
}

func TestReplayRejectsBadDirectories(t *testing.T) {
	empty := t.TempDir()
	mixed := t.TempDir()
	for _, redact := range [][]string{nil, {"spec.x"}} {
		rec, err := NewRecorder(mixed, RecorderOptions{Redact: redact})
		if err != nil {
			t.Fatal(err)
		}
		rec.Record(exchangeOf(request(1, "u1"), 200, `{}`))
	}
	foreign := t.TempDir()
	if err := os.WriteFile(filepath.Join(foreign, "a.json"), []byte(`{"version":"v0"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, dir, want string }{
		{"missing", filepath.Join(empty, "nope"), "no such file"},
		{"empty", empty, "no recorded exchange (*.json)"},
		{"mixed redact lists", mixed, "replay one recording at a time"},
		{"another format", foreign, `version "v0", want "ork.exchange/v1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadReplay(tt.dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestRecorderAppendsAfterExistingFiles(t *testing.T) {
	dir := t.TempDir()
	for range 2 {
		rec, err := NewRecorder(dir, RecorderOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rec.Record(exchangeOf(request(1, "u1"), 200, `{}`))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 2 || !strings.HasPrefix(filepath.Base(files[1]), "000002-") {
		t.Errorf("files %v, want 000001-… and 000002-…", files)
	}
	var e Entry
	data, _ := os.ReadFile(files[0])
	if err := json.Unmarshal(data, &e); err != nil || e.Duration != "12ms" || e.Outcome.Reason != "ReconcileSucceeded" {
		t.Errorf("entry %+v, err %v", e, err)
	}
}

// A related Secret (prepared.related, payload.related with allowSecrets) is masked like a
// child: its data never reaches a recording.
func TestRecorderMasksRelatedSecrets(t *testing.T) {
	req := []byte(`{"key":"default/web","gvk":{"Group":"myorg.io","Version":"v1","Kind":"WebApp"},
"object":{"apiVersion":"myorg.io/v1","kind":"WebApp","metadata":{"name":"web","namespace":"default"}},"args":{},
"prepared":{"trigger":"resync","attempt":1,"generation":1,"deleting":false,"related":{
  "creds":[{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db"},"data":{"pw":"aHVudGVyMg=="}}],
  "config":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"level":"debug"}}]}}}`)
	data := recordOne(t, req)
	if bytes.Contains(data, []byte("aHVudGVyMg==")) || !bytes.Contains(data, []byte(`"pw": "W1JFREFDVEVEXQ=="`)) {
		t.Errorf("the related Secret's data is not masked:\n%s", data)
	}
	if !bytes.Contains(data, []byte(`"level": "debug"`)) {
		t.Errorf("a related ConfigMap lost its data:\n%s", data)
	}
}

// kubectl apply's last-applied annotation holds a Secret's data in clear: masked in a
// related Secret and a child Secret alike; a ConfigMap's is kept.
func TestRecorderMasksASecretsLastAppliedAnnotation(t *testing.T) {
	la := `"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{\"stringData\":{\"pw\":\"hunter2\"}}"}`
	req := []byte(`{"key":"default/web","gvk":{"Group":"myorg.io","Version":"v1","Kind":"WebApp"},
"object":{"apiVersion":"myorg.io/v1","kind":"WebApp","metadata":{"name":"web","namespace":"default"}},"args":{},
"prepared":{"trigger":"resync","attempt":1,"generation":1,"deleting":false,
  "related":{"creds":[{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db",` + la + `}}],
    "config":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","annotations":{"kubectl.kubernetes.io/last-applied-configuration":"cm-applied"}}}]},
  "children":{"v1/Secret":{"child":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"child",` + la + `}}}}}}`)
	data := recordOne(t, req)
	if bytes.Contains(data, []byte("hunter2")) {
		t.Errorf("a Secret's last-applied annotation is not masked:\n%s", data)
	}
	if !bytes.Contains(data, []byte("cm-applied")) {
		t.Errorf("a ConfigMap's last-applied annotation was masked:\n%s", data)
	}
}

// recordOne records one exchange of req with an ok answer and returns the file written.
func recordOne(t *testing.T, req []byte) []byte {
	t.Helper()
	dir := t.TempDir()
	rec, err := NewRecorder(dir, RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec.Record(exchangeOf(req, 200, `{"result":"ok"}`))
	if err := rec.Err(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("files %v, want one", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A completion callback's token authorises a call to ork: no recording keeps one, with or
// without redact paths.
func TestRecordingsNeverKeepACallbackToken(t *testing.T) {
	doc := map[string]any{"prepared": map[string]any{
		"callback":  map[string]any{"url": "https://ork/operations/t1", "token": "t1"},
		"operation": map[string]any{"id": "op", "callback": map[string]any{"url": "https://ork/operations/t2", "token": "t2"}},
	}}
	maskRequest(doc, nil)
	b, _ := json.Marshal(doc)
	for _, tok := range []string{`"token":"t1"`, `"token":"t2"`, "operations/t1", "operations/t2"} {
		if bytes.Contains(b, []byte(tok)) {
			t.Errorf("masked request keeps %s: %s", tok, b)
		}
	}
	if !bytes.Contains(b, []byte("https://ork/operations/")) {
		t.Errorf("the callback URL lost where ork listens: %s", b)
	}
}
