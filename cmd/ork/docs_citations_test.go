package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// citation is how a design document outside the repository, or one of ork's own issues, was
// cited: the decisions live in docs/ (remote-reconciler.md, naming.md, rbac.md, scaling.md),
// and code and docs cite those. A reference to another project's issue (owner/repo#123, a
// KEP number) does not match.
var citation = regexp.MustCompile(`\bSPEC\b|(?i)\bissues?\s+#?[0-9]+`)

// pendingCitations are files that still cite outside the repository and may not be edited
// yet: the engine's files, which its refactoring will touch. Remove a file once its citation
// is replaced; the test fails if a listed file no longer cites.
var pendingCitations = []string{}

// Go files, docs, README and CHANGELOG cite the repository's own docs, never a design
// document kept elsewhere nor ork's issue numbers.
func TestNoCitationOutsideTheRepository(t *testing.T) {
	var cited []string
	walkSources(t, func(path string, text string) {
		for i, line := range strings.Split(text, "\n") {
			if m := citation.FindString(line); m != "" {
				if slices.Contains(pendingCitations, path) {
					cited = append(cited, path)
					continue
				}
				t.Errorf("%s:%d cites %q: cite the section of docs/ that holds the decision", path, i+1, m)
			}
		}
	})
	for _, p := range pendingCitations {
		if !slices.Contains(cited, p) {
			t.Errorf("%s cites nothing outside the repository any more: remove it from pendingCitations", p)
		}
	}
}

// docSection is a citation of a docs page's section from code or a test.
var docSection = regexp.MustCompile(`docs/([a-z0-9-]+\.md)#([a-z0-9_-]+)`)

// Every docs/<page>.md#<section> a Go file cites is a heading of that page.
func TestCitedDocSectionsExist(t *testing.T) {
	anchors := map[string]map[string]bool{}
	walkSources(t, func(path string, text string) {
		if !strings.HasSuffix(path, ".go") {
			return
		}
		for _, m := range docSection.FindAllStringSubmatch(text, -1) {
			page, section := m[1], m[2]
			if anchors[page] == nil {
				anchors[page] = headings(t, filepath.Join("../../docs", page))
			}
			if !anchors[page][section] {
				t.Errorf("%s cites docs/%s#%s: no such section", path, page, section)
			}
		}
	})
}

// walkSources calls f with each Go, Markdown and txtar file of the repository (its path
// from the root) and its text, skipping .git and third-party trees.
func walkSources(t *testing.T, f func(path, text string)) {
	t.Helper()
	root := "../.."
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "vendor", ".venv", "dist":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".md", ".txtar":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		f(filepath.ToSlash(rel), string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// headings are the anchors GitHub gives a Markdown page's headings: lower case, punctuation
// dropped, spaces as hyphens.
func headings(t *testing.T, page string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	inFence := false
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if inFence || !strings.HasPrefix(line, "#") || !ok {
			continue
		}
		var slug strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case r == ' ':
				slug.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				slug.WriteRune(r)
			}
		}
		out[slug.String()] = true
	}
	return out
}
