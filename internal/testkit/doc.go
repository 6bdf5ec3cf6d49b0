// Package testkit holds what the tests of several packages share about processes: loopback
// addresses, output buffers, building binaries once per test binary, starting and stopping
// child processes, and bounded polling. Only _test.go files and test-only packages import it.
package testkit
