// Package finalizer adds and removes ork's finalizer on custom resources without ever
// dropping another controller's: custom resources have no strategic merge, so each write is
// a merge patch of the whole list that carries the uid and resourceVersion it was computed
// on, computed again on a fresh read when the object changed meanwhile.
package finalizer

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/precondition"
)

// Name is naming.Finalizer, ork's finalizer (reconcile.remote.finalize), kept here for the
// engine (internal/run).
const Name = naming.Finalizer

// attempts bounds the re-read and retry of one write whose precondition failed.
const attempts = 5

// Options tune a write.
type Options struct {
	// FieldManager names the writer; default none (the apiserver's default).
	FieldManager string
	// DryRun are the DryRun values each write is sent with (metav1.DryRunAll: a server-side
	// dry run); default none.
	DryRun []string
	// BeforeWrite, when set, is called before each write; its error stops the write (ork
	// run's leader guard). Default nil.
	BeforeWrite func() error
}

// Has reports whether obj carries ork's finalizer.
func Has(obj metav1.Object) bool { return slices.Contains(obj.GetFinalizers(), Name) }

// Set puts ork's finalizer on obj (present) or takes it off, through client (the resource
// interface of obj's type and namespace). It returns the object as the write left it, obj
// itself when there was nothing to do, or nil when obj is gone or was replaced by another
// object of the same name. An add to an object found being deleted is not sent (the
// apiserver forbids new finalizers then): the object is returned as read, without ork's
// finalizer, for the caller to see the delete.
func Set(ctx context.Context, client dynamic.ResourceInterface, obj *unstructured.Unstructured, present bool, opts Options) (*unstructured.Unstructured, error) {
	return SetNamed(ctx, client, obj, Name, present, opts)
}

// SetNamed is Set for another finalizer of ork's, name (naming.TargetCleanupFinalizer).
func SetNamed(ctx context.Context, client dynamic.ResourceInterface, obj *unstructured.Unstructured, name string, present bool, opts Options) (*unstructured.Unstructured, error) {
	cur := obj
	for range attempts {
		if slices.Contains(cur.GetFinalizers(), name) == present || (present && cur.GetDeletionTimestamp() != nil) {
			return cur, nil
		}
		if opts.BeforeWrite != nil {
			if err := opts.BeforeWrite(); err != nil {
				return nil, err
			}
		}
		out, err := client.Patch(ctx, cur.GetName(), types.MergePatchType, patch(cur, name, present), patchOptions(opts))
		if err == nil {
			return out, nil
		}
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if !precondition.Failed(err) {
			return nil, fmt.Errorf("%s finalizer %s: %w", verb(present), name, err)
		}
		// Someone wrote the object since it was read: read it again, never drop what they
		// added.
		fresh, err := client.Get(ctx, cur.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", cur.GetName(), err)
		}
		if fresh.GetUID() != obj.GetUID() {
			return nil, nil
		}
		cur = fresh
	}
	return nil, fmt.Errorf("%s finalizer %s: the object changed under %d writes in a row", verb(present), name, attempts)
}

// patch is the merge patch that sets the whole finalizer list, preconditioned on obj's uid
// and resourceVersion.
func patch(obj *unstructured.Unstructured, name string, present bool) []byte {
	var list []string
	for _, f := range obj.GetFinalizers() {
		if f != name {
			list = append(list, f)
		}
	}
	if present {
		list = append(list, name)
	}
	md := map[string]any{"uid": string(obj.GetUID()), "resourceVersion": obj.GetResourceVersion(), "finalizers": list}
	if list == nil {
		md["finalizers"] = nil // a merge patch removes the key
	}
	b, _ := json.Marshal(map[string]any{"metadata": md}) // strings only: cannot fail
	return b
}

func patchOptions(opts Options) metav1.PatchOptions {
	return metav1.PatchOptions{FieldManager: opts.FieldManager, DryRun: opts.DryRun}
}

func verb(present bool) string {
	if present {
		return "add"
	}
	return "remove"
}
