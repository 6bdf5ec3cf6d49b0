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
)

// A selector entry matching more objects than are sent: the request carries the first
// related.MaxSelected, the CR gets the RelatedObjectsTruncated condition naming the entry
// (and a Warning Event), and the condition goes once the matches fit again.
func TestRelatedSelectorPastTheCapSetsACondition(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ep := newEndpoint(t, func(call) response { return jsonResponse(map[string]any{"result": "ok"}) })
	set := f.writeKatalog(remoteSpec{endpoint: ep.srv.URL, payload: `              related:
                - {as: members, kind: ConfigMap, selector: {matchLabels: {team: blue}}}
`})
	cms := env.Clientset.CoreV1().ConfigMaps(f.ns)
	for i := range related.MaxSelected + 1 {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("m-%03d", i), Labels: map[string]string{"team": "blue"}}}
		if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	f.start(set, nil, func(o *run.Options) { o.ChildMinInterval = 100 * time.Millisecond })
	f.createCR("web", map[string]any{})
	first := ep.nextMatching(t, "a call for web", func(c call) bool { return c.crName() == "web" })
	if rel, _ := relatedOf(t, first); len(rel["members"]) != related.MaxSelected {
		t.Errorf("web's request carries %d members, want the first %d", len(rel["members"]), related.MaxSelected)
	}
	var cond map[string]any
	f.eventually("the RelatedObjectsTruncated condition", func() (bool, error) {
		cond = condition(f.getCR("web"), run.ConditionRelatedTruncated)
		return cond != nil, nil
	})
	if cond["status"] != "True" || cond["reason"] != run.EventTooManyRelated || !strings.Contains(fmt.Sprint(cond["message"]), "payload.related members") {
		t.Errorf("condition %v, want True, reason %s, naming the entry members", cond, run.EventTooManyRelated)
	}
	if c := readyCondition(f.getCR("web")); c["status"] != "True" {
		t.Errorf("Ready = %v, want True: a cut list is sent, the reconciler decides", c)
	}
	f.waitEvent("web", "Warning", run.EventTooManyRelated)

	// One fewer match: the next pass reads them all and the condition goes.
	if err := cms.Delete(t.Context(), "m-000", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.eventually("the condition to go", func() (bool, error) {
		return condition(f.getCR("web"), run.ConditionRelatedTruncated) == nil, nil
	})
}
