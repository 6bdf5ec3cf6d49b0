package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/trace"
)

// DefaultTraceAddr is ork run's default --metrics-addr, seen from the same machine.
const DefaultTraceAddr = "127.0.0.1:8080"

type traceOptions struct {
	key    trace.Key
	addr   string
	format output.Format
	// holder, when set, finds the replica of a sharded ork holding the object's bucket.
	holder *holderLookup
}

func newTraceCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trace [CRD] NAMESPACE/NAME",
		Short: "Show the last decisions ork run took for an object, as a timeline",
		Long: `Fetch the last 20 decisions ork run took for one custom resource from its metrics address
(ork run --debug-decisions serves them at /debug/decisions/{crd}/{namespace}/{name}) and print
them oldest first: the trigger, the digest of the request sent (the digest of a recorded
exchange of the same call), the outcome, what applying each resource did, and how long each
part took. No secret is ever in a trace. The CRD (its name in the Katalog) may be left out
when only one CRD has an object of that name; a cluster-scoped object is NAME alone.
Reach an ork in a cluster with kubectl port-forward to its Deployment, named after the operator
(ork bundle --name, by default the Katalog's metadata.name). With ork run --shard-buckets each
replica keeps the decisions of its own buckets' objects: --holder finds the replica whose bucket
Lease covers the object's uid and reads its decisions through the apiserver's pod proxy.
Exit code 0: printed, 1: no decisions or no answer from --addr, 2: usage error or ambiguous name.`,
		Example: `  ork trace default/my-webapp
  ork trace webapp default/my-webapp -o json
  kubectl -n orkestra-system port-forward deploy/webapp-operator 8080 & ork trace default/my-webapp --addr 127.0.0.1:8080
  ork trace default/my-webapp --holder -f katalog.yaml --namespace orkestra-system   # sharded: the replica holding its bucket`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || len(args) > 2 {
				return usageError("%s takes [CRD] NAMESPACE/NAME, got %d arguments", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := completeTrace(env, args)
			if err != nil {
				return err
			}
			return runTrace(cmd, env, opts)
		},
	}
	addOutputFlag(cmd, output.Text, output.Text, output.JSON)
	addKatalogFlag(cmd)
	f := cmd.Flags()
	f.String("addr", DefaultTraceAddr, "host:port (or URL) of ork run's metrics address; with --holder, its port is the replicas' metrics port")
	f.Bool("holder", false, "for ork run --shard-buckets: find the replica whose bucket Lease covers the object's uid and fetch its decisions through the apiserver's pod proxy (reads the Katalog, -f, for the object's type; needs get on pods/proxy in ork's namespace)")
	f.String("name", "", "with --holder: ork run --name of the sharded ork, which names its bucket Leases (default the Katalog's metadata.name, as ork bundle names it)")
	addNamespaceFlag(cmd, "with --holder: ork's own namespace, where its Leases are")
	addClusterFlags(cmd)
	return cmd
}

func completeTrace(env *Env, args []string) (traceOptions, error) {
	cfg := env.Config()
	format, err := outputFormat(cfg, output.Text, output.JSON)
	if err != nil {
		return traceOptions{}, err
	}
	opts := traceOptions{addr: cfg.String("addr"), format: format}
	ref := args[len(args)-1]
	if len(args) == 2 {
		opts.key.CRD = args[0]
	}
	ns, name, namespaced := strings.Cut(ref, "/")
	if !namespaced {
		ns, name = "", ref
	}
	if name == "" || strings.Contains(name, "/") || (namespaced && ns == "") {
		return traceOptions{}, usageError("%q is not NAMESPACE/NAME (or NAME for a cluster-scoped object)", ref)
	}
	opts.key.Namespace, opts.key.Name = ns, name
	if cfg.Bool("holder") {
		opts.holder = &holderLookup{files: cfg.StringSlice("filename"), cluster: completeCluster(cfg),
			name: cfg.String("name"), namespace: orkNamespace(env)}
	}
	return opts, nil
}

