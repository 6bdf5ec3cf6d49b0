package run_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/run/runtest"
)

// One service often reconciles several CRDs at one endpoint. Its 429 with Retry-After is
// about the endpoint: while the pause holds, ork sends it no call for any CRD, and the held
// pass is quiet (a requeue, no failure).
func TestRetryAfterHoldsEveryCRDOfTheEndpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.InstallCRD("Db", "dbs")
	kindOf := func(c call) string {
		obj, _ := c.Body["object"].(map[string]any)
		kind, _ := obj["kind"].(string)
		return kind
	}
	ep := runtest.NewEndpoint(t, func(c call) response {
		if kindOf(c) == "App" {
			return response{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "3600"}, Body: []byte("slow down")}
		}
		return runtest.OKWithChildren(c)
	})
	f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL() + "/apps"})
	f.Start(twoCRDKatalog(t, f, ep.URL(), "/apps"), nil)

	f.CreateCR("a", map[string]any{})
	if c := ep.Next(t); kindOf(c) != "App" {
		t.Fatalf("first call for a %s, want the App", kindOf(c))
	}
	// The pause is set once ork has read the 429, which ends the App's pass as a failure.
	f.Eventually("the App's 429 read", func() (bool, error) {
		return testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("app", "error", "stable")) >= 1, nil
	})
	dbs := schema.GroupVersionResource{Group: f.Group, Version: "v1", Resource: "dbs"}
	db := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": f.Group + "/v1", "kind": "Db",
		"metadata": map[string]any{"name": "d"}, "spec": map[string]any{},
	}}
	if _, err := f.Dyn.Resource(dbs).Namespace(f.NS).Create(t.Context(), db, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the Db's pass held by the endpoint's pause", func() (bool, error) {
		return testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("db", "requeue", "stable")) >= 1, nil
	})
	calls := ep.Recorded()
	for _, c := range calls {
		if kindOf(c) == "Db" {
			t.Fatalf("a Db call reached the server during the pause it asked for (at %s)", c.Start)
		}
	}
	if n := testutil.ToFloat64(f.Metrics.ReconcileTotal.WithLabelValues("db", "error", "stable")); n != 0 {
		t.Errorf("%v failed Db reconciles: a held pass is not a failure", n)
	}
	got, err := f.Dyn.Resource(dbs).Namespace(f.NS).Get(t.Context(), "d", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := runtest.ReadyCondition(got); c != nil {
		t.Errorf("a held pass wrote the Db's Ready condition %v: it is quiet", c)
	}
}

// twoCRDKatalog extends the fixture's Katalog with a second CRD, Db, on the same server as
// the App, at dbPath.
func twoCRDKatalog(t *testing.T, f *fixture, server, dbPath string) *katalog.Set {
	t.Helper()
	raw, err := os.ReadFile(f.Katalog)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i := strings.Index(doc, "    app:\n")
	if i < 0 {
		t.Fatalf("no app CRD in the fixture's Katalog:\n%s", doc)
	}
	db := strings.NewReplacer(
		"    app:\n", "    db:\n",
		"kind: App, plural: apps", "kind: Db, plural: dbs",
		fmt.Sprintf("%q", server+"/apps"), fmt.Sprintf("%q", server+dbPath),
	).Replace(doc[i:])
	if !strings.Contains(db, server+dbPath) || !strings.Contains(db, "plural: dbs") {
		t.Fatalf("the Db block was not derived:\n%s", db)
	}
	if err := os.WriteFile(f.Katalog, []byte(strings.TrimRight(doc, "\n")+"\n"+db), 0o600); err != nil {
		t.Fatal(err)
	}
	set, findings, err := katalog.Load([]string{f.Katalog})
	if err != nil || katalog.HasErrors(findings) {
		t.Fatalf("two-CRD Katalog does not load: %v %+v", err, findings)
	}
	return set
}
