package shardrun_test

import (
	"bytes"
	"encoding/json"
	"net"
	"os/exec"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/trace"
)

// hostIP is an address of this machine the apiserver's pod proxy accepts (a global unicast
// one: it refuses loopback), on which a replica can serve its metrics as a pod would.
func hostIP(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.String()
		}
	}
	t.Skip("this machine has no global unicast IPv4 address for the pod proxy to dial")
	return ""
}

// freePortOn is a free TCP port on ip.
func freePortOn(t *testing.T, ip string) string {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// runsAsPod makes the Pod object a replica would run as, with ip as its address: the
// apiserver's pod proxy dials status.podIP.
func (f *fixture) runsAsPod(pod, ip string) {
	f.t.Helper()
	ctx := f.t.Context()
	pods := env.Clientset.CoreV1().Pods(f.ns)
	// No controller-manager creates the namespace's default ServiceAccount, which the
	// ServiceAccount admission plugin wants to find.
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	if _, err := env.Clientset.CoreV1().ServiceAccounts(f.ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		f.t.Fatal(err)
	}
	p, err := pods.Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: pod},
		Spec: corev1.PodSpec{AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{Name: "ork", Image: "ork"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	p.Status.Phase = corev1.PodRunning
	p.Status.PodIP, p.Status.PodIPs = ip, []corev1.PodIP{{IP: ip}}
	if _, err := pods.UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

// ork trace --holder finds the replica whose bucket Lease covers a custom resource's uid
// and reads that replica's decisions through the apiserver's pod proxy, with no
// port-forward: the trace it prints is the object's, from the pod the Lease names.
func TestTraceFindsTheHolderThroughTheBucketLease(t *testing.T) {
	t.Parallel()
	ip := hostIP(t)
	f := newFixture(t)
	port := freePortOn(t, ip)
	const pod = "trace-a"
	f.runsAsPod(pod, ip)
	f.sharded(pod, 4, "--debug-decisions", "--metrics-addr="+net.JoinHostPort(ip, port))
	want := map[string]string{}
	for _, w := range f.create(3, "1") {
		want[w.GetName()] = "1"
	}
	f.waitConverged("the widgets converge", 4*leaseDuration+slack, want)

	var stdout, stderr bytes.Buffer
	// --addr's host is not used with --holder: only its port, the replicas' metrics port.
	cmd := exec.CommandContext(t.Context(), f.bin, "trace", "widget", f.ns+"/w-001", "--holder", "-f", f.katalog,
		"--kubeconfig", env.Kubeconfig, "--namespace", f.ns, "--name", naming.DefaultOperator,
		"--addr", net.JoinHostPort("127.0.0.1", port), "-o", "json")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ork trace --holder: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "held by pod "+pod) {
		t.Errorf("stderr %q does not name the holder pod %s", stderr.String(), pod)
	}
	var got trace.ObjectTrace
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("not a trace: %v\n%s", err, stdout.String())
	}
	if got.CRD != "widget" || got.Namespace != f.ns || got.Name != "w-001" || len(got.Decisions) == 0 {
		t.Errorf("trace of %s/%s %s with %d decisions, want widget %s/w-001 with at least one", got.Namespace, got.Name, got.CRD, len(got.Decisions), f.ns)
	}

	// A name no custom resource has is an answer, not a hang.
	miss := exec.CommandContext(t.Context(), f.bin, "trace", "widget", f.ns+"/nope", "--holder", "-f", f.katalog,
		"--kubeconfig", env.Kubeconfig, "--namespace", f.ns, "--name", naming.DefaultOperator, "--addr", ":"+port)
	out, err := miss.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "no custom resource of that name") {
		t.Errorf("ork trace --holder of a missing object: %v, want exit 1 saying so\n%s", err, out)
	}
}
