package katalogschema

import "github.com/orkspace/ork/internal/katalog"

// Patterns of the rules internal/validate checks on strings. They are ECMA-262 and RE2
// alike (no lookaround), so editors and Go validators read them the same way.
const (
	// positiveDuration is a Go duration (time.ParseDuration) without a sign: 500ms, 1h30m.
	positiveDuration = `^\+?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`
	zeroDuration     = `^\+?((0+(\.0*)?|\.0+)(ns|us|µs|μs|ms|s|m|h))+$`
	// httpURL is an absolute http or https URL with a host (net/url parses it).
	httpURL = `^[hH][tT][tT][pP][sS]?://[^\s/?#]+([/?#].*)?$`
	// dotPath is a payload exclude path: keys separated by '.', "\." a dot inside a key, and
	// no '[', ']', '*' or space (internal/dotpath).
	dotPath = `^([^.\\\[\] *]|\\.)+(\.([^.\\\[\] *]|\\.)+)*$`
	// Kubernetes' own name rules (k8s.io/apimachinery/pkg/util/validation).
	dns1123Subdomain = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	dns1123Label     = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	configMapKey     = `^[-._a-zA-Z0-9]+$`
	// headerName is an HTTP header field name: a token (RFC 9110), or empty for the default.
	headerName = "^[!#$%&'*+.^_`|~0-9A-Za-z-]*$"
	// lowercase is what internal/validate asks of a plural.
	lowercase = `^[^A-Z]*$`
	// quantity is a Kubernetes resource quantity (k8s.io/apimachinery's resource.Quantity).
	quantity = `^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`
)

