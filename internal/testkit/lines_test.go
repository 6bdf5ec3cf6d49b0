package testkit_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/orkspace/ork/internal/testkit"
)

// Lines split across writes arrive whole, the sink gets every byte, and a full channel
// drops lines instead of blocking the writer.
func TestLineWriterSplitsLinesAndNeverBlocks(t *testing.T) {
	var sink testkit.SyncBuffer
	w := testkit.NewLineWriter(&sink, 2)
	for _, s := range []string{"first li", "ne\nsecond\nthird\n", "unfinished"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	close(w.Lines)
	var got []string
	for l := range w.Lines {
		got = append(got, l)
	}
	if diff := cmp.Diff([]string{"first line", "second"}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if want := "first line\nsecond\nthird\nunfinished"; sink.String() != want {
		t.Errorf("sink = %q, want %q", sink.String(), want)
	}
}
