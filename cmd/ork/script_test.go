package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestMain makes the test binary double as `ork` inside scripts: the real main, exit code
// and streams included.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){"ork": main})
}

// TestScripts runs the CLI contract in testdata/script/*.txtar. $EXAMPLES is the repository's
// examples directory, $REPO the repository.
func TestScripts(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sarif := sarifSchema(t, filepath.Join(repo, "testdata", "sarif", "sarif-schema-2.1.0.json"))
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testdata/script",
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", filepath.Join(repo, "examples"))
			env.Setenv("REPO", repo)
			return nil
		},
		Cmds: map[string]func(*testscript.TestScript, bool, []string){
			"exits":        exits,
			"findingsjson": findingsJSON,
			"jsonkeys":     jsonKeys,
			"sarif":        sarifCmd(sarif),
		},
	})
}

// sarifSchema compiles the SARIF 2.1.0 schema kept in testdata/sarif (see its README).
func sarifSchema(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(path, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sarifCmd is `sarif RESULTS`: stdout is a SARIF 2.1.0 log that matches the schema, with
// RESULTS results.
func sarifCmd(s *jsonschema.Schema) func(*testscript.TestScript, bool, []string) {
	return func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: sarif RESULTS")
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(ts.ReadFile("stdout")))
		ts.Check(err)
		if err := s.Validate(doc); err != nil {
			ts.Fatalf("stdout does not match the SARIF 2.1.0 schema: %v", err)
		}
		var log struct {
			Runs []struct {
				Results []any `json:"results"`
			} `json:"runs"`
		}
		ts.Check(json.Unmarshal([]byte(ts.ReadFile("stdout")), &log))
		if got := strconv.Itoa(len(log.Runs[0].Results)); got != args[0] {
			ts.Fatalf("SARIF log has %s results, want %s", got, args[0])
		}
	}
}

// exits CODE PROG [ARGS...] runs PROG and requires exit code CODE; stdout and stderr stay
// available to the next commands, as after exec.
func exits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
	}
}

// findingsJSON checks that stdout is the `ork validate -o json` contract:
// {"valid":bool,"findings":[{"rule","severity","file","line","column","path","message","hint"}]},
// every key present with its JSON type, every rule one of docs/katalog.md#rules, and valid
// true exactly when no finding is an error.
func findingsJSON(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: findingsjson")
	}
	var report map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile("stdout")), &report))
	checkKeys(ts, "report", report, map[string]string{"valid": "bool", "findings": "array"})
	errs := 0
	for i, raw := range report["findings"].([]any) {
		f, ok := raw.(map[string]any)
		if !ok {
			ts.Fatalf("findings[%d] is %T, want an object", i, raw)
		}
		checkKeys(ts, "findings["+strconv.Itoa(i)+"]", f, map[string]string{
			"rule": "string", "severity": "string", "file": "string", "line": "number", "column": "number",
			"path": "string", "message": "string", "hint": "string",
		})
		if _, ok := katalog.Rule(f["rule"].(string)).Info(); !ok {
			ts.Fatalf("findings[%d].rule %q is no rule of katalog.Rules()", i, f["rule"])
		}
		switch f["severity"] {
		case "error":
			errs++
		case "warning":
		default:
			ts.Fatalf("findings[%d].severity is %q, want error or warning", i, f["severity"])
		}
	}
	if valid := report["valid"].(bool); valid != (errs == 0) {
		ts.Fatalf("valid is %v with %d error findings", valid, errs)
	}
}

// jsonKeys KEY... checks that stdout is a JSON object with exactly these string keys.
func jsonKeys(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: jsonkeys KEY...")
	}
	var obj map[string]any
	ts.Check(json.Unmarshal([]byte(ts.ReadFile("stdout")), &obj))
	want := map[string]string{}
	for _, k := range args {
		want[k] = "string"
	}
	checkKeys(ts, "stdout", obj, want)
}

// checkKeys requires obj to hold exactly the keys of want, each of the JSON type named.
func checkKeys(ts *testscript.TestScript, what string, obj map[string]any, want map[string]string) {
	for k := range obj {
		if _, ok := want[k]; !ok {
			ts.Fatalf("%s has unexpected key %q", what, k)
		}
	}
	for k, typ := range want {
		v, ok := obj[k]
		if !ok {
			ts.Fatalf("%s lacks key %q", what, k)
		}
		if got := jsonType(v); got != typ {
			ts.Fatalf("%s.%s is a JSON %s, want %s", what, k, got, typ)
		}
	}
}

func jsonType(v any) string {
	switch v.(type) {
	case bool:
		return "bool"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}
