package katalog

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"sort"
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// yamlProblem splits the parser's message "yaml: line 3: did not find expected key" into
// its line and its problem.
var yamlProblem = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// syntaxFinding locates a YAML syntax error where the parser itself stopped: the offending
// token's line and column. The parser's message gives the line of the enclosing block
// instead (libyaml's context mark, "while parsing a block mapping"), which may be many lines
// above; the token's position is not exported, so it is found as the shortest prefix of
// the file that fails with the same problem: the parser reads from the start and fails as
// soon as it meets the token.
func syntaxFinding(path string, data []byte, err error) Finding {
	msg := err.Error()
	contextLine, problem := 0, msg
	if m := yamlProblem.FindStringSubmatch(msg); m != nil {
		contextLine, _ = strconv.Atoi(m[1])
		problem = m[2]
	}
	line, col := tokenPos(data, problem)
	if line == 0 {
		line, col = max(contextLine, 1), 1
	}
	// The parser's own line is left out of the message: it is the enclosing block's, and
	// off by one for some errors.
	return Finding{Rule: RuleYAMLSyntax, Severity: SeverityError, File: path, Line: line, Column: col,
		Message: "YAML syntax error: " + problem,
		Hint:    "fix the YAML syntax here; quote a value that holds `: ` or starts with `{`, `[`, `*`, `&` or `!`"}
}

// tokenPos is the 1-based line and column at which a prefix of data first fails to parse
// with problem; 0, 0 when none does (then the problem needs the whole file to show). Once
// a prefix holds the offending token, every longer one fails there too, so the line is
// found by binary search: a few parses, not one per line.
func tokenPos(data []byte, problem string) (line, col int) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	ends := make([]int, len(lines))
	end := 0
	for i, l := range lines {
		end += len(l)
		ends[i] = end
	}
	i := sort.Search(len(lines), func(i int) bool { return failsWith(data[:ends[i]], problem) })
	if i == len(lines) {
		return 0, 0
	}
	// The line is found; the column is the shortest part of it that fails too.
	start := ends[i] - len(lines[i])
	for c := 1; c <= len(lines[i]); c++ {
		if failsWith(data[:start+c], problem) {
			return i + 1, len([]rune(string(lines[i][:c])))
		}
	}
	return i + 1, 1
}

// failsWith reports whether the first YAML document of data fails to parse with problem.
func failsWith(data []byte, problem string) bool {
	var n yaml.Node
	err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&n)
	if err == nil || errors.Is(err, io.EOF) {
		return false
	}
	m := yamlProblem.FindStringSubmatch(err.Error())
	return m != nil && m[2] == problem
}
