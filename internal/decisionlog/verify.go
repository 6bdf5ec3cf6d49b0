package decisionlog

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/orkspace/ork/internal/decision"
)

// BrokenError says where and why the chain breaks.
type BrokenError struct {
	// Line is 1-based.
	Line   int
	Reason string
}

func (e *BrokenError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// Verify reads a whole log and checks every line's hash and its link to the line before.
// lines is the number of lines read; firstBad is the first broken line (1-based), 0 when the
// chain holds; err is a *BrokenError for a broken chain, another error when r could not be
// read. An edited line breaks at itself (its hash no longer matches), a deleted, inserted or
// moved line breaks at the first line whose prev no longer names the line before it. Lines
// removed from the end are not detected by the chain alone (see docs/provenance.md).
func Verify(r io.Reader) (lines, firstBad int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), MaxLine+1)
	prev := Genesis
	var broken *BrokenError
	for sc.Scan() {
		lines++
		if broken != nil {
			continue // count the rest
		}
		if reason := check(sc.Bytes(), prev); reason != "" {
			broken = &BrokenError{Line: lines, Reason: reason}
			continue
		}
		_, e, _ := decode(sc.Bytes())
		prev = e.Hash
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) && broken == nil {
			return lines + 1, lines + 1, &BrokenError{Line: lines + 1, Reason: fmt.Sprintf("longer than %d bytes", MaxLine)}
		}
		if broken == nil {
			return lines, 0, fmt.Errorf("read the log: %w", err)
		}
	}
	if broken != nil {
		return lines, broken.Line, broken
	}
	return lines, 0, nil
}

// check says why a line does not follow prev, or "".
func check(line []byte, prev string) string {
	body, e, err := decode(line)
	if err != nil {
		return err.Error()
	}
	if e.Prev != prev {
		if prev == Genesis {
			return "the first line of a log has an empty prev: lines before it were removed"
		}
		return "its prev is not the hash of the line before: a line was removed, inserted or moved"
	}
	if hashOf(prev, body) != e.Hash {
		return "its hash does not match its content: the line was edited"
	}
	return ""
}

// Scan calls f with every line's entry, in order, without checking the chain (Verify does).
func Scan(r io.Reader, f func(line int, e decision.Entry) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), MaxLine+1)
	n := 0
	for sc.Scan() {
		n++
		_, e, err := decode(sc.Bytes())
		if err != nil {
			return &BrokenError{Line: n, Reason: err.Error()}
		}
		if err := f(n, e); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read the log: %w", err)
	}
	return nil
}
