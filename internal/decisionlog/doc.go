// Package decisionlog writes and checks the decision log: JSON lines, one decision.Entry per
// line, each line's hash chained to the previous line's, so that an edited, deleted or
// reordered line is found by Verify.
//
// A line is the entry's JSON without its hash, with ,"hash":"<hex>" inserted before the
// closing brace; the hash is the hex SHA-256 of the previous line's hash, a newline, and that
// JSON without the hash. The first line of a log has prev "" (the genesis).
package decisionlog
