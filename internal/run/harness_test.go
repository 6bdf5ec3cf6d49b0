package run_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/katalog"
	"github.com/orkspace/ork/internal/reconcilertest"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/testenv"
	"github.com/orkspace/ork/internal/testkit"
	"github.com/orkspace/ork/internal/wireschema"
)

var env *testenv.Env

// wire checks every request ork sends against the published PreparedRequest schema.
var wire = sync.OnceValues(wireschema.New)

// bins builds ork and the example reconciler once per test binary; TestMain removes them.
var bins testkit.Binaries

func TestMain(m *testing.M) { os.Exit(bins.RemoveAfter(testenv.Main(m, &env))) }

const testToken = "s3cr3t-token-value"

// call is one request the loopback reconciler received, as internal/reconcilertest
// recorded it.
type call struct {
	// ctx ends when ork gives up on the request (its timeout) or the test ends.
	ctx    context.Context
	header http.Header
	body   map[string]any
	raw    []byte
	at     time.Time
	// rec is the full record: key, trigger, place in the order of arrival, start and end.
	rec reconcilertest.Call
}

func callOf(rc reconcilertest.Call) call {
	return call{ctx: rc.Ctx, header: rc.Header, body: rc.Body, raw: rc.Raw, at: rc.Start, rec: rc}
}

func (c call) trigger() string { return c.rec.Trigger }

func (c call) crName() string {
	o, _ := c.body["object"].(map[string]any)
	md, _ := o["metadata"].(map[string]any)
	s, _ := md["name"].(string)
	return s
}

// response is what the loopback reconciler answers.
type response struct {
	status int
	header map[string]string
	body   []byte
}

func jsonResponse(v any) response {
	b, _ := json.Marshal(v)
	return response{status: http.StatusOK, body: b}
}

// endpoint is internal/reconcilertest's scripted reconciler, every request checked against
// the published PreparedRequest schema, with the arrivals in order for tests that read
// them one by one (next, nextMatching). Its record of calls and of overlapping calls for
// one key is the embedded Endpoint's.
type endpoint struct {
	*reconcilertest.Endpoint
	srv     *httptest.Server
	arrived chan call
	// overflowed is set when a call found arrived full: a test that reads arrivals in order
	// would miss one, so next fails; a test that never reads them (the soak) is not blocked.
	overflowed atomic.Bool
	mu         sync.Mutex
	respond    func(call) response
}

func newEndpoint(t testing.TB, respond func(call) response) *endpoint {
	ep := &endpoint{arrived: make(chan call, 1000), respond: respond}
	ep.Endpoint = reconcilertest.NewEndpoint(t, func(rc reconcilertest.Call) reconcilertest.Response {
		c := callOf(rc)
		ep.mu.Lock()
		respond := ep.respond
		ep.mu.Unlock()
		select {
		case ep.arrived <- c:
		default:
			ep.overflowed.Store(true)
		}
		res := respond(c)
		return reconcilertest.Response{Status: res.status, Header: res.header, Body: res.body}
	}, reconcilertest.EndpointOptions{Check: checkPrepared})
	ep.srv = ep.Server()
	return ep
}

// checkPrepared checks a request ork sent against schema/prepared-request.schema.json.
func checkPrepared(raw []byte) error {
	v, err := wire()
	if err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	if err := v.ValidatePreparedRequest(raw); err != nil {
		return fmt.Errorf("ork sent a request that breaks schema/prepared-request.schema.json: %w", err)
	}
	return nil
}

// recorded is every call so far, in order of arrival.
func (ep *endpoint) recorded() []call {
	var out []call
	for _, rc := range ep.Calls() {
		out = append(out, callOf(rc))
	}
	return out
}

// checkOverflow fails the test when a request was dropped because too many were unread:
// a test reading them in order would miss it.
func (ep *endpoint) checkOverflow(t testing.TB) {
	t.Helper()
	if ep.overflowed.Load() {
		t.Fatalf("more than %d requests arrived unread: the order of arrivals is lost", cap(ep.arrived))
	}
}

