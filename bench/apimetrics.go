package main

import (
	"bytes"
	"context"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/orkspace/ork/internal/testenv"
)

// requestCounts are the apiserver's own counts of the requests it served
// (apiserver_request_total), by "VERB resource[/subresource]". The apiserver is fresh for
// each system, so they are that system's (and the harness's CR creates).
type requestCounts map[string]float64

func scrapeRequests(ctx context.Context, env *testenv.Env) (requestCounts, error) {
	raw, err := env.Clientset.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	out := requestCounts{}
	fam, ok := families["apiserver_request_total"]
	if !ok {
		return out, nil
	}
	for _, m := range fam.GetMetric() {
		var verb, resource, sub string
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "verb":
				verb = l.GetValue()
			case "resource":
				resource = l.GetValue()
			case "subresource":
				sub = l.GetValue()
			}
		}
		if sub != "" {
			resource += "/" + sub
		}
		out[verb+" "+resource] += m.GetCounter().GetValue()
	}
	return out, nil
}

// writes sums the write requests (create, update, patch, apply, delete) to the resources
// whose name satisfies keep.
func (r requestCounts) writes(keep func(resource string) bool) float64 {
	var n float64
	for k, v := range r {
		verb, resource, _ := strings.Cut(k, " ")
		switch verb {
		case "POST", "PUT", "PATCH", "APPLY", "DELETE":
			if keep(resource) {
				n += v
			}
		}
	}
	return n
}

// reads sums the GETs of single objects of the resources whose name satisfies keep.
func (r requestCounts) reads(keep func(resource string) bool) float64 {
	var n float64
	for k, v := range r {
		if verb, resource, _ := strings.Cut(k, " "); verb == "GET" && keep(resource) {
			n += v
		}
	}
	return n
}

func (r requestCounts) minus(before requestCounts) requestCounts {
	out := requestCounts{}
	for k, v := range r {
		out[k] = v - before[k]
	}
	return out
}

func eventWrites(resource string) bool { return resource == "events" }
