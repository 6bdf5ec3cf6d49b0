package targetpass

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/orkspace/ork/internal/run/childwrite"
	"github.com/orkspace/ork/internal/run/crstatus"
	"github.com/orkspace/ork/internal/run/spokes"
	"github.com/orkspace/ork/internal/target"
)

// The status key the engine records a CR's targets under is the one the status patch keeps
// an answer from writing (crstatus may not import target).
func TestTheTargetsRecordIsOneKey(t *testing.T) {
	if crstatus.TargetsField != target.StatusField {
		t.Errorf("crstatus.TargetsField %q, target.StatusField %q", crstatus.TargetsField, target.StatusField)
	}
}

// deadKubeconfig is a kubeconfig whose server is a local port nothing listens on.
func deadKubeconfig(t *testing.T) []byte {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["dead"] = &clientcmdapi.Cluster{Server: "https://" + addr, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["dead"] = &clientcmdapi.AuthInfo{Token: "t"}
	cfg.Contexts["dead"] = &clientcmdapi.Context{Cluster: "dead", AuthInfo: "dead"}
	cfg.CurrentContext = "dead"
	out, err := clientcmd.Write(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A cluster a CR left that does not answer keeps its breaker, which says when to try again,
// but no client: the pool would keep one, and probe the cluster, for as long as ork runs,
// even once the CR is gone or its record's entry removed by hand.
func TestALeftTargetThatDoesNotAnswerKeepsNoClient(t *testing.T) {
	kubeconfig := deadKubeconfig(t)
	pool, err := target.NewPool(target.Options{Secrets: func(_ context.Context, ns, name string) (*corev1.Secret, error) {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "1"},
			Data: map[string][]byte{"kubeconfig": kubeconfig}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var uses spokes.Uses
	tp := New(Deps{Set: spokes.New(nil, &uses), Pool: pool, Uses: &uses,
		Kinds: []ChildType{{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}}},
		Writer: childwrite.Deps{CRD: "app", Log: slog.New(slog.DiscardHandler), NotLeader: errors.New("not the leader"),
			MayWrite: func(string, types.UID) error { return nil }},
	})
	cr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "t.ork.test/v1", "kind": "App"}}
	cr.SetNamespace("ns")
	cr.SetName("a")
	cr.SetUID("uid-a")
	ref := target.Ref{Namespace: "ns", Name: "spoke", Key: "kubeconfig"}

	_, down, err := tp.sweep(t.Context(), cr, ref, nil)
	if err != nil || down == "" {
		t.Fatalf("sweep of a dead cluster = down %q, err %v; want down", down, err)
	}
	if got := pool.Targets(); len(got) != 0 {
		t.Errorf("the pool's clients after a failed sweep = %v, want none", got)
	}
	if st := pool.StateOf(ref); st.Reachable || st.RetryAt.IsZero() {
		t.Errorf("the breaker after a failed sweep = %+v, want unreachable with a retry time", st)
	}
}
