package decisionlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orkspace/ork/internal/decision"
)

var t0 = time.Date(2026, 12, 6, 22, 0, 0, 0, time.UTC)

// entry is the i-th pass of a custom resource, with one child whose image changed.
func entry(t testing.TB, i int) decision.Entry {
	t.Helper()
	id, err := decision.NewID(t0.Add(time.Duration(i)*time.Millisecond), bytes.NewReader(bytes.Repeat([]byte{byte(i)}, 16)))
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]any{"spec": map[string]any{"image": fmt.Sprintf("app:%d", i)}}
	after := map[string]any{"spec": map[string]any{"image": fmt.Sprintf("app:%d", i+1)}}
	return decision.Entry{Decision: id, Time: t0, Trigger: "update", Outcome: "ok",
		Object: decision.Object{Ref: decision.Ref{APIVersion: "example.com/v1", Kind: "App", Namespace: "ns", Name: "a"}, Generation: int64(i), ResourceVersion: fmt.Sprint(100 + i)},
		Children: []decision.Child{{Ref: decision.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ns", Name: "a"},
			ResourceVersionBefore: "1", ResourceVersionAfter: "2", Fields: decision.ChangedFields(before, after), Outcome: decision.ChildApplied}}}
}

// chain is a valid log of n entries.
func chain(t testing.TB, n int) []string {
	t.Helper()
	var buf bytes.Buffer
	l := NewWriter(&buf, Options{})
	for i := range n {
		if _, err := l.Append(entry(t, i)); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	return lines[:len(lines)-1] // the empty string after the last newline
}

func TestVerify(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(lines []string) []string
		lines    int
		firstBad int
	}{
		{"an intact chain", func(l []string) []string { return l }, 5, 0},
		{"an empty log", func([]string) []string { return nil }, 0, 0},
		{"an edited byte", func(l []string) []string {
			l[2] = strings.Replace(l[2], `"generation":2`, `"generation":3`, 1)
			return l
		}, 5, 3},
		{"an edited hash", func(l []string) []string {
			i := strings.LastIndex(l[1], `"}`) - 1 // the hash's last hex digit
			flip := map[byte]string{'0': "1"}[l[1][i]]
			if flip == "" {
				flip = "0"
			}
			l[1] = l[1][:i] + flip + l[1][i+1:]
			return l
		}, 5, 2},
		{"a deleted line", func(l []string) []string { return append(l[:2], l[3:]...) }, 4, 3},
		{"the first line deleted", func(l []string) []string { return l[1:] }, 4, 1},
		{"two lines swapped", func(l []string) []string {
			l[1], l[2] = l[2], l[1]
			return l
		}, 5, 2},
		{"a line repeated", func(l []string) []string { return append(l[:3], l[2:]...) }, 6, 4},
		{"an empty line", func(l []string) []string { return append(l[:1], append([]string{"\n"}, l[1:]...)...) }, 6, 2},
		{"a line that is not JSON", func(l []string) []string {
			l[4] = "hello\n"
			return l
		}, 5, 5},
		// The chain alone cannot tell a log cut short from a shorter one: the custom
		// resource's status.lastDecision names a decision the log must hold.
		{"the last line removed is not detected", func(l []string) []string { return l[:4] }, 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := strings.Join(tt.edit(chain(t, 5)), "")
			lines, firstBad, err := Verify(strings.NewReader(log))
			if lines != tt.lines || firstBad != tt.firstBad {
				t.Errorf("Verify = %d lines, first bad %d (%v); want %d, %d", lines, firstBad, err, tt.lines, tt.firstBad)
			}
			var broken *BrokenError
			if (err != nil) != (tt.firstBad != 0) || (err != nil && (!errors.As(err, &broken) || broken.Line != tt.firstBad)) {
				t.Errorf("err = %v, want a BrokenError at line %d", err, tt.firstBad)
			}
		})
	}
}

