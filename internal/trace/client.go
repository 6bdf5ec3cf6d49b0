package trace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client fetches decisions from an ork serving Handler.
type Client struct {
	// Base is the server's URL, "http://127.0.0.1:8080"; a bare host:port means http.
	Base string
	// HTTP makes the requests; default http.DefaultClient.
	HTTP *http.Client
}

// ErrNotFound: the server has no decisions for the object.
var ErrNotFound = errors.New("no decisions")

// AmbiguousError: objects of several CRDs have the namespace and name asked for.
type AmbiguousError struct {
	Namespace, Name string
	CRDs            []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%s is an object of %d CRDs (%s): name the CRD", nsName(e.Namespace, e.Name), len(e.CRDs), strings.Join(e.CRDs, ", "))
}

func nsName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// List fetches the listing.
func (c Client) List(ctx context.Context) ([]Summary, error) {
	var l Listing
	if err := c.get(ctx, Prefix, &l); err != nil {
		return nil, err
	}
	return l.Objects, nil
}

// Get fetches one object's decisions; ErrNotFound when the server has none.
func (c Client) Get(ctx context.Context, k Key) (ObjectTrace, error) {
	p := Prefix + url.PathEscape(k.CRD) + "/"
	if k.Namespace != "" {
		p += url.PathEscape(k.Namespace) + "/"
	}
	var t ObjectTrace
	err := c.get(ctx, p+url.PathEscape(k.Name), &t)
	return t, err
}

// Find is Get for an object whose CRD may be empty: the listing then tells which CRD has
// an object of that namespace and name (ErrNotFound for none, *AmbiguousError for several).
func (c Client) Find(ctx context.Context, k Key) (ObjectTrace, error) {
	if k.CRD != "" {
		return c.Get(ctx, k)
	}
	objs, err := c.List(ctx)
	if err != nil {
		return ObjectTrace{}, err
	}
	var crds []string
	for _, o := range objs {
		if o.Namespace == k.Namespace && o.Name == k.Name {
			crds = append(crds, o.CRD)
		}
	}
	switch len(crds) {
	case 0:
		return ObjectTrace{}, fmt.Errorf("%s: %w", nsName(k.Namespace, k.Name), ErrNotFound)
	case 1:
		k.CRD = crds[0]
		return c.Get(ctx, k)
	}
	return ObjectTrace{}, &AmbiguousError{Namespace: k.Namespace, Name: k.Name, CRDs: crds}
}

func (c Client) get(ctx context.Context, path string, into any) error {
	base := c.Base
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	u := strings.TrimSuffix(base, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("decisions: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, unwrapURL(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		var e apiError
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return fmt.Errorf("%s: %w", strings.TrimPrefix(e.Error, "no decisions for "), ErrNotFound)
		}
		return fmt.Errorf("GET %s: HTTP 404 (does this ork serve decisions? it needs --debug-decisions): %w", u, ErrNotFound)
	default:
		return fmt.Errorf("GET %s: HTTP %s", u, resp.Status)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("GET %s: not a decision trace: %w", u, err)
	}
	return nil
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