// constraints are the rules of internal/validate (named in each comment) that a JSON Schema
// can express, by the path of the node they constrain (fields.go's notation; "" is the
// root). Each is merged into the node's schema; for a string field the docs call a template,
// it constrains the value that is not one. TestSchemaAgreesWithValidate checks them against
// every golden Katalog.
func constraints() map[string]*obj {
	const crd = "spec.crds.*"
	const reconcile = crd + ".operatorBox.reconcile"
	const remote = reconcile + ".remote"
	return map[string]*obj{
		// api-version, kind
		"apiVersion": object("enum", []any{katalog.APIVersion, katalog.LegacyAPIVersion}),
		"kind":       object("const", katalog.Kind),
		// no-crds: spec is required and not null, spec.crds holds at least one CRD.
		"":          object("required", []string{"spec"}),
		"spec":      object("type", "object"),
		"spec.crds": object("minProperties", 1),
		// api-types: without a crdFile, apiTypes names group, version, kind and plural.
		crd: object(
			"if", object("required", []string{"crdFile"}, "properties", object("crdFile", present())),
			"else", object(
				"required", []string{"apiTypes"},
				"properties", object("apiTypes", object(
					"type", "object",
					"required", []string{"group", "version", "kind", "plural"},
					"properties", object("group", present(), "version", present(), "kind", present(), "plural", present()),
				)),
			),
		),
		// lowercase-plural
		crd + ".apiTypes.plural": object("pattern", lowercase),
		// workers
		reconcile + ".workers": object("minimum", 1, "maximum", 64),
		// duration
		reconcile + ".resync":            positive(),
		remote + ".timeout":              positive(),
		remote + ".finalizeTimeout":      positive(),
		remote + ".skipUnchanged.maxAge": positive(),
		// remote-requires-default-false; target: reconcile.target only without remote
		reconcile: object(
			"if", object("required", []string{"remote"}, "properties", object("remote", object("type", "object"))),
			"then", object(
				"required", []string{"default"},
				"properties", object("default", object("const", false)),
				"not", object("required", []string{"target"}, "properties", object("target", object("type", "object"))),
			),
		),
		// endpoint
		remote + ".endpoint": object("pattern", httpURL),
		// protocol
		remote + ".protocol": object("enum", []any{"http", ""}),
		// exclude-path
		remote + ".payload.object.exclude":   object("items", dotPathItem()),
		remote + ".payload.children.exclude": object("items", dotPathItem()),
		// lowercase-plural (managed-resource-plural is the docs' "required")
		remote + ".managedResources[].plural": object("pattern", lowercase),
		// secret-ref: names and keys as Kubernetes takes them
		remote + ".auth.secretRef.name":       object("pattern", dns1123Subdomain, "maxLength", 253),
		remote + ".auth.secretRef.namespace":  object("pattern", dns1123Label, "maxLength", 63),
		remote + ".auth.secretRef.key":        secretKey(),
		remote + ".tls.caSecretRef.name":      object("pattern", dns1123Subdomain, "maxLength", 253),
		remote + ".tls.caSecretRef.namespace": object("pattern", dns1123Label, "maxLength", 63),
		remote + ".tls.caSecretRef.key":       secretKey(),
		// auth-header
		remote + ".auth.header": object("pattern", headerName),
		// tls-ca: caFile or caSecretRef, not both
		remote + ".tls": object("not", object(
			"required", []string{"caFile", "caSecretRef"},
			"properties", object("caFile", present(), "caSecretRef", object("type", "object")),
		)),
		// candidate
		remote + ".candidate.mode":                    object("enum", []any{"shadow", "canary"}),
		remote + ".candidate.concurrency":             object("minimum", 1, "maximum", 64),
		remote + ".candidate.gate.maxErrorRatio":      object("minimum", 0, "maximum", 1),
		remote + ".candidate.gate.maxDivergenceRatio": object("minimum", 0, "maximum", 1),
		remote + ".candidate.gate.minSamples":         object("minimum", 1),
		remote + ".candidate":                         object("required", []string{"mode"}),
		// duration, endpoint, secret-ref and auth-header, as for remote's own
		remote + ".candidate.timeout":                  positive(),
		remote + ".candidate.canary.interval":          positive(),
		remote + ".candidate.endpoint":                 object("pattern", httpURL),
		remote + ".candidate.auth.secretRef.name":      object("pattern", dns1123Subdomain, "maxLength", 253),
		remote + ".candidate.auth.secretRef.namespace": object("pattern", dns1123Label, "maxLength", 63),
		remote + ".candidate.auth.secretRef.key":       secretKey(),
		remote + ".candidate.auth.header":              object("pattern", headerName),
		// target: a kubeconfigSecretRef; secret-ref: its name and key as for auth's
		reconcile + ".target":                               object("required", []string{"kubeconfigSecretRef"}),
		reconcile + ".target.kubeconfigSecretRef.name":      object("pattern", dns1123Subdomain, "maxLength", 253),
		reconcile + ".target.kubeconfigSecretRef.namespace": object("pattern", dns1123Label, "maxLength", 63),
		reconcile + ".target.kubeconfigSecretRef.key":       secretKey(),
		remote + ".target":                                  object("required", []string{"kubeconfigSecretRef"}),
		remote + ".target.kubeconfigSecretRef.name":         object("pattern", dns1123Subdomain, "maxLength", 253),
		remote + ".target.kubeconfigSecretRef.namespace":    object("pattern", dns1123Label, "maxLength", 63),
		remote + ".target.kubeconfigSecretRef.key":          secretKey(),
		// declarative-entry: entries have their intent type's fields, unless reconcile.remote
		// makes ork ignore them (a warning, not an error).
		crd + ".operatorBox": object(
			"if", object("required", []string{"reconcile"}, "properties", object("reconcile",
				object("required", []string{"remote"}, "properties", object("remote", object("type", "object"))))),
			"else", object("properties", object(
				"onCreate", object("$ref", "#/$defs/declarativeEntries"),
				"onReconcile", object("$ref", "#/$defs/declarativeEntries"),
				"onDelete", object("$ref", "#/$defs/declarativeEntries"),
			)),
		),
	}
}

// present is a string that is there and not empty, as a required field must be.
func present() *obj { return object("type", "string", "minLength", 1) }

func positive() *obj {
	return object("pattern", positiveDuration, "not", object("pattern", zeroDuration))
}

func dotPathItem() *obj {
	return object("type", "string", "pattern", dotPath, "not", object("pattern", `^\s*$`))
}

func secretKey() *obj {
	return object("pattern", configMapKey, "maxLength", 253,
		"not", object("anyOf", []any{object("const", "."), object("pattern", `^\.\.`)}))
}
