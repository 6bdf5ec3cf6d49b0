package sdk

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/rogpeppe/go-internal/txtar"
)

// File is one file of an SDK, at Path (slash-separated) below the SDK's root.
type File struct {
	Path string
	Data []byte
}

// The files `ork init` vendors into a scaffold. The Go SDK is a module of its own, out of
// the reach of go:embed, so its files come from go.txtar, a copy that TestGoCopyIsCurrent
// keeps current (go test ./sdk -update rewrites it).
var (
	//go:embed go.txtar
	goCopy []byte
	//go:embed python/ork_reconciler/*.py python/ork_reconciler/py.typed
	pythonFiles embed.FS
	//go:embed ts/src/*.ts ts/package-lock.json
	tsFiles embed.FS
)

// Go returns the Go SDK's module as a reconciler needs it: go.mod, README.md and the
// reconciler package without its tests.
func Go() []File {
	a := txtar.Parse(goCopy)
	files := make([]File, len(a.Files))
	for i, f := range a.Files {
		files[i] = File{Path: f.Name, Data: f.Data}
	}
	return files
}

// Python returns the Python SDK's package, ork_reconciler/*.py and its py.typed marker.
func Python() []File { return mustRead(pythonFiles, "python/ork_reconciler", "ork_reconciler") }

// TypeScript returns the TypeScript SDK's sources, src/*.ts, as *.ts below the root.
func TypeScript() []File { return mustRead(tsFiles, "ts/src", "") }

// TypeScriptLock returns the TypeScript SDK's package-lock.json: the pinned compiler and
// node types a scaffold builds with.
func TypeScriptLock() []byte {
	b, err := tsFiles.ReadFile("ts/package-lock.json")
	if err != nil {
		panic(err) // embedded: cannot happen
	}
	return b
}

// mustRead lists the files below dir of fsys (one level), renamed below to, sorted.
func mustRead(fsys embed.FS, dir, to string) []File {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		panic(fmt.Sprintf("embedded %s: %v", dir, err)) // embedded: cannot happen
	}
	var files []File
	for _, e := range entries {
		b, err := fsys.ReadFile(path.Join(dir, e.Name()))
		if err != nil {
			panic(fmt.Sprintf("embedded %s: %v", e.Name(), err))
		}
		files = append(files, File{Path: path.Join(to, e.Name()), Data: b})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files
}
