package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// docs/README.md links every page of docs/ and every example's README, and each link it
// has points at a file that exists.
func TestDocsIndexLinksEveryPage(t *testing.T) {
	index, err := os.ReadFile("../../docs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Glob("../../examples/*/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pages {
		name := filepath.Base(p)
		if name != "README.md" && !strings.Contains(string(index), "]("+name+")") {
			t.Errorf("docs/README.md does not link %s", name)
		}
	}
	for _, e := range examples {
		link := "](../examples/" + filepath.Base(filepath.Dir(e)) + "/README.md)"
		if !strings.Contains(string(index), link) {
			t.Errorf("docs/README.md does not link %s", link)
		}
	}
	for _, part := range strings.Split(string(index), "](")[1:] {
		target, _, _ := strings.Cut(part, ")")
		target, _, _ = strings.Cut(target, "#")
		if strings.Contains(target, "://") {
			continue
		}
		if _, err := os.Stat(filepath.Join("../../docs", target)); err != nil {
			t.Errorf("docs/README.md links %s: %v", target, err)
		}
	}
}
