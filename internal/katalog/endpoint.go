package katalog

// WithEndpoint is c with reconcile.remote.endpoint replaced, on copies: c is not changed.
// An empty endpoint, or a CRD without reconcile.remote, returns c itself.
func (c *CRD) WithEndpoint(endpoint string) *CRD {
	if endpoint == "" || c.OperatorBox.Reconcile.Remote == nil {
		return c
	}
	cp := *c
	rem := *c.OperatorBox.Reconcile.Remote
	rem.Endpoint = endpoint
	cp.OperatorBox.Reconcile.Remote = &rem
	return &cp
}

// WithEndpoints is s with the endpoints of the CRDs named in endpoints (CRD name -> URL)
// replaced, on copies: s, its CRDs and their files are not changed, so an override lasts
// for the run that asked for it. Names that are no CRD of s are ignored; callers check them.
func (s *Set) WithEndpoints(endpoints map[string]string) *Set {
	if len(endpoints) == 0 {
		return s
	}
	cp := &Set{Files: s.Files, CRDs: make([]*CRD, len(s.CRDs))}
	for i, c := range s.CRDs {
		cp.CRDs[i] = c.WithEndpoint(endpoints[c.Name])
	}
	return cp
}
