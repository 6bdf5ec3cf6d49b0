// Package reconciler is the Go SDK of ork's remote reconciler: the typed PreparedRequest ork
// POSTs and the Result a reconciler answers (generated from ork's schema/*.json), one builder
// per intent type, the ok/requeue/error answers, and an http.Handler that checks the bearer
// token, limits the body, answers /healthz and turns a Func into ork's wire format.
//
// A reconciler is a Func:
//
//	func reconcile(ctx context.Context, req *reconciler.PreparedRequest) (reconciler.Result, error) {
//		var spec struct{ Image string `json:"image"` }
//		if err := req.Object.DecodeSpec(&spec); err != nil {
//			return reconciler.Result{}, err
//		}
//		return reconciler.OK().WithResources(
//			reconciler.Deployment(reconciler.DeploymentFields{Name: req.Object.Name(), Image: spec.Image}),
//		), nil
//	}
//
// served by reconciler.Serve(ctx, ":8088", h, 10*time.Second) with h from NewHandler.
//
// The package follows ork's wire contract version ContractVersion; ork sends its own in the
// Ork-Contract-Version header, and HandlerOptions.OnContractMismatch hears of a different
// major version. It uses the standard library only.
package reconciler

//go:generate sh -c "cd ../../gen && go run ./sdkgen -go ../go/reconciler/wire_gen.go -python ../python/ork_reconciler/_wire.py"
