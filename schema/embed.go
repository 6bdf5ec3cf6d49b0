// Package schema holds the JSON Schemas (draft 2020-12) of the remote reconciler's wire
// format, embedded so that ork's tests validate against the very files users read.
package schema

import "embed"

// File names of the schemas in this directory.
const (
	PreparedRequestFile = "prepared-request.schema.json"
	ResultFile          = "remote-reconcile-result.schema.json"
)

//go:embed prepared-request.schema.json remote-reconcile-result.schema.json
var files embed.FS

// PreparedRequest returns prepared-request.schema.json: the body ork POSTs to a remote
// reconciler. Each call returns a fresh copy.
func PreparedRequest() []byte { return mustRead(PreparedRequestFile) }

// RemoteReconcileResult returns remote-reconcile-result.schema.json: the body a remote
// reconciler answers with. Each call returns a fresh copy.
func RemoteReconcileResult() []byte { return mustRead(ResultFile) }

// mustRead cannot fail: go:embed above guarantees both files are in the binary.
func mustRead(name string) []byte {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return b
}