func TestVerifyFailsToRead(t *testing.T) {
	_, firstBad, err := Verify(iotestErrReader{})
	var broken *BrokenError
	if err == nil || firstBad != 0 || errors.As(err, &broken) {
		t.Errorf("Verify of an unreadable log = %d, %v; want an error that is no BrokenError", firstBad, err)
	}
}

type iotestErrReader struct{}

func (iotestErrReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestConcurrentAppendsChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.log")
	l, err := Open(path, nil, Options{SyncInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 25 {
				if _, err := l.Append(entry(t, w*25+i)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if lines, _, err := verifyFile(t, path); lines != 200 || err != nil {
		t.Errorf("Verify = %d lines, %v; want 200 and a valid chain", lines, err)
	}
}

func TestOpenContinuesTheChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.log")
	var last decision.Entry
	for run := range 3 {
		l, err := Open(path, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			e, err := l.Append(entry(t, run*2+i))
			if err != nil {
				t.Fatal(err)
			}
			if want := last.Hash; e.Prev != want {
				t.Errorf("run %d entry %d: prev %q, want the last hash %q", run, i, e.Prev, want)
			}
			last = e
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if lines, _, err := verifyFile(t, path); lines != 6 || err != nil {
		t.Errorf("Verify = %d lines, %v; want 6 and a valid chain", lines, err)
	}
}

// A crash in the middle of a write leaves a line without its newline: it was never
// written, and Open cuts it off.
func TestOpenCutsAPartialLastLine(t *testing.T) {
	for _, tt := range []struct {
		name   string
		before int
	}{{"after complete lines", 3}, {"as the only line", 0}} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "decisions.log")
			lines := chain(t, tt.before+1)
			partial := lines[tt.before][:40]
			if err := os.WriteFile(path, []byte(strings.Join(lines[:tt.before], "")+partial), 0o600); err != nil {
				t.Fatal(err)
			}
			l, err := Open(path, nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if l.Dropped() != int64(len(partial)) {
				t.Errorf("Dropped() = %d, want %d", l.Dropped(), len(partial))
			}
			if _, err := l.Append(entry(t, 9)); err != nil {
				t.Fatal(err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if n, _, err := verifyFile(t, path); n != tt.before+1 || err != nil {
				t.Errorf("Verify = %d lines, %v; want %d and a valid chain", n, err, tt.before+1)
			}
		})
	}
}

func TestOpenRefusesABrokenLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.log")
	lines := chain(t, 2)
	lines[1] = strings.Replace(lines[1], `"trigger":"update"`, `"trigger":"resync"`, 1)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, nil, Options{}); err == nil || !strings.Contains(err.Error(), "edited") {
		t.Errorf("Open = %v, want a refusal naming the edit", err)
	}
}

func TestStdoutStartsANewChain(t *testing.T) {
	var out bytes.Buffer
	l, err := Open("-", &out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := l.Append(entry(t, 1))
	if err != nil || e.Prev != Genesis {
		t.Fatalf("Append = prev %q, %v", e.Prev, err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n, _, err := Verify(&out); n != 1 || err != nil {
		t.Errorf("Verify = %d, %v", n, err)
	}
}

func TestAppendBoundsTheLine(t *testing.T) {
	big := func(n int) decision.Entry {
		e := entry(t, 1)
		before, after := map[string]any{}, map[string]any{}
		for i := range n {
			after[fmt.Sprintf("key-%06d", i)] = "v"
		}
		e.Children[0].Fields = decision.ChangedFields(before, after)
		return e
	}
	var buf bytes.Buffer
	l := NewWriter(&buf, Options{})
	e, err := l.Append(big(MaxLine / 10))
	if err != nil || !e.FieldsDropped || e.Children[0].Fields.Len() != 0 {
		t.Fatalf("Append of an oversized entry = dropped %v, %d fields, %v; want its fields dropped", e.FieldsDropped, e.Children[0].Fields.Len(), err)
	}
	huge := entry(t, 2)
	for i := range MaxLine / 50 {
		huge.Children = append(huge.Children, decision.Child{Ref: decision.Ref{Kind: "ConfigMap", Name: fmt.Sprintf("cm-%d", i)}, Outcome: decision.ChildApplied})
	}
	if _, err := l.Append(huge); err == nil {
		t.Errorf("Append of an entry over the bound without its fields: no error")
	}
	if n, _, err := Verify(&buf); n != 1 || err != nil {
		t.Errorf("Verify = %d, %v; want the one bounded line", n, err)
	}
}

func TestAppendRefusesAnInvalidEntry(t *testing.T) {
	e := entry(t, 1)
	e.Reason = "the password is hunter2"
	var buf bytes.Buffer
	if _, err := NewWriter(&buf, Options{}).Append(e); err == nil || buf.Len() != 0 {
		t.Errorf("Append = %v, wrote %d bytes; want a refusal and nothing written", err, buf.Len())
	}
}

// failingWriter fails every write after the first ok ones, as a disk that filled up.
type failingWriter struct {
	ok     int
	writes int
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes > w.ok {
		return 0, errors.New("no space left on device")
	}
	return len(p), nil
}

// A failed write stops the log: that Append and every later one fail with ErrStopped, and
// none writes again, since the line after a partial one could not be chained. An entry
// refused alone (too long, invalid) does not stop it.
func TestAWriteErrorStopsTheLog(t *testing.T) {
	w := &failingWriter{ok: 1}
	l := NewWriter(w, Options{})
	bad := entry(t, 1)
	bad.Reason = "not a reason code"
	if _, err := l.Append(bad); err == nil || errors.Is(err, ErrStopped) {
		t.Errorf("Append of an invalid entry = %v, want a refusal that does not stop the log", err)
	}
	if _, err := l.Append(entry(t, 1)); err != nil {
		t.Fatalf("first Append = %v", err)
	}
	for i := 2; i < 4; i++ {
		if _, err := l.Append(entry(t, i)); !errors.Is(err, ErrStopped) {
			t.Errorf("Append %d after a failed write = %v, want ErrStopped", i, err)
		}
	}
	if w.writes != 2 {
		t.Errorf("%d writes, want 2: the log wrote after a failed write", w.writes)
	}
}

// A Secret ork writes is logged by its reference and the paths of its changed keys; its
// values never reach the log.
func TestSecretValuesNeverReachTheLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "decisions.log")
	l, err := Open(path, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	before := map[string]any{"kind": "Secret", "data": map[string]any{"password": "aHVudGVyMg=="}}
	after := map[string]any{"kind": "Secret", "data": map[string]any{"password": "Y29ycmVjdGhvcnNl"}, "stringData": map[string]any{"token": "plain-token"}}
	e := entry(t, 1)
	e.Children = []decision.Child{{Ref: decision.Ref{APIVersion: "v1", Kind: "Secret", Namespace: "ns", Name: "db"},
		Fields: decision.ChangedFields(before, after), Outcome: decision.ChildApplied}}
	if _, err := l.Append(e); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"aHVudGVyMg==", "Y29ycmVjdGhvcnNl", "hunter2", "correcthorse", "plain-token"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the log holds %q", secret)
		}
	}
	if !bytes.Contains(b, []byte(`"fields":["data.password","stringData.token"]`)) {
		t.Errorf("the log does not name the changed keys: %s", b)
	}
}

func TestScan(t *testing.T) {
	var got []string
	err := Scan(strings.NewReader(strings.Join(chain(t, 3), "")), func(line int, e decision.Entry) error {
		got = append(got, fmt.Sprintf("%d:%d", line, e.Object.Generation))
		return nil
	})
	if err != nil || strings.Join(got, " ") != "1:0 2:1 3:2" {
		t.Errorf("Scan = %v, %v", got, err)
	}
}

func verifyFile(t *testing.T, path string) (int, int, error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return Verify(f)
}

// The cost of one line on a file, fsynced once a second.
func BenchmarkAppend(b *testing.B) {
	l, err := Open(filepath.Join(b.TempDir(), "decisions.log"), nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	e := entry(b, 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Append(e); err != nil {
			b.Fatal(err)
		}
	}
}
