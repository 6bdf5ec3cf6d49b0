package katalog

import (
	"io/fs"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Pos is a 1-based line and column in a file.
type Pos struct{ Line, Column int }

// File is one loaded Katalog file with the position of every node in it.
type File struct {
	// Path is the file as the user named it.
	Path    string
	Katalog *Katalog
	// positions maps a node path ("spec.crds.web.crFiles[0]") to where it stands.
	positions map[string]Pos
	// meant holds the node paths that an unknown field's did-you-mean names.
	meant map[string]bool
	// fsys is the file system the Katalog was read from, name its path in fsys: the files it
	// names (crdFile, crFiles, caFile) are read from there too.
	fsys fs.FS
	name string
}

// Misspelt reports whether the field at a finding's path (display form, "crds.web...") is
// absent because it was misspelt: an unknown field's did-you-mean names it or one of its
// ancestors. A finding there ("endpoint is required") only repeats the unknown-field
// finding, which already names the field meant.
func (f *File) Misspelt(path string) bool {
	// A display path drops "spec."; top-level fields (apiVersion, kind) never had it.
	return f.meantAbsent("spec."+path) || f.meantAbsent(path)
}

func (f *File) meantAbsent(path string) bool {
	for p := path; p != ""; p = parentPath(p) {
		if f.meant[p] {
			_, present := f.positions[p]
			return !present
		}
	}
	return false
}

// Resolve returns p relative to the Katalog file's directory (absolute paths unchanged), as
// a path on the host, for messages and for callers that read the host.
func (f *File) Resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(f.Path), p)
}

// ReadFile reads p (crdFile, a crFiles entry, caFile), relative to the Katalog file, from
// the file system the Katalog was loaded from.
func (f *File) ReadFile(p string) ([]byte, error) { return fs.ReadFile(f.fsys, f.fsName(p)) }

// Stat is os.Stat for the paths ReadFile reads.
func (f *File) Stat(p string) (fs.FileInfo, error) { return fs.Stat(f.fsys, f.fsName(p)) }

// fsName is p's name in f.fsys: relative to the Katalog's directory, an absolute p from the
// file system's root; ".." stops at the root, as it does on the host.
func (f *File) fsName(p string) string {
	p = filepath.ToSlash(p)
	if v := filepath.VolumeName(p); v != "" {
		p = p[len(v):]
	}
	if !path.IsAbs(p) {
		p = path.Join("/", path.Dir(f.name), p)
	}
	if name := strings.TrimPrefix(path.Clean("/"+p), "/"); name != "" {
		return name
	}
	return "."
}

// Pos returns the position of the node at path, or of its nearest ancestor that exists.
func (f *File) Pos(path string) Pos {
	for p := path; p != ""; p = parentPath(p) {
		if pos, ok := f.positions[p]; ok {
			return pos
		}
	}
	return Pos{Line: 1, Column: 1}
}

// Finding builds a finding of rule located at the node for path (a full node path,
// "spec.crds...").
func (f *File) Finding(rule Rule, sev Severity, path, message, hint string) Finding {
	pos := f.Pos(path)
	return Finding{
		Rule: rule, Severity: sev, File: f.Path, Line: pos.Line, Column: pos.Column,
		Path: DisplayPath(path), Message: message, Hint: hint,
	}
}

// CRDPath is the node path of a CRD's field, e.g. CRDPath("web", "operatorBox.reconcile").
func CRDPath(crd string, rest string) string {
	p := "spec.crds." + crd
	if rest != "" {
		p += "." + rest
	}
	return p
}

// DisplayPath drops the "spec." prefix users do not think in: crds.web.operatorBox...
func DisplayPath(path string) string { return strings.TrimPrefix(path, "spec.") }

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

func joinKey(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func joinIndex(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

// indexPositions records the position of every node below n; a mapping value is located at
// its key, which is where a reader looks for it.
func indexPositions(n *yaml.Node, path string, into map[string]Pos) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			indexPositions(c, path, into)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			p := joinKey(path, k.Value)
			if _, dup := into[p]; dup {
				continue // a duplicate key: the first is kept (checkStructure drops the others)
			}
			into[p] = Pos{Line: k.Line, Column: k.Column}
			indexPositions(v, p, into)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			p := joinIndex(path, i)
			into[p] = Pos{Line: c.Line, Column: c.Column}
			indexPositions(c, p, into)
		}
	}
}
