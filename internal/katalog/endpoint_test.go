package katalog

import "testing"

func TestWithRemotesChangesOnlyTheCopy(t *testing.T) {
	remote := func(ep string) *CRD {
		c := &CRD{}
		c.OperatorBox.Reconcile.Remote = &Remote{Endpoint: ep, Timeout: "30s",
			Auth: &Auth{Header: "X-Token", SecretRef: &SecretKeyRef{Name: "old", Key: "token"}}}
		return c
	}
	a, b, decl := remote("http://a.default.svc:8088/reconcile"), remote("http://b.default.svc:8088/reconcile"), &CRD{}
	a.Name, b.Name, decl.Name = "a", "b", "decl"
	s := &Set{CRDs: []*CRD{a, b, decl}}
	ref := &SecretKeyRef{Namespace: "ops", Name: "new", Key: "t"}

	got := s.WithRemotes(map[string]RemoteOverride{
		"a":    {Endpoint: "http://127.0.0.1:8088/reconcile", Timeout: "5s", AuthSecret: ref},
		"decl": {Endpoint: "http://x"},
	})

	r := got.CRD("a").OperatorBox.Reconcile.Remote
	if r.Endpoint != "http://127.0.0.1:8088/reconcile" || r.Timeout != "5s" || *r.Auth.SecretRef != *ref || r.Auth.Header != "X-Token" {
		t.Errorf("a in the copy: endpoint %s, timeout %s, auth %+v %+v", r.Endpoint, r.Timeout, r.Auth, r.Auth.SecretRef)
	}
	if got.CRD("b") != b {
		t.Error("b has no override: want the same CRD, not a copy")
	}
	if got.CRD("decl") != decl || decl.OperatorBox.Reconcile.Remote != nil {
		t.Error("a declarative CRD gained a remote block")
	}
	if r := a.OperatorBox.Reconcile.Remote; r.Endpoint != "http://a.default.svc:8088/reconcile" || r.Timeout != "30s" || r.Auth.SecretRef.Name != "old" {
		t.Errorf("the original Katalog changed: a's remote is %+v", r)
	}
	if s.WithRemotes(nil) != s {
		t.Error("no overrides: want the set itself")
	}
}

func TestWithRemoteGivesAuthToACRDWithout(t *testing.T) {
	c := &CRD{}
	c.OperatorBox.Reconcile.Remote = &Remote{Endpoint: "http://a/r"}
	got := c.WithRemote(RemoteOverride{AuthSecret: &SecretKeyRef{Name: "tok", Key: "token"}})
	if a := got.OperatorBox.Reconcile.Remote.Auth; a == nil || a.SecretRef.Name != "tok" || a.Header != "" {
		t.Errorf("auth: %+v", a)
	}
	if c.OperatorBox.Reconcile.Remote.Auth != nil {
		t.Error("the original gained auth")
	}
	if c.WithEndpoint("") != c {
		t.Error("no endpoint: want the CRD itself")
	}
}