func (ep *endpoint) setRespond(f func(call) response) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	ep.respond = f
}

// next waits for the next request (bounded: a reconcile takes milliseconds here, 30 s
// means ork never called).
func (ep *endpoint) next(t testing.TB) call {
	t.Helper()
	ep.checkOverflow(t)
	select {
	case c := <-ep.arrived:
		ep.checkOverflow(t) // a request dropped while this one was read
		return c
	case <-time.After(30 * time.Second):
		t.Fatal("no request reached the reconciler within 30s")
		return call{}
	}
}

// nextMatching skips requests until one satisfies ok.
func (ep *endpoint) nextMatching(t testing.TB, what string, ok func(call) bool) call {
	t.Helper()
	ep.checkOverflow(t)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case c := <-ep.arrived:
			ep.checkOverflow(t)
			if ok(c) {
				return c
			}
		case <-deadline:
			t.Fatalf("no request %s within 30s", what)
			return call{}
		}
	}
}

// fixture is one test's world: a CRD of its own (a unique group, so engines of parallel
// tests never see each other's objects), a namespace, a token Secret and a Katalog.
type fixture struct {
	t       testing.TB
	ns      string
	group   string
	gvr     schema.GroupVersionResource
	dyn     dynamic.Interface
	dir     string
	katalog string
	metrics *run.Metrics
	logs    *testkit.SyncBuffer
	engine  *run.Engine
	// cluster is true when the App CRD is cluster-scoped (CRs have no namespace).
	cluster bool
}

// crs is the client of the fixture's custom resources (namespaced or not).
func (f *fixture) crs() dynamic.ResourceInterface {
	if f.cluster {
		return f.dyn.Resource(f.gvr)
	}
	return f.dyn.Resource(f.gvr).Namespace(f.ns)
}

// remoteSpec is the part of the Katalog a test varies.
type remoteSpec struct {
	endpoint string
	// extra is YAML appended under reconcile.remote (indented by the caller to 12 spaces).
	extra string
	// managed lists "group/plural" entries; default apps/deployments and /services.
	managed []string
	header  string
	timeout string
	// payload is the YAML under remote.payload (12 spaces indented); default excludes
	// metadata.annotations and spec.secretNote from the object.
	payload string
	// crdFile replaces apiTypes with a crdFile (a path relative to the fixture's dir).
	crdFile string
	// secretNamespace is the auth secretRef's namespace; default the fixture's, "-" leaves
	// it out (ork's own namespace applies).
	secretNamespace string
	// resync is reconcile.resync; default none.
	resync string
}

func newFixture(t testing.TB) *fixture { return newFixtureID(t, t.Name()) }

// newFixtureWith is newFixture with a variant of the App CRD.
func newFixtureWith(t testing.TB, o crdOptions) *fixture { return newFixtureOpts(t, t.Name(), o) }

// newFixtureID is newFixture for several fixtures in one test or benchmark: id picks the
// CRD group.
func newFixtureID(t testing.TB, id string) *fixture { return newFixtureOpts(t, id, crdOptions{}) }

func newFixtureOpts(t testing.TB, id string, o crdOptions) *fixture {
	t.Helper()
	e := env.Require(t)
	// The id plus randomness: -count=N reruns get groups of their own too.
	salt := make([]byte, 8)
	_, _ = rand.Read(salt)
	sum := sha256.Sum256(append([]byte(id), salt...))
	group := "t" + hex.EncodeToString(sum[:5]) + ".ork.test"
	f := &fixture{
		t:       t,
		ns:      e.Namespace(t),
		group:   group,
		gvr:     schema.GroupVersionResource{Group: group, Version: "v1", Resource: "apps"},
		dir:     t.TempDir(),
		logs:    &testkit.SyncBuffer{},
		cluster: o.cluster,
	}
	var err error
	if f.dyn, err = dynamic.NewForConfig(e.Config); err != nil {
		t.Fatal(err)
	}
	env.InstallCRD(t, f.writeCRDWith("App", "apps", o))
	_, err = e.Clientset.CoreV1().Secrets(f.ns).Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "reconciler-token"},
		StringData: map[string]string{"token": testToken},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// installCRD installs a namespaced CRD of kind in the fixture's group, with a status
