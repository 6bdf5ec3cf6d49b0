package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/orkspace/ork/internal/blame"
	"github.com/orkspace/ork/internal/decision"
	"github.com/orkspace/ork/internal/decisionlog"
	"github.com/orkspace/ork/internal/naming"
	"github.com/orkspace/ork/internal/output"
	"github.com/orkspace/ork/internal/version"
)

type blameOptions struct {
	// resource and name are KIND/NAME: resource is a kind, plural or short name, optionally
	// with .group.
	resource, name string
	field          string
	// namespace is -n, else the kubeconfig context's, else default.
	namespace   string
	decisionLog string
	cluster     clusterOptions
	format      output.Format
}

func newBlameCmd(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "blame KIND/NAME --field PATH [-n NAMESPACE] [--decision-log FILE]",
		Short: "Say which decision of ork's set a field of a child, and whether another manager changed it since",
		Long: `Say who holds one field of an object ork wrote and which of ork's decisions set it, joining the
object's managedFields, its ` + naming.DecisionAnnotation + ` annotation, its owning custom
resource's status.lastDecision and, with --decision-log, the decision log of ork run. PATH is
written as spec.template.spec.containers[0].image; a dot inside a key is escaped as \.
Without the log, the answer is the last decision that wrote the object, which need not be the
one that set this field; with it, the latest entry that changed the field, with its trigger,
the custom resource's generation and resourceVersion, and the related objects'
resourceVersions it read. When another field manager holds the field, it is named with the
time of its last write: it changed the field since ork's decision.
Exit code 0: answered, 1: the object could not be read, 2: usage error or unreadable log.`,
		Example: `  ork blame deployment/web --field spec.replicas -n shop --decision-log decisions.log
  ork blame deployments.apps/web --field 'spec.template.spec.containers[0].image' -n shop -o json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError("%s takes one KIND/NAME, got %d arguments", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := completeBlame(env, args[0])
			if err != nil {
				return err
			}
			return runBlame(cmd, env, opts)
		},
	}
	cmd.Flags().String("field", "", "the field's path, as spec.template.spec.containers[0].image (required)")
	cmd.Flags().StringP("namespace", "n", "", "the object's namespace (default the kubeconfig context's, else default)")
	cmd.Flags().String("decision-log", "", "the decision log of ork run --decision-log, for per-field answers")
	addOutputFlag(cmd, output.Text, output.Text, output.JSON)
	addClusterFlags(cmd)
	return cmd
}

func completeBlame(env *Env, arg string) (blameOptions, error) {
	cfg := env.Config()
	format, err := outputFormat(cfg, output.Text, output.JSON)
	if err != nil {
		return blameOptions{}, err
	}
	resource, name, ok := strings.Cut(arg, "/")
	if !ok || resource == "" || name == "" || strings.Contains(name, "/") {
		return blameOptions{}, usageError("want KIND/NAME, as deployment/web, got %q", arg)
	}
	opts := blameOptions{resource: strings.ToLower(resource), name: name, field: cfg.String("field"),
		namespace: cfg.String("namespace"), decisionLog: cfg.String("decision-log"), cluster: completeCluster(cfg), format: format}
	if opts.field == "" {
		return blameOptions{}, usageError("--field is required: the path of the field, as spec.replicas")
	}
	if _, err := decision.ParsePath(opts.field); err != nil {
		return blameOptions{}, usageError("--field: %v", err)
	}
	return opts, nil
}

func runBlame(cmd *cobra.Command, env *Env, opts blameOptions) error {
	q := blame.Query{Field: opts.field, FieldManager: naming.FieldManager}
	var logNotes []string
	rc, err := opts.cluster.restConfig()
	if err != nil {
		return err
	}
	rc.UserAgent = version.UserAgent()
	if opts.namespace == "" {
		if opts.namespace, err = opts.cluster.namespace(); err != nil {
			return err
		}
	}
	disc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return fmt.Errorf("discovery client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	cached := memory.NewMemCacheClient(disc)
	mapper := restmapper.NewShortcutExpander(restmapper.NewDeferredDiscoveryRESTMapper(cached), cached, nil)
	gvr, err := mapper.ResourceFor(schema.ParseGroupResource(opts.resource).WithVersion(""))
	if meta.IsNoMatchError(err) {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("the cluster serves no resource %q (kubectl api-resources lists those it does)", opts.resource)}
	}
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("%s: %w", opts.resource, err)}
	}
	mapping, err := restMapping(mapper, gvr)
	if err != nil {
		return &ExitError{Code: ExitFailed, Err: err}
	}
	ns := opts.namespace
	if mapping.Scope.Name() == meta.RESTScopeNameRoot {
		ns = ""
	}
	ctx := cmd.Context()
	if q.Child, err = dyn.Resource(gvr).Namespace(ns).Get(ctx, opts.name, metav1.GetOptions{}); err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("get %s %s: %w", gvr.Resource, opts.name, err)}
	}
	if q.Owner, err = controllerOf(ctx, dyn, mapper, q.Child); err != nil {
		logNotes = append(logNotes, fmt.Sprintf("the owning custom resource: %v", err))
	}
	if opts.decisionLog != "" {
		entries, note, err := readDecisionLog(opts.decisionLog, blame.RefOf(q.Child))
		if err != nil {
			return usageError("--decision-log: %v", err)
		}
		q.Log, q.HasLog = entries, true
		if note != "" {
			logNotes = append(logNotes, note)
		}
	}
	a, err := blame.Blame(q)
	if err != nil {
		return usageError("%v", err)
	}
	a.Notes = append(logNotes, a.Notes...)
	if opts.format == output.JSON {
		return output.WriteJSON(env.Streams.Out, a)
	}
	return writeBlame(env.Streams.Out, env.Style(), a)
}

// namespace is the kubeconfig context's namespace, else default.
func (c clusterOptions) namespace() (string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: c.context, AuthInfo: clientcmdapi.AuthInfo{Impersonate: c.as}}
	ns, _, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).Namespace()
	if err != nil {
		return "", fmt.Errorf("cluster config: %w", err)
	}
	return ns, nil
}

func restMapping(mapper meta.RESTMapper, gvr schema.GroupVersionResource) (*meta.RESTMapping, error) {
	gvk, err := mapper.KindFor(gvr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gvr.Resource, err)
	}
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", gvk.Kind, err)
	}
	return m, nil
}

// controllerOf reads the object's controller, the custom resource that owns it; nil when
// it has none (an object outside its owner's namespace names it by uid only).
func controllerOf(ctx context.Context, dyn dynamic.Interface, mapper meta.RESTMapper, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		if uid := obj.GetAnnotations()[naming.OwnerAnnotation]; uid != "" {
			return nil, fmt.Errorf("the object names its owner by uid only (%s), in another namespace", uid)
		}
		return nil, errors.New("the object has no controller")
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, err
	}
	m, err := mapper.RESTMapping(gv.WithKind(ref.Kind).GroupKind(), gv.Version)
	if err != nil {
		return nil, err
	}
	ns := obj.GetNamespace()
	if m.Scope.Name() == meta.RESTScopeNameRoot {
		ns = ""
	}
	owner, err := dyn.Resource(m.Resource).Namespace(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s %s is gone", ref.Kind, ref.Name)
	}
	return owner, err
}

// readDecisionLog returns the entries of the log that concern obj, and a note when the
// log's chain is broken (the answer still comes from it).
func readDecisionLog(path string, obj decision.Ref) ([]blame.Logged, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	var note string
	if _, firstBad, err := decisionlog.Verify(f); firstBad > 0 {
		note = fmt.Sprintf("the decision log's chain breaks at line %d (%v): answers from it may be wrong", firstBad, err)
	} else if err != nil {
		return nil, "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, "", err
	}
	var entries []blame.Logged
	err = decisionlog.Scan(f, func(line int, e decision.Entry) error {
		if blame.Concerns(e, obj) {
			entries = append(entries, blame.Logged{Line: line, Entry: e})
		}
		return nil
	})
	if err != nil && note == "" {
		return nil, "", err
	}
	return entries, note, nil
}

// writeBlame prints the answer: its summary, then what it rests on.
func writeBlame(w io.Writer, st output.Style, a blame.Answer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", st.Bold(a.Summary()))
	row := func(k, v string) { fmt.Fprintf(&b, "  %-17s %s\n", k+":", v) }
	row("object", a.Object.String())
	var owners []string
	for _, o := range a.Owners {
		s := o.Manager + " (" + o.Operation
		if o.Subresource != "" {
			s += " of " + o.Subresource
		}
		if o.Time != nil {
			s += ", " + o.Time.UTC().Format(time.RFC3339)
		}
		owners = append(owners, s+")")
	}
	if len(owners) == 0 {
		owners = []string{"none"}
	}
	row("held by", strings.Join(owners, ", "))
	if a.Decision != "" {
		src := "the object's " + decision.Annotation + " annotation"
		if a.Source == blame.SourceLog {
			src = fmt.Sprintf("the decision log, line %d", a.LogLine)
		}
		row("decision", fmt.Sprintf("%s (from %s)", a.Decision, src))
		if !a.Time.IsZero() {
			row("time", a.Time.UTC().Format(time.RFC3339))
		}
		if a.Trigger != "" {
			row("trigger", a.Trigger)
		}
		if a.Generation != 0 || a.ResourceVersion != "" {
			row("custom resource", fmt.Sprintf("generation %d, resourceVersion %s", a.Generation, a.ResourceVersion))
		}
		for _, r := range a.Related {
			row("related", fmt.Sprintf("%s: %s at resourceVersion %s", r.Name, r.Ref, r.ResourceVersion))
		}
		if a.Reconciler != (decision.Reconciler{}) {
			row("reconciler", strings.TrimSpace(a.Reconciler.Side+" "+a.Reconciler.Version))
		}
	}
	for _, n := range a.Notes {
		fmt.Fprintf(&b, "%s %s\n", st.Dim("note:"), n)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
