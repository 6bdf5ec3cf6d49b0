//go:build race

package bundle_test

// raceBuild builds the ork the e2e test runs with -race when the tests run with it: the
// packages are then in the build cache already, and ork's own races get caught too.
const raceBuild = true
