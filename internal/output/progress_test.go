package output

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// fixedClock advances 250ms per reading.
func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 29, 15, 4, 5, 0, time.UTC)
	return func() time.Time { t = t.Add(250 * time.Millisecond); return t }
}

func TestProgressPipedIsTimestampedLines(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, false, NewStyle(&b, false), fixedClock())
	p.Start("waiting for caches to sync")(nil)
	p.Start("installing CRD webapps.myorg.io")(errors.New("forbidden"))
	want := "[15:04:05] waiting for caches to sync ...\n" +
		"[15:04:06] waiting for caches to sync: done (500ms)\n" +
		"[15:04:06] installing CRD webapps.myorg.io ...\n" +
		"[15:04:06] installing CRD webapps.myorg.io: failed: forbidden\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestProgressOnATerminalSpinsThenTicks(t *testing.T) {
	var b bytes.Buffer
	p := NewProgress(&b, true, NewStyle(&b, false), fixedClock())
	done := p.Start("waiting for caches to sync")
	done(nil)
	done(nil) // a second call is harmless
	out := b.String()
	if !strings.HasPrefix(out, "\r"+spinnerFrames[0]+" waiting for caches to sync") {
		t.Errorf("no spinner frame first: %q", out)
	}
	if !strings.HasSuffix(out, "\r✓ waiting for caches to sync (250ms)\n") || strings.Count(out, "✓") != 1 {
		t.Errorf("no single final tick: %q", out)
	}
}
