// Package targetpass is a controller's target pass: where the children of a custom resource
// whose CRD names a target go (the hub, or the cluster its kubeconfig Secret reaches), the
// spokes of the targets in use, and the clean-up of the clusters a CR left and of a deleting
// CR's children there (docs/multicluster.md). It knows its controller through Deps and the CR
// each pass lends it, never the engine (docs/architecture.md).
package targetpass
