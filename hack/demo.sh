#!/usr/bin/env bash
# make demo: the remote reconciler end to end on a local control plane. Builds ork, starts
# etcd + kube-apiserver, the example Go reconciler and `ork run`, applies the example WebApp,
# waits until it is Ready, shows the children and the status, changes the spec and shows the
# update arriving, then tears everything down. One line per step; exits non-zero naming the
# step that failed.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d -t ork-demo.XXXXXX)
kc="$work/kubeconfig"
pids=()
step=""
cleanup() {
  local code=$?
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$code" -ne 0 ]; then
    echo "demo: FAILED at step: $step (logs in $work)" >&2
  else
    rm -rf "$work"
  fi
  exit "$code"
}
trap cleanup EXIT
say() { step="$*"; printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }

kubectl() { "$bindir/kubectl" --kubeconfig "$kc" "$@"; }

# Poll with a deadline: each of these converges within seconds on a healthy machine.
waitfor() {
  local what=$1 deadline=$((SECONDS + 90)); shift
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then echo "demo: timed out waiting for $what" >&2; return 1; fi
    sleep 0.5
  done
}

say "building ork (bin/ork) and the example reconciler"
make -s build
go build -o "$work/reconciler" ./examples/remote/reconciler-go

say "building the local control plane if needed (first time ~12 min; progress below)"
# The demo needs no kube-controller-manager (only one integration test does).
bindir=$(BINARIES="etcd kube-apiserver kubectl" hack/build-k8s.sh)

say "starting etcd + kube-apiserver"
go build -o "$work/devcluster" ./hack/devcluster
"$work/devcluster" -kubeconfig "$kc" >"$work/devcluster.log" 2>&1 &
pids+=($!)
waitfor "the apiserver" bash -c "test -s '$kc' || { kill -0 ${pids[-1]} || { cat '$work/devcluster.log' >&2; exit 2; }; exit 1; }"

say "starting the example reconciler on 127.0.0.1:8088"
RECONCILER_TOKEN=demo-token-change-me "$work/reconciler" -addr 127.0.0.1:8088 >"$work/reconciler.log" 2>&1 &
pids+=($!)

say "creating the token Secret"
kubectl apply -f examples/remote/secret.yaml >/dev/null

say "starting: ork run --install-crds -f examples/remote/katalog.yaml"
bin/ork run --install-crds -f examples/remote/katalog.yaml --kubeconfig "$kc" --namespace default \
  --health-addr 127.0.0.1:0 --metrics-addr 127.0.0.1:0 >"$work/ork.log" 2>&1 &
pids+=($!)
waitfor "ork to start" grep -q "ork is running" "$work/ork.log"

say "applying the example WebApp (examples/remote/cr.yaml)"
kubectl apply -f examples/remote/cr.yaml >/dev/null

say "waiting for Ready"
kubectl wait --for=condition=Ready webapp/my-webapp -n default --timeout=90s >/dev/null

say "children created by the remote reconciler:"
kubectl get deployments,services -n default -l app.kubernetes.io/managed-by=orkestra
say "status written by ork:"
kubectl get webapp my-webapp -n default -o jsonpath='{.status}'; echo

say "changing spec.replicas to 3"
kubectl patch webapp my-webapp -n default --type merge -p '{"spec":{"replicas":3}}' >/dev/null
waitfor "the update to arrive" bash -c "[ \"\$('$bindir/kubectl' --kubeconfig '$kc' get deployment my-webapp -n default -o jsonpath='{.spec.replicas}')\" = 3 ]"
waitfor "observedGeneration 2" bash -c "[ \"\$('$bindir/kubectl' --kubeconfig '$kc' get webapp my-webapp -n default -o jsonpath='{.status.observedGeneration}')\" = 2 ]"
say "update arrived: deployment/my-webapp has 3 replicas, status.observedGeneration is 2"
grep -c "reconcile default/my-webapp" "$work/reconciler.log" | xargs printf '[%s] the reconciler answered %s PreparedRequests\n' "$(date +%H:%M:%S)"

say "tearing down"
