// Package sdk gives `ork init` the files of the reconciler SDKs (sdk/go, sdk/python,
// sdk/ts) to vendor into a scaffold, and holds the SDKs' end-to-end tests: each example
// reconciler built on an SDK is checked with ork's own remote check.
// The SDKs themselves are modules and packages of their own; their wire types are written
// by sdk/gen from schema/*.json.
package sdk
