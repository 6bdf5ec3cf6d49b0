package run_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/orkspace/ork/internal/related"
	"github.com/orkspace/ork/internal/run"
	"github.com/orkspace/ork/internal/run/runtest"
)

// A selector entry matching more objects than are sent: the request carries the first
// related.MaxSelected, the CR gets the RelatedObjectsTruncated condition naming the entry
// (and a Warning Event), and the condition goes once the matches fit again.
func TestRelatedSelectorPastTheCapSetsACondition(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := runtest.NewEndpoint(t, func(call) response { return runtest.JSONResponse(map[string]any{"result": "ok"}) })
	set := f.WriteKatalog(runtest.RemoteSpec{Endpoint: ep.URL(), Payload: `              related:
                - {as: members, kind: ConfigMap, selector: {matchLabels: {team: blue}}}
`})
	cms := env.Clientset.CoreV1().ConfigMaps(f.NS)
	for i := range related.MaxSelected + 1 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("m-%03d", i), Labels: map[string]string{"team": "blue"}}}
		if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.Start(set, nil, func(o *run.Options) { o.ChildMinInterval = 100 * time.Millisecond })
	f.CreateCR("web", map[string]any{})
	first := ep.NextMatching(t, "a call for web", func(c call) bool { return c.CRName() == "web" })
	if rel, _ := relatedOf(t, first); len(rel["members"]) != related.MaxSelected {
		t.Errorf("web's request carries %d members, want the first %d", len(rel["members"]), related.MaxSelected)
	}
	var cond map[string]any
	f.Eventually("the RelatedObjectsTruncated condition", func() (bool, error) {
		cond = condition(f.GetCR("web"), run.ConditionRelatedTruncated)
		return cond != nil, nil
	})
	if cond["status"] != "True" || cond["reason"] != run.EventTooManyRelated || !strings.Contains(fmt.Sprint(cond["message"]), "payload.related members") {
		t.Errorf("condition %v, want True, reason %s, naming the entry members", cond, run.EventTooManyRelated)
	}
	if c := runtest.ReadyCondition(f.GetCR("web")); c["status"] != "True" {
		t.Errorf("Ready = %v, want True: a cut list is sent, the reconciler decides", c)
	}
	f.WaitEvent("web", "Warning", run.EventTooManyRelated)

	// One fewer match: the next pass reads them all and the condition goes.
	if err := cms.Delete(t.Context(), "m-000", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.Eventually("the condition to go", func() (bool, error) {
		return condition(f.GetCR("web"), run.ConditionRelatedTruncated) == nil, nil
	})
}