// subresource and free-form spec and status.
func (f *fixture) installCRD(kind, plural string) {
	f.t.Helper()
	env.InstallCRD(f.t, f.writeCRD(kind, plural))
}

// writeCRD writes the manifest installCRD installs and returns its path.
func (f *fixture) writeCRD(kind, plural string) string {
	return f.writeCRDWith(kind, plural, crdOptions{})
}

// crdOptions vary the test CRD; the zero value is namespaced with a free-form status
// subresource.
type crdOptions struct {
	cluster  bool
	noStatus bool
	// statusProps is YAML for status.properties (indented 18 spaces by the caller), making
	// the status schema strict about those fields.
	statusProps string
	// prunedStatus drops x-kubernetes-preserve-unknown-fields from a statusProps schema: the
	// apiserver prunes every other status key.
	prunedStatus bool
}

func (f *fixture) writeCRDWith(kind, plural string, o crdOptions) string {
	f.t.Helper()
	scope, subresources := "Namespaced", "\n      subresources: {status: {}}"
	if o.cluster {
		scope = "Cluster"
	}
	if o.noStatus {
		subresources = ""
	}
	status := "{type: object, x-kubernetes-preserve-unknown-fields: true}"
	if o.statusProps != "" {
		status = "\n              type: object\n              x-kubernetes-preserve-unknown-fields: true\n              properties:\n" + o.statusProps
	}
	if o.statusProps != "" && o.prunedStatus {
		status = "\n              type: object\n              properties:\n" + o.statusProps
	}
	manifest := fmt.Sprintf(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[2]s.%[3]s
spec:
  group: %[3]s
  scope: %[5]s
  names: {kind: %[1]s, plural: %[2]s, singular: %[4]s, listKind: %[1]sList}
  versions:
    - name: v1
      served: true
      storage: true%[6]s
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
            status: %[7]s
`, kind, plural, f.group, strings.ToLower(kind), scope, subresources, status)
	path := filepath.Join(f.dir, plural+"-crd.yaml")
	if err := os.WriteFile(path, []byte(manifest), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return path
}

// writeKatalog writes the Katalog for one remote CRD "app" and loads it.
// loadKatalog writes doc as the fixture's Katalog and loads it, failing on any finding.
func (f *fixture) loadKatalog(doc string) *katalog.Set {
	f.t.Helper()
	path := filepath.Join(f.dir, "katalog.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		f.t.Fatal(err)
	}
	set, findings, err := katalog.Load([]string{path})
	if err != nil || katalog.HasErrors(findings) {
		f.t.Fatalf("Katalog does not load: %v %+v", err, findings)
	}
	return set
}

func (f *fixture) writeKatalog(rs remoteSpec) *katalog.Set {
	f.t.Helper()
	managed := rs.managed
	if managed == nil {
		managed = []string{"apps/deployments", "/services"}
	}
	var mr strings.Builder
	for _, m := range managed {
		g, p, _ := strings.Cut(m, "/")
		fmt.Fprintf(&mr, "              - group: %q\n                plural: %s\n", g, p)
	}
	header := rs.header
	if header == "" {
		header = "Authorization"
	}
	timeout := rs.timeout
	if timeout == "" {
		timeout = "10s"
	}
	payload := rs.payload
	if payload == "" {
		payload = "              object:\n                exclude: [metadata.annotations, spec.secretNote]\n"
	}
	secretNS := ", namespace: " + f.ns
	switch rs.secretNamespace {
	case "-":
		secretNS = ""
	case "":
	default:
		secretNS = ", namespace: " + rs.secretNamespace
	}
	resync := ""
	if rs.resync != "" {
		resync = "\n          resync: " + rs.resync
	}
	types := fmt.Sprintf("apiTypes: {group: %s, version: v1, kind: App, plural: apps}", f.group)
	if f.cluster {
		types += "\n      namespaced: false"
	}
	if rs.crdFile != "" {
		types = fmt.Sprintf("crdFile: %q", rs.crdFile)
	}
	doc := fmt.Sprintf(`apiVersion: orkestra.orkspace.io/v1
kind: Katalog
metadata: {name: e2e}
spec:
  crds:
    app:
      %s
      operatorBox:
        reconcile:
          default: false
          workers: 2%s
          remote:
            endpoint: %q
            timeout: %s
            args:
              replicas: "{{ .spec.replicas }}"
              logLevel: "{{ .spec.logLevel }}"
            payload:
%s            managedResources:
%s            auth:
              secretRef: {name: reconciler-token%s, key: token}
              header: %q
%s`, types, resync, rs.endpoint, timeout, payload, mr.String(), secretNS, header, rs.extra)
	f.katalog = filepath.Join(f.dir, "katalog.yaml")
	if err := os.WriteFile(f.katalog, []byte(doc), 0o600); err != nil {
		f.t.Fatal(err)
	}
	set, findings, err := katalog.Load([]string{f.katalog})
	if err != nil || katalog.HasErrors(findings) {
		f.t.Fatalf("test Katalog does not load: %v %+v\n%s", err, findings, doc)
	}
	return set
}

// newEngine builds an engine for the fixture with test-sized backoff; cfg nil means the
// admin config.
func newEngine(t testing.TB, set *katalog.Set, cfg *rest.Config, f *fixture, tune ...func(*run.Options)) *run.Engine {
	t.Helper()
	if cfg == nil {
		cfg = env.Config
	}
	f.metrics = run.NewMetrics()
	opts := run.Options{
		RESTConfig:      rest.CopyConfig(cfg),
		Namespace:       f.ns,
		BackoffBase:     100 * time.Millisecond,
		BackoffMax:      5 * time.Second,
		ShutdownTimeout: 10 * time.Second,
		HealthAddr:      "127.0.0.1:0",
		MetricsAddr:     "127.0.0.1:0", // the same string: one listener serves all three paths
		Logger:          slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Metrics:         f.metrics,
	}
	for _, fn := range tune {
		fn(&opts)
	}
	eng, err := run.New(set, opts)
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// start runs the engine in-process until the test ends and waits until it is ready.
func (f *fixture) start(set *katalog.Set, cfg *rest.Config, tune ...func(*run.Options)) *run.Engine {
	f.t.Helper()
	eng := newEngine(f.t, set, cfg, f, tune...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	f.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			f.t.Errorf("engine stopped with error: %v", err)
		}
		if f.t.Failed() {
			f.t.Logf("ork logs:\n%s", f.logs.String())
		}
	})
	f.eventually("engine ready", func() (bool, error) {
		select {
		case err := <-done:
			done <- err
			return false, fmt.Errorf("engine exited early: %v", err)
		default:
		}
		return eng.Ready(), nil
	})
	f.engine = eng
	return eng
}

// eventually polls cond every 50ms for up to 30s: state in the apiserver converges within
// milliseconds, the bound only catches behaviour that never happens.
func (f *fixture) eventually(what string, cond func() (bool, error)) {
	f.t.Helper()
	f.eventuallyWithin(30*time.Second, what, cond)
}

// eventuallyWithin is eventually with a bound of its own, for work that grows with a flag
// (the soak's number of CRs).
func (f *fixture) eventuallyWithin(bound time.Duration, what string, cond func() (bool, error)) {
	f.t.Helper()
	testkit.Eventually(f.t, what, 50*time.Millisecond, bound, func(context.Context) (bool, error) {
		ok, err := cond()
		if err != nil && strings.HasPrefix(err.Error(), "engine exited") {
			return false, testkit.Permanent(err) // no wait brings an exited engine back
		}
		return ok, err
	})
}

func (f *fixture) createCR(name string, spec map[string]any) *unstructured.Unstructured {
	f.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": f.group + "/v1", "kind": "App",
		"metadata": map[string]any{"name": name, "annotations": map[string]any{"note": "excluded"}},
		"spec":     spec,
	}}
	out, err := f.crs().Create(f.t.Context(), u, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// patchSpec merge-patches the CR, as kubectl patch does: no resourceVersion to race with
// ork's own status writes.
func (f *fixture) patchSpec(name, patch string) {
	f.t.Helper()
	if _, err := f.crs().Patch(f.t.Context(), name, types.MergePatchType,
		[]byte(patch), metav1.PatchOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) getCR(name string) *unstructured.Unstructured {
	f.t.Helper()
	u, err := f.crs().Get(f.t.Context(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

// readyCondition returns the CR's Ready condition, or nil.
func readyCondition(u *unstructured.Unstructured) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Ready" {
			return m
		}
	}
	return nil
}

// waitReady waits until the CR's Ready condition has status want ("True"/"False") and
// returns the CR.
func (f *fixture) waitReady(name, want string) *unstructured.Unstructured {
	f.t.Helper()
	var cr *unstructured.Unstructured
	f.eventually("Ready="+want+" on "+name, func() (bool, error) {
		u, err := f.crs().Get(f.t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cr = u
		c := readyCondition(u)
		return c != nil && c["status"] == want, nil
	})
	return cr
}

func (f *fixture) get(gvr schema.GroupVersionResource, name string) (*unstructured.Unstructured, error) {
	return f.dyn.Resource(gvr).Namespace(f.ns).Get(f.t.Context(), name, metav1.GetOptions{})
}

func (f *fixture) mustNotExist(gvr schema.GroupVersionResource, name string) {
	f.t.Helper()
	if _, err := f.get(gvr, name); !apierrors.IsNotFound(err) {
		f.t.Fatalf("%s %s exists (err %v), want it absent", gvr.Resource, name, err)
	}
}

// events lists the Events recorded for the CR name.
func (f *fixture) events(name string) []corev1.Event {
	f.t.Helper()
	list, err := env.Clientset.CoreV1().Events(f.ns).List(f.t.Context(), metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + name,
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

func (f *fixture) waitEvent(name, eventType, reason string) corev1.Event {
	f.t.Helper()
	var found corev1.Event
	f.eventually(fmt.Sprintf("%s Event %s on %s", eventType, reason, name), func() (bool, error) {
		for _, ev := range f.events(name) {
			if ev.Type == eventType && ev.Reason == reason {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	return found
}

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	services    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	configmaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// okWithChildren is the everyday answer: a Deployment and a Service named after the CR.
func okWithChildren(c call) response {
	name := c.crName()
	return jsonResponse(map[string]any{
		"result": "ok",
		"status": map[string]any{"phase": "Ready", "seenTrigger": c.trigger()},
		"resources": []any{
			map[string]any{"type": "deployment", "fields": map[string]any{"name": name, "image": "nginx:1.27", "replicas": 2, "port": 8080}},
			map[string]any{"type": "service", "fields": map[string]any{"name": name + "-svc", "port": 80, "targetPort": 8080}},
		},
	})
}

var (
	createOpts = metav1.CreateOptions{}
	getOpts    = metav1.GetOptions{}
)

// objectOf is a bare custom resource with an empty spec.
func objectOf(apiVersion, kind, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind, "metadata": map[string]any{"name": name}, "spec": map[string]any{},
	}}
}
