// Package sdk holds the end-to-end tests of the reconciler SDKs (sdk/go, sdk/python,
// sdk/ts): each example reconciler built on an SDK is checked with ork's own remote check.
// The SDKs themselves are modules and packages of their own; their wire types are written
// by sdk/gen from schema/*.json.
package sdk
