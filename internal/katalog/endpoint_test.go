package katalog

import "testing"

func TestWithEndpointsChangesOnlyTheCopy(t *testing.T) {
	remote := func(ep string) *CRD {
		c := &CRD{}
		c.OperatorBox.Reconcile.Remote = &Remote{Endpoint: ep}
		return c
	}
	a, b, decl := remote("http://a.default.svc:8088/reconcile"), remote("http://b.default.svc:8088/reconcile"), &CRD{}
	a.Name, b.Name, decl.Name = "a", "b", "decl"
	s := &Set{CRDs: []*CRD{a, b, decl}}

	got := s.WithEndpoints(map[string]string{"a": "http://127.0.0.1:8088/reconcile", "decl": "http://x"})

	if ep := got.CRD("a").OperatorBox.Reconcile.Remote.Endpoint; ep != "http://127.0.0.1:8088/reconcile" {
		t.Errorf("a's endpoint in the copy: %s", ep)
	}
	if got.CRD("b") != b {
		t.Error("b has no override: want the same CRD, not a copy")
	}
	if got.CRD("decl") != decl || decl.OperatorBox.Reconcile.Remote != nil {
		t.Error("a declarative CRD gained a remote block")
	}
	if ep := a.OperatorBox.Reconcile.Remote.Endpoint; ep != "http://a.default.svc:8088/reconcile" {
		t.Errorf("the original Katalog changed: a's endpoint is %s", ep)
	}
	if s.WithEndpoints(nil) != s {
		t.Error("no overrides: want the set itself")
	}
}
