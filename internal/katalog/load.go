package katalog

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// DefaultFile is the Katalog read when no -f is given.
const DefaultFile = "katalog.yaml"

// Set is every Katalog file of one invocation and the CRDs they declare.
type Set struct {
	Files []*File
	// CRDs sorted by name; a CRD declared twice appears once (the first declaration).
	CRDs []*CRD
}

// CRD returns the CRD with the given Katalog name, or nil.
func (s *Set) CRD(name string) *CRD {
	for _, c := range s.CRDs {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// ErrUnreadable marks a file that could not be read at all (exit code 2, not 1).
var ErrUnreadable = errors.New("unreadable file")

// Load reads and decodes the Katalog files from the host, each path as the user named it
// (relative to the working directory, or absolute). Structural problems (syntax, unknown
// fields, wrong types, crdFile issues) come back as findings with positions. A file that
// cannot be read is an error (wrapping ErrUnreadable, the first such file's), and also a
// finding of RuleUnreadable, so that machine-readable reports can carry it; the other files
// are still decoded.
func Load(paths []string) (*Set, []Finding, error) {
	if len(paths) == 0 {
		paths = []string{DefaultFile}
	}
	files := make([]Source, len(paths))
	for i, p := range paths {
		files[i] = hostSource(p)
	}
	return load(files)
}

// LoadFS is Load over fsys: paths are names in fsys (see fs.ValidPath), and each file a
// Katalog names (crdFile, crFiles, caFile) is read from fsys too, relative to the Katalog's
// directory, an absolute one from fsys's root. Nothing is read from the host unless fsys
// reads it (Load uses os.DirFS).
func LoadFS(fsys fs.FS, paths []string) (*Set, []Finding, error) {
	if len(paths) == 0 {
		paths = []string{DefaultFile}
	}
	files := make([]Source, len(paths))
	for i, p := range paths {
		files[i] = Source{Path: p, fsys: fsys, name: p}
	}
	return load(files)
}

// hostSource is the host file at p (as the user named it) as a name in an os.DirFS of its
// volume's root, so that "../crds/x.yaml" and absolute crdFiles resolve as on the host.
func hostSource(p string) Source {
	abs, err := filepath.Abs(p)
	if err != nil { // no working directory: p can only be read as it is
		return Source{Path: p, fsys: os.DirFS("."), name: filepath.ToSlash(p)}
	}
	vol := filepath.VolumeName(abs)
	return Source{Path: p, fsys: os.DirFS(vol + string(filepath.Separator)),
		name: strings.TrimPrefix(filepath.ToSlash(abs[len(vol):]), "/")}
}

// load reads each source's Data from its file system, then decodes them all.
func load(files []Source) (*Set, []Finding, error) {
	sources := make([]Source, 0, len(files))
	var unreadable []Finding
	var firstErr error
	for _, src := range files {
		data, err := fs.ReadFile(src.fsys, src.name)
		if err != nil {
			if pe, ok := err.(*fs.PathError); ok {
				pe.Path = src.Path // the file as the user named it, not its name in the file system
			}
			if firstErr == nil {
				firstErr = fmt.Errorf("%w: %w", ErrUnreadable, err)
			}
			// No position: the file has none to give.
			unreadable = append(unreadable, Finding{Rule: RuleUnreadable, Severity: SeverityError, File: src.Path,
				Message: "cannot read the file: " + err.Error(), Hint: "check the -f path and the file's permissions"})
			continue
		}
		src.Data = data
		sources = append(sources, src)
	}
	set, findings := Decode(sources...)
	findings = append(findings, unreadable...)
	SortFindings(findings)
	return set, findings, firstErr
}

// Source is a Katalog's bytes and the path they are reported under.
type Source struct {
	Path string
	Data []byte
	// fsys and name locate the Katalog for the files it names; unset, Path on the host.
	fsys fs.FS
	name string
}

// Decode decodes Katalogs held in memory; see Load. The files they name are read from the
// host, relative to each Source's Path.
func Decode(sources ...Source) (*Set, []Finding) {
	set := &Set{}
	var findings []Finding
	for _, src := range sources {
		if src.fsys == nil {
			host := hostSource(src.Path)
			src.fsys, src.name = host.fsys, host.name
		}
		f, found := decodeFile(src.Path, src.Data)
		findings = append(findings, found...)
		if f == nil {
			continue
		}
		f.fsys, f.name = src.fsys, src.name
		set.Files = append(set.Files, f)
		findings = append(findings, set.addCRDs(f)...)
	}
	slices.SortFunc(set.CRDs, func(a, b *CRD) int { return strings.Compare(a.Name, b.Name) })
	for _, c := range set.CRDs {
		findings = append(findings, readCRDFile(c)...)
	}
	SortFindings(findings)
	return set, findings
}

func (s *Set) addCRDs(f *File) []Finding {
	var findings []Finding
	names := make([]string, 0, len(f.Katalog.Spec.CRDs))
	for name := range f.Katalog.Spec.CRDs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		c := f.Katalog.Spec.CRDs[name]
		if c == nil {
			c = &CRD{}
			f.Katalog.Spec.CRDs[name] = c
		}
		c.Name, c.Source = name, f
		if prev := s.CRD(name); prev != nil {
			pos := prev.Source.Pos(CRDPath(name, ""))
			findings = append(findings, f.Finding(RuleDuplicateCRD, SeverityError, CRDPath(name, ""),
				fmt.Sprintf("CRD %q is already declared in %s:%d", name, prev.Source.Path, pos.Line),
				"give each CRD a unique name across all -f files"))
			continue
		}
		s.CRDs = append(s.CRDs, c)
	}
	return findings
}

// decodeFile parses one file; it returns nil when nothing usable could be decoded.
func decodeFile(path string, data []byte) (*File, []Finding) {
	f := &File{Path: path, positions: map[string]Pos{}, meant: map[string]bool{}}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, []Finding{f.Finding(RuleEmptyFile, SeverityError, "", "file is empty",
				"start from examples/remote/katalog.yaml")}
		}
		return nil, []Finding{syntaxFinding(path, data, err)}
	}
	var findings []Finding
	for {
		// A trailing `---` (an empty document) is common and harmless, as kubectl agrees.
		var extra yaml.Node
		if err := dec.Decode(&extra); err != nil {
			break
		}
		if !emptyDocument(&extra) {
			findings = append(findings, Finding{Rule: RuleMultipleDocuments, Severity: SeverityError, File: path,
				Line: extra.Line, Column: extra.Column, Message: "more than one YAML document",
				Hint: "put one Katalog per file and pass each with -f"})
			break
		}
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	if nk, ok := notAKatalog(f, doc); ok {
		return nil, []Finding{nk}
	}
	indexPositions(&root, "", f.positions)
	unquotedTemplates(f, &root, "", &findings)
	if !checkStructure(f, doc, reflect.TypeFor[Katalog](), "", &findings) {
		return nil, findings
	}

	pruned, err := yaml.Marshal(&root)
	if err != nil {
		return nil, append(findings, f.Finding(RuleDecode, SeverityError, "", "cannot re-encode: "+err.Error(), ""))
	}
	var k Katalog
	if err := sigsyaml.UnmarshalStrict(pruned, &k); err != nil {
		// checkStructure should have caught everything strict decoding rejects; say so if not.
		return nil, append(findings, f.Finding(RuleDecode, SeverityError, "", "cannot decode: "+err.Error(), ""))
	}
	f.Katalog = &k
	return f, findings
}

func emptyDocument(n *yaml.Node) bool {
	return n.Kind == yaml.DocumentNode && (len(n.Content) == 0 || (len(n.Content) == 1 && isNull(n.Content[0])))
}
