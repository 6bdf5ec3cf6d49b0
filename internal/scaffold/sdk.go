package scaffold

import (
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"testing/fstest"

	"github.com/orkspace/ork/internal/gentypes"
	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/sdk"
)

// sdkDirs are where each reconciler's copy of ork's SDK goes, below reconciler/: a module
// of its own for Go (go.mod's replace names it), the importable package for Python, the
// sources for TypeScript.
var sdkDirs = map[Remote]string{RemoteGo: "ork-sdk", RemotePython: "", RemoteTS: "ork-reconciler"}

// langs are ork gen types' languages of the remote flavours.
var langs = map[Remote]gentypes.Lang{RemoteGo: gentypes.Go, RemotePython: gentypes.Python, RemoteTS: gentypes.TypeScript}

// reconcilerFiles are the files of a remote reconciler that come from ork rather than from
// templates: the types of the scaffold's own CRD, as `ork gen types` writes them from
// rendered (katalog.yaml and crd.yaml among them), and the SDK, vendored until a release of
// it exists.
func reconcilerFiles(r Remote, rendered []File) ([]File, error) {
	fsys := fstest.MapFS{}
	for _, f := range rendered {
		fsys[f.Path] = &fstest.MapFile{Data: f.Data, Mode: 0o644}
	}
	set, findings, err := katalog.LoadFS(fsys, []string{"katalog.yaml"})
	if err == nil && katalog.HasErrors(findings) {
		err = fmt.Errorf("%s", findings[0].Message)
	}
	if err != nil {
		return nil, fmt.Errorf("load the scaffold's katalog: %w", err)
	}
	types, err := gentypes.Generate(set, gentypes.Options{Lang: langs[r]})
	if err != nil {
		return nil, fmt.Errorf("generate the types of the scaffold's CRD: %w", err)
	}
	files := []File{{Path: "reconciler/" + gentypes.FileName(langs[r]), Data: types, Mode: 0o644}}
	var vendored []sdk.File
	switch r {
	case RemoteGo:
		vendored = sdk.Go()
	case RemotePython:
		vendored = sdk.Python()
	case RemoteTS:
		vendored = sdk.TypeScript()
		lock, err := tsLock()
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: "reconciler/package-lock.json", Data: lock, Mode: 0o644})
	}
	for _, f := range vendored {
		files = append(files, File{Path: path.Join("reconciler", sdkDirs[r], f.Path), Data: f.Data, Mode: 0o644})
	}
	return files, nil
}

// lockFile is the part of package-lock.json the scaffold reads and rewrites.
type lockFile struct {
	Name            string                     `json:"name"`
	Version         string                     `json:"version"`
	LockfileVersion int                        `json:"lockfileVersion"`
	Requires        bool                       `json:"requires"`
	Packages        map[string]json.RawMessage `json:"packages"`
}

// rootPackage is packages[""] of a lock file: the project itself.
type rootPackage struct {
	Name            string            `json:"name"`
	Version         string            `json:"version"`
	DevDependencies map[string]string `json:"devDependencies"`
}

// tsProject are the name and version of the TypeScript reconciler's package.json.
const (
	tsProjectName    = "reconciler"
	tsProjectVersion = "0.1.0"
)

func readLock() (lockFile, rootPackage, error) {
	var lock lockFile
	var root rootPackage
	if err := json.Unmarshal(sdk.TypeScriptLock(), &lock); err != nil {
		return lock, root, fmt.Errorf("the TypeScript SDK's package-lock.json: %w", err)
	}
	if err := json.Unmarshal(lock.Packages[""], &root); err != nil {
		return lock, root, fmt.Errorf("the TypeScript SDK's package-lock.json: packages[\"\"]: %w", err)
	}
	return lock, root, nil
}

// tsLock is the TypeScript SDK's lock file for the scaffold's package.json: the same pinned
// compiler and node types, the scaffold's name and version.
func tsLock() ([]byte, error) {
	lock, root, err := readLock()
	if err != nil {
		return nil, err
	}
	lock.Name, lock.Version = tsProjectName, tsProjectVersion
	root.Name, root.Version = tsProjectName, tsProjectVersion
	b, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	lock.Packages[""] = b
	out, err := json.MarshalIndent(lock, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// tsDevDependencies are package.json's devDependencies lines, as the lock file pins them.
func tsDevDependencies() (string, error) {
	_, root, err := readLock()
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(root.DevDependencies))
	for n := range root.DevDependencies {
		names = append(names, n)
	}
	sort.Strings(names)
	lines := make([]string, len(names))
	for i, n := range names {
		lines[i] = fmt.Sprintf("    %q: %q", n, root.DevDependencies[n])
	}
	return strings.Join(lines, ",\n"), nil
}