func runTrace(cmd *cobra.Command, env *Env, opts traceOptions) error {
	client := trace.Client{Base: opts.addr}
	if opts.holder != nil {
		held, err := opts.holder.find(cmd.Context(), env, opts.key, opts.addr)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Streams.ErrOut, "%s is in the bucket of Lease %s, held by pod %s\n", nsOrName(opts.key), held.lease, held.pod)
		client, opts.key.CRD, opts.addr = held.client, held.crd, "pod "+held.pod
	}
	t, err := client.Find(cmd.Context(), opts.key)
	if amb, ok := errors.AsType[*trace.AmbiguousError](err); ok {
		return usageError("%v: ork trace %s %s", amb, amb.CRDs[0], nsOrName(opts.key))
	}
	if errors.Is(err, trace.ErrNotFound) {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%w at %s (ork run keeps them only with --debug-decisions, and only since it started)", err, opts.addr)}
	}
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%w (is ork run serving decisions there? it needs --debug-decisions; pass its metrics address with --addr, through kubectl port-forward for a pod)", err)}
	}
	if opts.format == output.JSON {
		return output.WriteJSON(env.Streams.Out, t)
	}
	return writeTimeline(env.Streams.Out, env.Style(), t)
}

func nsOrName(k trace.Key) string {
	if k.Namespace == "" {
		return k.Name
	}
	return k.Namespace + "/" + k.Name
}

// writeTimeline prints one block per decision, oldest first.
func writeTimeline(w io.Writer, st output.Style, t trace.ObjectTrace) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %s, oldest first\n", st.Bold(t.CRD), nsOrName(t.Key), plural(len(t.Decisions), "decision"))
	for _, d := range t.Decisions {
		reason := st.OK(d.Reason)
		if !d.Success {
			reason = st.Error(d.Reason)
		}
		next := ""
		if d.Next != "" {
			next = " → " + d.Next
		}
		trigger := d.Trigger
		if d.Side != "" {
			trigger += " [" + d.Side + "]" // not the stable reconciler's answer
		}
		fmt.Fprintf(&b, "%s  %s  attempt %d  %s%s  %s\n",
			st.Dim(d.Time.UTC().Format("2006-01-02T15:04:05.000Z")), trigger, d.Attempt, reason, next, st.Dim(durations(d.Durations)))
		var about []string
		if d.Request != "" {
			about = append(about, "request "+short(d.Request))
		}
		if d.Result != "" {
			about = append(about, "result "+d.Result)
		}
		if d.Target != "" {
			about = append(about, "target "+d.Target) // the children's cluster, when not ork's own
		}
		if len(about) > 0 {
			fmt.Fprintf(&b, "    %s\n", strings.Join(about, "  "))
		}
		if d.Message != "" && !d.Success {
			fmt.Fprintf(&b, "    %s\n", d.Message)
		}
		for _, p := range d.Divergences {
			fmt.Fprintf(&b, "    %s  %s\n", st.Warning("differs at"), p)
		}
		for _, r := range d.Related {
			fmt.Fprintf(&b, "    %s  %s\n", st.Dim("read"), r)
		}
		for _, a := range d.Applies {
			outcome := fmt.Sprintf("%-9s", a.Outcome)
			switch a.Outcome {
			case trace.Created, trace.Updated:
				outcome = st.OK(outcome)
			case trace.Failed:
				outcome = st.Error(outcome)
			default:
				outcome = st.Dim(outcome)
			}
			line := fmt.Sprintf("    %s  %s", outcome, a.Ref)
			if a.Namespace != "" && a.Namespace != t.Namespace {
				line += " in " + a.Namespace
			}
			if a.Error != "" {
				line += ": " + a.Error
			}
			b.WriteString(line + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// durations reads "total 48ms (remote 12ms, apply 30ms, status 5ms)".
func durations(d trace.Durations) string {
	var parts []string
	for _, p := range []struct {
		name string
		d    trace.Duration
	}{{"remote", d.Remote}, {"apply", d.Apply}, {"status", d.Status}} {
		if p.d > 0 {
			parts = append(parts, p.name+" "+round(p.d))
		}
	}
	s := "total " + round(d.Total)
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s
}

func round(d trace.Duration) string {
	td := time.Duration(d)
	switch {
	case td >= time.Second:
		return td.Round(10 * time.Millisecond).String()
	case td >= time.Millisecond:
		return td.Round(100 * time.Microsecond).String()
	}
	return td.String()
}

// short cuts a digest to "sha256:" and 12 hex digits.
func short(digest string) string {
	if i := strings.IndexByte(digest, ':'); i >= 0 && len(digest) > i+13 {
		return digest[:i+13]
	}
	return digest
}
