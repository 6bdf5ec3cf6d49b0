package run_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/orkspace/ork/internal/resources"
	"github.com/orkspace/ork/internal/run"
)

// benchCRs is the batch size of one benchmark iteration.
const benchCRs = 40

// BenchmarkReconcileThroughput measures ork converging a batch of CRs (POST, two server-side
// applies, a status patch each) against a raw client-go loop doing the same writes with the
// same parallelism and rate limits, in the same run. It reports both and their ratio:
// ork's overhead over the apiserver's own cost.
//
//	go test ./internal/run -run '^$' -bench ReconcileThroughput -benchtime 3x
func BenchmarkReconcileThroughput(b *testing.B) {
	var orkTotal, rawTotal time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// Separate groups: the ork engine must not also see the baseline's CRs.
		raw := newFixtureID(b, fmt.Sprintf("%s-raw-%d", b.Name(), i))
		ork := benchFixture{fixture: newFixtureID(b, fmt.Sprintf("%s-ork-%d", b.Name(), i)), ep: newEndpoint(b, okWithChildren)}
		b.StartTimer()
		rawTotal += benchFixture{fixture: raw}.rawBaseline(b)
		orkTotal += ork.orkRun(b)
	}
	b.ReportMetric(float64(orkTotal.Milliseconds())/float64(b.N), "ork-ms/batch")
	b.ReportMetric(float64(rawTotal.Milliseconds())/float64(b.N), "raw-ms/batch")
	b.ReportMetric(orkTotal.Seconds()/rawTotal.Seconds(), "ork/raw")
	b.ReportMetric(float64(benchCRs*b.N)/orkTotal.Seconds(), "ork-CRs/s")
}

type benchFixture struct {
	*fixture
	ep *endpoint
}

// rawBaseline creates the CRs and, with 4 goroutines (ork's default workers), applies the
// same two children and writes the same status with a plain dynamic client.
func (f benchFixture) rawBaseline(b *testing.B) time.Duration {
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = run.DefaultQPS, run.DefaultBurst
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	names := make(chan string, benchCRs)
	for i := range benchCRs {
		name := fmt.Sprintf("raw-%d", i)
		f.createCR(name, map[string]any{"replicas": 1})
		names <- name
	}
	close(names)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for name := range names {
				if err := rawReconcile(context.Background(), dyn, f.fixture, name); err != nil {
					b.Error(err)
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

func rawReconcile(ctx context.Context, dyn dynamic.Interface, f *fixture, name string) error {
	opts := resources.OptionsFor(f.ns, name)
	for _, e := range []struct {
		typ    string
		fields map[string]any
	}{
		{"deployment", map[string]any{"name": name, "image": "nginx:1.27", "replicas": 2, "port": 8080}},
		{"service", map[string]any{"name": name + "-svc", "port": 80, "targetPort": 8080}},
	} {
		o, err := resources.BuildIntent(e.typ, e.fields, opts)
		if err != nil {
			return err
		}
		gvr := deployments
		if e.typ == "service" {
			gvr = services
		}
		if _, err := dyn.Resource(gvr).Namespace(f.ns).Apply(ctx, o.Obj.GetName(), o.Obj,
			metav1.ApplyOptions{FieldManager: "raw", Force: true}); err != nil {
			return err
		}
	}
	patch := []byte(`{"status":{"phase":"Ready","conditions":[{"type":"Ready","status":"True","reason":"ReconcileSucceeded","message":"reconciled","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
	_, err := dyn.Resource(f.gvr).Namespace(f.ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	return err
}

// orkRun starts ork, creates the CRs and waits until every one is Ready.
func (f benchFixture) orkRun(b *testing.B) time.Duration {
	f.start(f.writeKatalog(remoteSpec{endpoint: f.ep.srv.URL}), nil)
	start := time.Now()
	for i := range benchCRs {
		f.createCR(fmt.Sprintf("ork-%d", i), map[string]any{"replicas": 1})
	}
	f.eventually("every CR Ready", func() (bool, error) {
		list, err := f.dyn.Resource(f.gvr).Namespace(f.ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, u := range list.Items {
			if c := readyCondition(&u); c != nil && c["status"] == "True" && len(u.GetName()) > 4 && u.GetName()[:4] == "ork-" {
				ready++
			}
		}
		return ready == benchCRs, nil
	})
	return time.Since(start)
}
