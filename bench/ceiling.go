package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/orkspace/ork/internal/metacreate"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/resources"
)

// The two ceilings, plain client-go programs fed each CR's name as soon as the harness
// created it, with no informer, no webhook and no client-side rate limit:
//
//   - (a), writes only: a server-side apply of each child and one status patch, every answer
//     asked for as metadata only (PartialObjectMetadata). The apiserver's own limit for the
//     workload's writes; run at two worker counts, the faster is the ceiling targets are
//     stated against.
//   - (b), ork's requests: what ork sends for a new CR today (bench/requests.go lists them):
//     a conditional create (POST) of each child and one status patch, both answered as
//     metadata (the create through ork's own metacreate.Creator), and the Event. Beside (a), it shows what ork's kinds of request cost.
const (
	ceilingA = "a"
	ceilingB = "b"
)

// readyStatus is the status patch the ceilings and the controller-runtime operator write:
// what ork writes for the reconciler's answer.
var readyStatus = []byte(`{"status":{"phase":"Ready","observedGeneration":1,"conditions":[{"type":"Ready","status":"True","reason":"ReconcileSucceeded","message":"reconciled","observedGeneration":1,"lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)

// ceilingClients are the clients a ceiling writes with.
type ceilingClients struct {
	dyn     dynamic.Interface
	meta    metadata.Interface
	creator *metacreate.Creator
	kube    kubernetes.Interface
	ns      string
	w       workload
}

// runCeiling reads the CRs from in and writes for each; it answers /readyz on healthAddr
// once its connection to the apiserver is up, so that, like the systems that wait for their
// informers, it starts measured with a warm connection.
func runCeiling(ctx context.Context, kubeconfig, namespace, kind string, workers int, w workload, healthAddr string, in io.Reader) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS = -1 // the apiserver's limit, never a client-side one
	cc := ceilingClients{ns: namespace, w: w}
	if cc.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return err
	}
	if cc.meta, err = metadata.NewForConfig(cfg); err != nil {
		return err
	}
	if cc.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if cc.creator, err = metacreate.New(cfg); err != nil {
		return err
	}
	if err := cc.warmUp(ctx); err != nil {
		return fmt.Errorf("warm up: %w", err)
	}
	srv, err := serveReady(healthAddr)
	if err != nil {
		return err
	}
	defer srv.Close()
	write := cc.writesA
	if kind == ceilingB {
		write = cc.writesB
	}
	crs := make(chan createdCR, 1024)
	go func() {
		defer close(crs)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) == 3 {
				crs <- createdCR{plural: f[0], name: f[1], uid: types.UID(f[2])}
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for cr := range crs {
				if err := write(ctx, cr); err != nil {
					errs <- fmt.Errorf("%s/%s: %w", cr.plural, cr.name, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// warmUp reads each type the ceiling writes once, as the other systems' informers list them
// before they are ready: it opens the connection every client here shares (client-go shares
// a transport between configs alike), and the apiserver has served each type before the
// first create is timed.
func (cc ceilingClients) warmUp(ctx context.Context) error {
	var gvrs []schema.GroupVersionResource
	for _, k := range cc.w.kinds {
		gvrs = append(gvrs, crGVR(k.plural))
	}
	for _, m := range cc.w.managed() {
		gvrs = append(gvrs, schema.GroupVersionResource{Group: m.group, Version: "v1", Resource: m.plural})
	}
	for _, gvr := range gvrs {
		if _, err := cc.meta.Resource(gvr).Namespace(cc.ns).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
			return fmt.Errorf("list %s: %w", gvr.Resource, err)
		}
	}
	return nil
}

func serveReady(addr string) (*http.Server, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	return srv, nil
}

// children are the objects ork writes for cr: the workload's answer built, with ork's labels,
// its controller reference to cr and the applied digest.
func (cc ceilingClients) children(cr createdCR) ([]*unstructured.Unstructured, []schema.GroupVersionResource, error) {
	var objs []*unstructured.Unstructured
	var gvrs []schema.GroupVersionResource
	kind := cc.w.kindNamed(cr.plural)
	for _, raw := range cc.w.answer(cr.name)["resources"].([]any) {
		o, err := resources.Build(raw.(map[string]any), resources.OptionsFor(cc.ns, cr.name))
		if err != nil {
			return nil, nil, err
		}
		obj := o.Obj
		obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: benchGroup + "/v1", Kind: kind.kind, Name: cr.name,
			UID: cr.uid, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
		labels := obj.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[naming.ManagedByLabel] = naming.ManagedBy
		labels[naming.OperatorLabel] = "ork"
		obj.SetLabels(labels)
		resources.MarkApplied(obj)
		objs, gvrs = append(objs, obj), append(gvrs, o.Type.GVR())
	}
	return objs, gvrs, nil
}

// writesA: a server-side apply of each child, then the status patch, answers as metadata.
func (cc ceilingClients) writesA(ctx context.Context, cr createdCR) error {
	objs, gvrs, err := cc.children(cr)
	if err != nil {
		return err
	}
	for i, obj := range objs {
		body, err := json.Marshal(obj.Object)
		if err != nil {
			return err
		}
		if _, err := cc.meta.Resource(gvrs[i]).Namespace(cc.ns).Patch(ctx, obj.GetName(), types.ApplyPatchType, body,
			metav1.PatchOptions{FieldManager: "ceiling", Force: ptr.To(true)}); err != nil {
			return fmt.Errorf("apply %s/%s: %w", gvrs[i].Resource, obj.GetName(), err)
		}
	}
	return cc.status(ctx, cr)
}

// writesB: ork's requests for a new CR: a create of each child and the status patch, both
// answered as metadata as ork's are, and the Reconciled Event.
func (cc ceilingClients) writesB(ctx context.Context, cr createdCR) error {
	objs, gvrs, err := cc.children(cr)
	if err != nil {
		return err
	}
	for i, obj := range objs {
		if _, err := cc.creator.Create(ctx, gvrs[i], cc.ns, obj, metav1.CreateOptions{FieldManager: "ceiling"}); err != nil {
			return fmt.Errorf("create %s/%s: %w", gvrs[i].Resource, obj.GetName(), err)
		}
	}
	if err := cc.status(ctx, cr); err != nil {
		return err
	}
	return cc.event(ctx, cr)
}

func (cc ceilingClients) status(ctx context.Context, cr createdCR) error {
	_, err := cc.meta.Resource(crGVR(cr.plural)).Namespace(cc.ns).Patch(ctx, cr.name, types.MergePatchType, readyStatus,
		metav1.PatchOptions{FieldManager: "ceiling"}, "status")
	return err
}

// event is the Reconciled Event ork records when a CR turns Ready
// (docs/remote-reconciler.md#the-answer-remotereconcileresult).
func (cc ceilingClients) event(ctx context.Context, cr createdCR) error {
	kind := cc.w.kindNamed(cr.plural).kind
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", cr.name, now.UnixNano()), Namespace: cc.ns},
		InvolvedObject: corev1.ObjectReference{APIVersion: benchGroup + "/v1", Kind: kind, Name: cr.name,
			Namespace: cc.ns, UID: cr.uid},
		Reason: "Reconciled", Message: "reconciled generation 1, Ready, 2 created", Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "ork"}, FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	_, err := cc.kube.CoreV1().Events(cc.ns).Create(ctx, ev, metav1.CreateOptions{})
	return err
}
