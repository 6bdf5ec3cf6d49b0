package shardring

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/watchlist"

	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/shard"
	"github.com/orkspace/ork/internal/testkit"
)

// slotBackend is a child collection served as an apiserver would, by label selector: a
// list at its resourceVersion, a watch from one (no event unless sent), and a watch that
// fails with 429 while failWatches > 0.
type slotBackend struct {
	mu          sync.Mutex
	rv          int
	objs        []*metav1.PartialObjectMetadata
	failWatches int
}

func (b *slotBackend) List(_ context.Context, o metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sel, err := labels.Parse(o.LabelSelector)
	if err != nil {
		return nil, err
	}
	l := &metav1.PartialObjectMetadataList{}
	l.ResourceVersion = strconv.Itoa(b.rv)
	for _, obj := range b.objs {
		if sel.Matches(labels.Set(obj.Labels)) {
			l.Items = append(l.Items, *obj.DeepCopy())
		}
	}
	return l, nil
}

func (b *slotBackend) Watch(context.Context, metav1.ListOptions) (watch.Interface, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failWatches > 0 {
		b.failWatches--
		return nil, apierrors.NewTooManyRequests("slow down", 0)
	}
	return watch.NewFake(), nil
}

// hold starts the next holding of s, as holdingChanged does, without its metrics and
// labelling.
func hold(s *Ring, held ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.hold.changed)
	s.hold = holding{sel: shard.Selector(held, s.buckets), held: held, gen: s.hold.gen + 1, changed: make(chan struct{})}
}

func slotChild(name, slot string, rv int) *metav1.PartialObjectMetadata {
	o := &metav1.PartialObjectMetadata{}
	o.Namespace, o.Name, o.UID, o.ResourceVersion = "ns", name, types.UID("u-"+name), strconv.Itoa(rv)
	o.Labels = map[string]string{naming.SlotLabel: slot}
	return o
}

// A real client-go informer over a sharded child cache: a change of the held buckets
// reaches its store without the informer listing again (which would wait the reflector's
// back-off), the released slot's child removed and the newly held one's added; and when
// the watch after the catch-up's list fails (429), the next watch catches up again
// instead of watching the new slots without their children.
func TestAHoldingChangeReachesARealInformerWithoutARelist(t *testing.T) {
	for _, failWatches := range []int{0, 1} {
		t.Run(fmt.Sprintf("failed watches %d", failWatches), func(t *testing.T) {
			s := newRing("ns", "op", 2, Metrics{}, slog.New(slog.DiscardHandler))
			hold(s, 0)
			backend := &slotBackend{rv: 10, objs: []*metav1.PartialObjectMetadata{slotChild("a", "00", 5), slotChild("b", "80", 6)}}
			sel := slotSelected[*metav1.PartialObjectMetadataList]{next: backend, s: s, key: "k",
				blank: func() runtime.Object { return &metav1.PartialObjectMetadata{} }}
			var lists atomic.Int32
			lw := &cache.ListWatch{
				ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
					lists.Add(1)
					return sel.List(ctx, o)
				},
				WatchFuncWithContext: sel.Watch,
			}
			inf := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, shardedMetadata{}),
				&metav1.PartialObjectMetadata{}, 0, cache.Indexers{})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			go inf.RunWithContext(ctx)
			if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
				t.Fatal("the informer never synced")
			}
			if got := inf.GetStore().ListKeys(); !slices.Equal(got, []string{"ns/a"}) {
				t.Fatalf("holding bucket 0: store %v, want [ns/a]", got)
			}
			backend.mu.Lock()
			backend.failWatches = failWatches
			backend.mu.Unlock()
			hold(s, 1)
			// The reflector watches again at once; a failed watch waits its back-off
			// (0.8–1.6 s the first time). 10 s is slack for a loaded machine.
			testkit.Eventually(t, "the store to hold bucket 1's child only", 20*time.Millisecond, 10*time.Second, func(context.Context) (bool, error) {
				if got := inf.GetStore().ListKeys(); !slices.Equal(got, []string{"ns/b"}) {
					return false, fmt.Errorf("store %v", got)
				}
				return true, nil
			})
			if n := lists.Load(); n != 1 {
				t.Errorf("the informer listed %d times: want once, the change caught up in the watch", n)
			}
		})
	}
}

// The sharded caches' informers never use the streamed list (watch-list): a holding change
// is caught up by a watch that continues a list, and a streamed list has none.
func TestShardedCachesOptOutOfTheStreamedList(t *testing.T) {
	for name, client := range map[string]any{"CR cache": noWatchList{}, "dynamic children": shardedDynamic{}, "metadata children": shardedMetadata{}} {
		if !watchlist.DoesClientNotSupportWatchListSemantics(client) {
			t.Errorf("%s: the informer would use the streamed list", name)
		}
	}
}
