package decision

import (
	"fmt"
	"io"
	"time"

	"github.com/oklog/ulid/v2"
)

// NewID returns a decision id: a ULID (48 bits of Unix milliseconds, then 80 bits of
// entropy, in 26 characters of Crockford's base32), so that ids sort by time as strings and
// carry their time. entropy is crypto/rand.Reader in the engine, a fixed reader in tests.
func NewID(now time.Time, entropy io.Reader) (string, error) {
	id, err := ulid.New(ulid.Timestamp(now), entropy)
	if err != nil {
		return "", fmt.Errorf("new decision id: %w", err)
	}
	return id.String(), nil
}

// IDTime is the time a decision id was made at, to the millisecond.
func IDTime(id string) (time.Time, error) {
	u, err := ulid.ParseStrict(id)
	if err != nil {
		return time.Time{}, fmt.Errorf("decision id %q: %w", id, err)
	}
	return ulid.Time(u.Time()).UTC(), nil
}

// ValidID reports whether id is a decision id.
func ValidID(id string) bool {
	_, err := ulid.ParseStrict(id)
	return err == nil
}
