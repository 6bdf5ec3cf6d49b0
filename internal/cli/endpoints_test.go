package cli

import (
	"errors"
	"log/slog"
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

func TestTimeoutOverrides(t *testing.T) {
	one, two := katalogWith([]string{"webapp"}, []string{"cache"}), katalogWith([]string{"webapp", "db"}, nil)
	for _, tc := range []struct {
		name   string
		set    *katalog.Set
		values []string
		want   map[string]string
		err    string // a usage error containing this, when not ""
	}{
		{"a duration alone names the only remote CRD", one, []string{"45s"}, map[string]string{"webapp": "45s"}, ""},
		{"CRD=DURATION, repeatable", two, []string{"db=2m", "webapp=1m30s"}, map[string]string{"db": "2m", "webapp": "1m30s"}, ""},
		{"no duration", one, []string{"webapp=45"}, nil, "--endpoint-timeout webapp=45: want a positive Go duration, e.g. webapp=45s"},
		{"zero", one, []string{"webapp=0s"}, nil, "want a positive Go duration"},
		{"negative", one, []string{"-5s"}, nil, "want a positive Go duration"},
		{"an unknown CRD", two, []string{"dbs=5s"}, nil, `--endpoint-timeout: no CRD "dbs" in the Katalog (did you mean "db"?)`},
		{"a declarative CRD", one, []string{"cache=5s"}, nil, `--endpoint-timeout: CRD "cache" has no reconcile.remote`},
		{"a duration alone with two remote CRDs", two, []string{"5s"}, nil, "--endpoint-timeout: the Katalog has 2 remote CRDs"},
		{"a CRD twice", one, []string{"5s", "webapp=6s"}, nil, `--endpoint-timeout: CRD "webapp" is given twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := timeoutOverrides(tc.set, tc.values)
			if tc.err != "" {
				wantUsageError(t, err, tc.err)
				return
			}
			if err != nil || !maps.Equal(got, tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestAuthSecretOverrides(t *testing.T) {
	one, two := katalogWith([]string{"webapp"}, []string{"cache"}), katalogWith([]string{"webapp", "db"}, nil)
	for _, tc := range []struct {
		name   string
		set    *katalog.Set
		values []string
		want   map[string]katalog.SecretKeyRef
		err    string // a usage error containing this, when not ""
	}{
		{"NAMESPACE/NAME:KEY alone names the only remote CRD", one, []string{"ops/webapp-token:token"},
			map[string]katalog.SecretKeyRef{"webapp": {Namespace: "ops", Name: "webapp-token", Key: "token"}}, ""},
		{"no namespace: ork's own", two, []string{"db=db-token:tok.en", "webapp=ops/w:t"},
			map[string]katalog.SecretKeyRef{"db": {Name: "db-token", Key: "tok.en"}, "webapp": {Namespace: "ops", Name: "w", Key: "t"}}, ""},
		{"no key", one, []string{"webapp=ops/webapp-token"}, nil,
			"--auth-secret webapp=ops/webapp-token: no :KEY; want CRD=[NAMESPACE/]NAME:KEY, e.g. webapp=ops/webapp-token:token"},
		{"an empty key", one, []string{"webapp=tok:"}, nil, "no :KEY"},
		{"an empty namespace", one, []string{"webapp=/tok:token"}, nil, "namespace: "},
		{"a name that is no Secret name", one, []string{"webapp=Tok_en:token"}, nil, "name: "},
		{"a key that is no Secret key", one, []string{"webapp=tok:a/b"}, nil, "key: "},
		{"a key with a space", one, []string{"webapp=tok:a b"}, nil, "key: "},
		{"an unknown CRD", two, []string{"dbs=tok:token"}, nil, `--auth-secret: no CRD "dbs" in the Katalog (did you mean "db"?)`},
		{"a declarative CRD", one, []string{"cache=tok:token"}, nil, `--auth-secret: CRD "cache" has no reconcile.remote`},
		{"a CRD twice", one, []string{"tok:token", "webapp=tok:token"}, nil, `--auth-secret: CRD "webapp" is given twice`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := authSecretOverrides(tc.set, tc.values)
			if tc.err != "" {
				wantUsageError(t, err, tc.err)
				return
			}
			if err != nil || len(got) != len(tc.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tc.want)
			}
			for n, ref := range tc.want {
				if got[n] == nil || *got[n] != ref {
					t.Errorf("%s: got %+v, want %+v", n, got[n], ref)
				}
			}
		})
	}
}

// The three flags meet in one override per CRD, and the Katalog given is not changed.
func TestOverrideRemotes(t *testing.T) {
	set := katalogWith([]string{"webapp", "db"}, []string{"cache"})
	var logs strings.Builder
	got, err := overrideRemotes(set, runOptions{
		endpoints: []string{"webapp=http://127.0.0.1:8088/reconcile"}, timeouts: []string{"webapp=5s", "db=1m"},
		authSecrets: []string{"db=ops/db-token:token"},
	}, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	w, d := got.CRD("webapp").OperatorBox.Reconcile.Remote, got.CRD("db").OperatorBox.Reconcile.Remote
	if w.Endpoint != "http://127.0.0.1:8088/reconcile" || w.Timeout != "5s" || w.Auth != nil {
		t.Errorf("webapp: %+v", w)
	}
	if d.Timeout != "1m" || d.Auth == nil || *d.Auth.SecretRef != (katalog.SecretKeyRef{Namespace: "ops", Name: "db-token", Key: "token"}) ||
		d.Endpoint != set.CRD("db").OperatorBox.Reconcile.Remote.Endpoint {
		t.Errorf("db: %+v", d)
	}
	if got.CRD("cache") != set.CRD("cache") || set.CRD("webapp").OperatorBox.Reconcile.Remote.Timeout != "" {
		t.Error("the Katalog given changed, or a CRD without overrides was copied")
	}
	for _, want := range []string{"endpoint overridden for this run", "timeout overridden for this run", "auth Secret overridden for this run"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no log line %q:\n%s", want, logs.String())
		}
	}
	if _, err := overrideRemotes(set, runOptions{timeouts: []string{"cache=5s"}}, slog.New(slog.DiscardHandler)); err == nil {
		t.Error("a timeout for a declarative CRD: no error")
	}
}

func wantUsageError(t *testing.T, err error, want string) {
	t.Helper()
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != ExitUsage || !strings.Contains(err.Error(), want) {
		t.Fatalf("got %v, want a usage error containing %q", err, want)
	}
}
