package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/katalog"
)

var sample = []katalog.Finding{
	{Severity: katalog.SeverityError, File: "k.yaml", Line: 12, Column: 7, Path: "crds.web.operatorBox.reconcile.remote",
		Message: "reconcile.remote requires reconcile.default: false", Hint: "set `reconcile.default: false`"},
	{Severity: katalog.SeverityWarning, File: "k.yaml", Line: 20, Column: 9, Path: "crds.web", Message: "no managedResources"},
}

func TestFindingsTextIsOneLineEachAndASummary(t *testing.T) {
	var b bytes.Buffer
	if err := Findings(&b, NewStyle(&b, false), sample); err != nil {
		t.Fatal(err)
	}
	want := "k.yaml:12:7: error: crds.web.operatorBox.reconcile.remote: reconcile.remote requires reconcile.default: false (hint: set `reconcile.default: false`)\n" +
		"k.yaml:20:9: warning: crds.web: no managedResources\n" +
		"invalid: 1 error, 1 warning\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestColourOnlyWhenAsked(t *testing.T) {
	var plain, coloured bytes.Buffer
	_ = Findings(&plain, NewStyle(&plain, false), sample)
	_ = Findings(&coloured, NewStyle(&coloured, true), sample)
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("plain output carries escape codes")
	}
	if !strings.Contains(coloured.String(), "\x1b[") {
		t.Error("coloured output carries no escape codes")
	}
	env := map[string]string{"NO_COLOR": "1"}
	getenv := func(k string) string { return env[k] }
	if UseColor(true, false, getenv) {
		t.Error("NO_COLOR ignored")
	}
	if UseColor(false, false, func(string) string { return "" }) {
		t.Error("colour on a pipe")
	}
	if UseColor(true, true, func(string) string { return "" }) {
		t.Error("--no-color ignored")
	}
}

func TestFindingsJSONContract(t *testing.T) {
	var b bytes.Buffer
	if err := FindingsJSON(&b, nil); err != nil {
		t.Fatal(err)
	}
	var empty map[string]any
	if err := json.Unmarshal(b.Bytes(), &empty); err != nil {
		t.Fatal(err)
	}
	if empty["valid"] != true || empty["findings"] == nil {
		t.Errorf("no findings = %s, want valid true and an empty list (never null)", b.String())
	}
	b.Reset()
	if err := FindingsJSON(&b, sample); err != nil {
		t.Fatal(err)
	}
	var got FindingsReport
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Valid || len(got.Findings) != 2 || got.Findings[0].Line != 12 {
		t.Errorf("report = %+v", got)
	}
}

func TestParseFormat(t *testing.T) {
	if f, err := ParseFormat("JSON", Text, JSON); err != nil || f != JSON {
		t.Errorf("ParseFormat(JSON) = %q, %v", f, err)
	}
	if _, err := ParseFormat("yaml", Text, JSON); err == nil || !strings.Contains(err.Error(), "text, json") {
		t.Errorf("ParseFormat(yaml) with text|json allowed: err = %v", err)
	}
}
