package opcallback

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestTokenIsBoundToOneOperation(t *testing.T) {
	key := []byte("k1")
	const uid, gen, id = types.UID("uid-1"), int64(3), "op-1"
	held := Token(key, uid, gen, id)
	start := Token(key, uid, gen, "")
	tests := []struct {
		name  string
		key   []byte
		token string
		uid   types.UID
		gen   int64
		id    string
		want  bool
	}{
		{"the operation's token", key, held, uid, gen, id, true},
		{"the token of the call that started it", key, start, uid, gen, id, true},
		{"forged: another key", []byte("k2"), held, uid, gen, id, false},
		{"forged: not base64url", key, held[:len(held)-1] + "!", uid, gen, id, false},
		{"forged: truncated", key, held[:20], uid, gen, id, false},
		{"another operation", key, held, uid, gen, "op-2", false},
		{"another generation", key, held, uid, gen + 1, id, false},
		{"another uid", key, held, "uid-2", gen, id, false},
		{"no operation named", key, start, uid, gen, "", false},
		{"fields do not run together", key, Token(key, "uid-1", 3, "1op"), "uid-1", 31, "op", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Valid(tt.key, tt.token, tt.uid, tt.gen, tt.id); got != tt.want {
				t.Errorf("Valid = %v, want %v", got, tt.want)
			}
		})
	}
	if held == start || len(held) != 43 {
		t.Errorf("tokens %q and %q: want two distinct 43-character tokens", held, start)
	}
}
