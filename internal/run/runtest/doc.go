// Package runtest is the end-to-end harness of the run engine's tests: a Fixture (a CRD of
// its own, a namespace, a token Secret, a Katalog and an in-process Engine) against the
// real kube-apiserver of internal/testenv, and a scripted loopback reconciler whose every
// request is checked against ork's published request schema. It serves internal/run's own
// tests and the suites split from them into packages of their own (internal/run/rolloutrun),
// whose test binaries run beside internal/run's. Only tests import it.
package runtest
