package dotpath

import (
	"strings"
	"testing"
)

// FuzzParse: an exclude path parses or fails with an error; a parsed path has no empty key
// and as many keys as unescaped dots allow.
//
//	go test ./internal/dotpath -run '^$' -fuzz FuzzParse -fuzztime 5m
func FuzzParse(f *testing.F) {
	for _, s := range []string{"metadata.managedFields", `metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration`,
		"spec", "a..b", "a.", `a\`, "a[0]", "*", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			if err.Error() == "" {
				t.Error("an error without a message")
			}
			return
		}
		if len(p) == 0 || len(p) > strings.Count(s, ".")+1 {
			t.Errorf("Parse(%q) = %q: a key count that the dots cannot give", s, p)
		}
		for _, k := range p {
			if k == "" {
				t.Errorf("Parse(%q) = %q: an empty key", s, p)
			}
		}
	})
}
