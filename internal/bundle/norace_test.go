//go:build !race

package bundle_test

// raceBuild: see race_test.go.
const raceBuild = false
