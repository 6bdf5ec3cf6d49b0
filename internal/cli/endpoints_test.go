package cli

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/orkspace/ork/internal/katalog"
)

// katalogWith is a Set of remote CRDs named remotes and declarative CRDs named decls.
func katalogWith(remotes, decls []string) *katalog.Set {
	s := &katalog.Set{}
	for _, n := range remotes {
		c := &katalog.CRD{Name: n}
		c.OperatorBox.Reconcile.Remote = &katalog.Remote{Endpoint: "http://" + n + "-reconciler.default.svc:8088/reconcile"}
		s.CRDs = append(s.CRDs, c)
	}
	for _, n := range decls {
		s.CRDs = append(s.CRDs, &katalog.CRD{Name: n})
	}
	return s
}

func TestEndpointOverrides(t *testing.T) {
	one, two := katalogWith([]string{"webapp"}, []string{"cache"}), katalogWith([]string{"webapp", "db"}, nil)
	const local = "http://127.0.0.1:8088/reconcile"
	for _, tc := range []struct {
		name   string
		set    *katalog.Set
		values []string
		want   map[string]string
		err    string // a usage error containing this, when not ""
	}{
		{"none", one, nil, map[string]string{}, ""},
		{"a URL alone names the only remote CRD", one, []string{local}, map[string]string{"webapp": local}, ""},
		{"CRD=URL", two, []string{"db=" + local}, map[string]string{"db": local}, ""},
		{"repeatable", two, []string{"db=" + local, "webapp=https://10.0.0.7:8443/r?x=y"},
			map[string]string{"db": local, "webapp": "https://10.0.0.7:8443/r?x=y"}, ""},
		{"a URL with = in its query is still a URL alone", one, []string{"http://127.0.0.1:8088/reconcile?a=b"},
			map[string]string{"webapp": "http://127.0.0.1:8088/reconcile?a=b"}, ""},
		{"a URL alone with two remote CRDs", two, []string{local}, nil, "--endpoint: the Katalog has 2 remote CRDs (webapp, db): name one"},
		{"an unknown CRD, with a suggestion", two, []string{"dbs=" + local}, nil, `--endpoint: no CRD "dbs" in the Katalog (did you mean "db"?)`},
		{"a declarative CRD", one, []string{"cache=" + local}, nil, `--endpoint: CRD "cache" has no reconcile.remote`},
		{"no URL", one, []string{"webapp=127.0.0.1:8088"}, nil, "want an absolute http(s) URL, e.g. webapp=http://127.0.0.1:8088/reconcile"},
		{"no scheme", one, []string{"webapp=ftp://x/y"}, nil, "want an absolute http(s) URL"},
		{"a CRD twice", one, []string{local, "webapp=" + local}, nil, `--endpoint: CRD "webapp" is given twice`},
		{"no remote CRD at all", katalogWith(nil, []string{"cache"}), []string{local}, nil, "the Katalog has no CRD with reconcile.remote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := endpointOverrides(tc.set, tc.values)
			if tc.err != "" {
				var ee *ExitError
				if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want a usage error containing %q", err, tc.err)
				}
				return
			}
			if err != nil || !maps.Equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
