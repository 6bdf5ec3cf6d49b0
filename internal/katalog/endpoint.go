package katalog

// WithEndpoint is c with reconcile.remote.endpoint replaced, on copies: c is not changed.
// An empty endpoint, or a CRD without reconcile.remote, returns c itself.
func (c *CRD) WithEndpoint(endpoint string) *CRD {
	return c.WithRemote(RemoteOverride{Endpoint: endpoint})
}

// RemoteOverride is what one run replaces of a remote CRD's reconcile.remote (`ork run
// --endpoint`, `--endpoint-timeout`, `--auth-secret`); an empty field keeps the Katalog's.
type RemoteOverride struct {
	// Endpoint replaces reconcile.remote.endpoint.
	Endpoint string
	// Timeout replaces reconcile.remote.timeout (a Go duration).
	Timeout string
	// AuthSecret replaces reconcile.remote.auth.secretRef; auth.header stays the Katalog's
	// (Authorization when it has no auth).
	AuthSecret *SecretKeyRef
}

// WithRemote is c with o applied to reconcile.remote, on copies: c is not changed. An
// empty o, or a CRD without reconcile.remote, returns c itself.
func (c *CRD) WithRemote(o RemoteOverride) *CRD {
	if o == (RemoteOverride{}) || c.OperatorBox.Reconcile.Remote == nil {
		return c
	}
	cp := *c
	rem := *c.OperatorBox.Reconcile.Remote
	if o.Endpoint != "" {
		rem.Endpoint = o.Endpoint
	}
	if o.Timeout != "" {
		rem.Timeout = o.Timeout
	}
	if o.AuthSecret != nil {
		auth := Auth{}
		if rem.Auth != nil {
			auth = *rem.Auth
		}
		ref := *o.AuthSecret
		auth.SecretRef = &ref
		rem.Auth = &auth
	}
	cp.OperatorBox.Reconcile.Remote = &rem
	return &cp
}

// WithRemotes is s with the overrides of the CRDs named in overrides applied, on copies: s,
// its CRDs and their files are not changed, so an override lasts for the run that asked for
// it. Names that are no CRD of s are ignored; callers check them.
func (s *Set) WithRemotes(overrides map[string]RemoteOverride) *Set {
	if len(overrides) == 0 {
		return s
	}
	cp := &Set{Files: s.Files, CRDs: make([]*CRD, len(s.CRDs))}
	for i, c := range s.CRDs {
		cp.CRDs[i] = c.WithRemote(overrides[c.Name])
	}
	return cp
}
