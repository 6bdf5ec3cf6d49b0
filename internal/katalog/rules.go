package katalog

import (
	"cmp"
	"slices"
)

// Rule names the check behind a Finding. IDs are stable: CI dashboards (SARIF ruleId, JUnit
// classname) group and suppress findings by them, so one is never renamed or reused.
type Rule string

// The rules of the loader (this package) and of internal/validate.
const (
	RuleUnreadable        Rule = "unreadable-file"
	RuleYAMLSyntax        Rule = "yaml-syntax"
	RuleEmptyFile         Rule = "empty-file"
	RuleMultipleDocuments Rule = "multiple-documents"
	RuleDuplicateKey      Rule = "duplicate-key"
	RuleNotAKatalog       Rule = "not-a-katalog"
	RuleDecode            Rule = "decode"
	RuleUnknownField      Rule = "unknown-field"
	RuleWrongType         Rule = "wrong-type"
	RuleUnquotedTemplate  Rule = "unquoted-template"
	RuleDuplicateCRD      Rule = "duplicate-crd"
	RuleCRDFile           Rule = "crd-file"
	RuleCRDFileMismatch   Rule = "crd-file-mismatch"
	RuleStatusSubresource Rule = "status-subresource"
	RuleStatusSchema      Rule = "status-schema"
	RuleOperationStatus   Rule = "operation-status"

	RuleAPIVersion               Rule = "api-version"
	RuleKind                     Rule = "kind"
	RuleNoCRDs                   Rule = "no-crds"
	RuleAPITypes                 Rule = "api-types"
	RuleLowercasePlural          Rule = "lowercase-plural"
	RuleCRFile                   Rule = "cr-file"
	RuleCRSchema                 Rule = "cr-schema"
	RuleCRValidationRule         Rule = "cr-validation-rule"
	RuleCRDValidationRule        Rule = "crd-validation-rule"
	RuleWorkers                  Rule = "workers"
	RuleDuration                 Rule = "duration"
	RuleNothingReconciles        Rule = "nothing-reconciles"
	RuleRemoteRequiresDefaultOff Rule = "remote-requires-default-false"
	RuleEndpoint                 Rule = "endpoint"
	RuleProtocol                 Rule = "protocol"
	RuleTemplateSyntax           Rule = "template-syntax"
	RuleTemplateField            Rule = "template-field"
	RuleTemplateSampleField      Rule = "template-sample-field"
	RuleExcludePath              Rule = "exclude-path"
	RuleChildrenExcludeUnused    Rule = "children-exclude-unused"
	RulePruneWithoutChildren     Rule = "prune-without-children"
	RuleFinalizeTimeoutUnused    Rule = "finalize-timeout-unused"
	RuleNoManagedResources       Rule = "no-managed-resources"
	RuleManagedResourcePlural    Rule = "managed-resource-plural"
	RuleDuplicateManagedResource Rule = "duplicate-managed-resource"
	RuleManagedResourceType      Rule = "managed-resource-type"
	RuleUnknownAPIGroup          Rule = "unknown-api-group"
	RuleCustomKind               Rule = "custom-kind"
	RuleSecretRef                Rule = "secret-ref"
	RuleAuthHeader               Rule = "auth-header"
	RuleTokenOverHTTP            Rule = "token-over-http"
	RuleTLSCA                    Rule = "tls-ca"
	RuleCAFile                   Rule = "ca-file"
	RuleInsecureSkipVerify       Rule = "insecure-skip-verify"
	RuleDeclarativeIgnored       Rule = "declarative-ignored"
	RuleResourceBlock            Rule = "resource-block"
	RuleDeclarativeEntry         Rule = "declarative-entry"
	RuleCandidate                Rule = "candidate"
	RuleCanarySteps              Rule = "canary-steps"
	RuleCandidateUnused          Rule = "candidate-unused"
	RuleRelatedEntry             Rule = "related-entry"
	RuleRelatedAs                Rule = "related-as"
	RuleRelatedType              Rule = "related-type"
	RuleRelatedNamespace         Rule = "related-namespace"
	RuleRelatedSecret            Rule = "related-secret"
	RuleRelatedName              Rule = "related-name"
	RuleTarget                   Rule = "target"
	RuleTargetSecretTemplate     Rule = "target-secret-template"
)

// RuleInfo describes a rule for reports that list their rules (SARIF's tool.driver.rules).
type RuleInfo struct {
	ID Rule
	// Severity of every finding of the rule.
	Severity Severity
	// Summary is one sentence saying what the rule checks.
	Summary string
	// Schema is true when schema/katalog.schema.json rejects what the rule rejects, so that an
	// editor shows it too; false for what needs the file system, the template parser or more
	// than one file, and for warnings (a schema has no warnings).
	Schema bool
}

// Rules returns every rule, sorted by ID.
func Rules() []RuleInfo {
	rs := []RuleInfo{
		{RuleUnreadable, SeverityError, "Every -f file can be read (ork validate exits 2, not 1, when one cannot).", false},
		{RuleYAMLSyntax, SeverityError, "The file is valid YAML.", true},
		{RuleEmptyFile, SeverityError, "The file holds a Katalog, not nothing.", true},
		{RuleMultipleDocuments, SeverityError, "A file holds one Katalog: one YAML document.", false},
		{RuleDuplicateKey, SeverityError, "No mapping repeats a key.", false},
		{RuleNotAKatalog, SeverityError, "A -f file is a Katalog, not another Kubernetes manifest (a CRD, a custom resource).", true},
		{RuleDecode, SeverityError, "The Katalog decodes (an internal check: a finding here is a bug in ork).", false},
		{RuleUnknownField, SeverityError, "Every field is a known Katalog field, spelt in camelCase.", true},
		{RuleWrongType, SeverityError, "Every value has its field's type (string, boolean, integer, list, mapping).", true},
		{RuleUnquotedTemplate, SeverityError, "A {{ template }} value is quoted, or YAML reads it as a mapping.", true},
		{RuleDuplicateCRD, SeverityError, "A CRD name is unique across all -f files.", false},
		{RuleCRDFile, SeverityError, "crdFile is a readable CustomResourceDefinition manifest.", false},
		{RuleCRDFileMismatch, SeverityError, "apiTypes and namespaced agree with crdFile.", false},
		{RuleStatusSubresource, SeverityError, "crdFile's version has the status subresource (without it ork run writes no status), unless the CRD entry says status: false.", false},
		{RuleStatusSchema, SeverityWarning, "crdFile's status schema keeps conditions, observedGeneration and lastDecision (declared, or x-kubernetes-preserve-unknown-fields), and, for a CRD with a target, lastDecision.target and childTargets: the apiserver prunes what it does not know, and ork run then writes none of them.", false},
		{RuleOperationStatus, SeverityWarning, "A remote CRD's crdFile status schema keeps status.operation (declared, or x-kubernetes-preserve-unknown-fields), where ork run holds a long-running operation the reconciler answered pending for; otherwise ork run keeps it in the annotation orkestra.orkspace.io/operation.", false},
		{RuleAPIVersion, SeverityError, "apiVersion is orkestra.orkspace.io/v1 (or the legacy orkestra.konductor.io/v1Alpha).", true},
		{RuleKind, SeverityError, "kind is Katalog.", true},
		{RuleNoCRDs, SeverityError, "spec.crds declares at least one CRD.", true},
		{RuleAPITypes, SeverityError, "A CRD has apiTypes with group, version, kind and plural, or a crdFile.", true},
		{RuleLowercasePlural, SeverityError, "A plural (resource name) is lowercase.", true},
		{RuleCRFile, SeverityError, "Every crFiles entry is a readable file.", false},
		{RuleCRSchema, SeverityError, "Every sample custom resource in crFiles is one the apiserver would create: valid against its crdFile's schema, defaults applied, no unknown field, a valid name.", false},
		{RuleCRValidationRule, SeverityError, "Every sample custom resource in crFiles passes its crdFile's x-kubernetes-validations (CEL) rules, evaluated as the apiserver does on create (transition rules, which read oldSelf, do not apply).", false},
		{RuleCRDValidationRule, SeverityError, "Every x-kubernetes-validations (CEL) rule of crdFile compiles and stays within the apiserver's estimated cost limits.", false},
		{RuleWorkers, SeverityError, "reconcile.workers is between 1 and 64.", true},
		{RuleDuration, SeverityError, "reconcile.resync, remote.timeout, remote.finalizeTimeout and remote.skipUnchanged.maxAge are positive Go durations.", true},
		{RuleNothingReconciles, SeverityWarning, "Something reconciles the CRD: reconcile.default is not false without reconcile.remote.", false},
		{RuleRemoteRequiresDefaultOff, SeverityError, "reconcile.remote requires reconcile.default: false.", true},
		{RuleEndpoint, SeverityError, "remote.endpoint is set: an absolute http(s) URL or a template.", true},
		{RuleProtocol, SeverityError, "remote.protocol is http.", true},
		{RuleTemplateSyntax, SeverityError, "Every template parses with ork's function set.", false},
		{RuleTemplateField, SeverityWarning, "A template reads only .spec and .status fields the crdFile's schema defines.", false},
		{RuleTemplateSampleField, SeverityWarning, "A template reads only fields the sample custom resources of crFiles have (or an optional one with index or default).", false},
		{RuleExcludePath, SeverityError, "Every payload exclude entry is a dot-path.", true},
		{RuleChildrenExcludeUnused, SeverityWarning, "payload.children.exclude is used only with payload.children.enabled.", false},
		{RulePruneWithoutChildren, SeverityWarning, "remote.prune is used with payload.children.enabled, so that the reconciler sees what it owns.", false},
		{RuleFinalizeTimeoutUnused, SeverityWarning, "remote.finalizeTimeout is used only with remote.finalize.", false},
		{RuleNoManagedResources, SeverityWarning, "reconcile.remote declares managedResources.", false},
		{RuleManagedResourcePlural, SeverityError, "Every managedResources entry names a plural.", true},
		{RuleDuplicateManagedResource, SeverityError, "No managedResources entry repeats a group and plural.", false},
		{RuleManagedResourceType, SeverityError, "A managedResources entry of a built-in API group names one of its resources (and a served version), and no near-miss of a built-in group; in a group a CRD of the -f files declares, one of the plurals declared there (or listed with --api-resources).", false},
		{RuleUnknownAPIGroup, SeverityWarning, "A managedResources group, or a custom entry's, is built into Kubernetes, declared by a CRD of the -f files, or listed with --api-resources.", false},
		{RuleCustomKind, SeverityError, "A custom declarative entry of a built-in API group names one of its kinds in a served version, and no near-miss of a built-in group.", false},
		{RuleSecretRef, SeverityError, "A secretRef has a valid name and key (and namespace); auth has a secretRef.", true},
		{RuleAuthHeader, SeverityError, "auth.header is a valid HTTP header name.", true},
		{RuleTokenOverHTTP, SeverityWarning, "An auth token is not sent over plain http to another host than this one or an in-cluster Service (*.svc, *.svc.cluster.local; a mesh's mTLS encrypts that hop).", false},
		{RuleTLSCA, SeverityError, "tls sets caFile or caSecretRef, not both.", true},
		{RuleCAFile, SeverityError, "tls.caFile is a readable PEM certificate bundle.", false},
		{RuleInsecureSkipVerify, SeverityWarning, "tls.insecureSkipVerify is off.", false},
		{RuleDeclarativeIgnored, SeverityWarning, "onCreate, onReconcile and onDelete are not declared next to reconcile.remote, which ignores them.", false},
		{RuleResourceBlock, SeverityError, "Every onCreate/onReconcile/onDelete key is a known resource block.", true},
		{RuleCandidate, SeverityError, "remote.candidate has a mode (shadow or canary), concurrency 1–64, gate ratios between 0 and 1 and minSamples of at least 1.", true},
		{RuleCanarySteps, SeverityError, "candidate.canary.steps are increasing percents from 1 to 100, ending at 100.", false},
		{RuleCandidateUnused, SeverityWarning, "candidate.canary is set only with mode canary, and candidate.endpoint differs from remote.endpoint.", false},
		{RuleRelatedEntry, SeverityError, "A payload.related entry's `as` is a plain key used once, and the entry sets exactly one of kind and plural and exactly one of name and selector.", false},
		{RuleRelatedAs, SeverityError, "A payload.related entry has an `as`.", true},
		{RuleRelatedType, SeverityError, "A payload.related entry of a built-in API group names one of its kinds or resources (and a served version).", false},
		{RuleRelatedNamespace, SeverityError, "A payload.related entry of a cluster-scoped kind has no namespace; one of a namespaced kind stays in the custom resource's namespace unless allowCrossNamespace is true.", false},
		{RuleRelatedSecret, SeverityError, "A payload.related entry of Secrets sets allowSecrets, and then the endpoint is https, loopback or an in-cluster Service.", false},
		{RuleRelatedName, SeverityError, "A payload.related name, namespace or label value can give a valid one: its literal text holds only the characters Kubernetes allows.", false},
		{RuleTarget, SeverityError, "A target has a kubeconfigSecretRef; reconcile.target is set only without reconcile.remote, whose target is remote.target.", true},
		{RuleTargetSecretTemplate, SeverityWarning, "A target's kubeconfigSecretRef.name is literal: a templated one lets each custom resource pick any kubeconfig Secret of that namespace, and ork needs get on all of them.", false},
		{RuleDeclarativeEntry, SeverityError, "Every declarative entry has its type's fields: the required ones, no unknown ones, literals of the right type.", true},
	}
	slices.SortFunc(rs, func(a, b RuleInfo) int { return cmp.Compare(a.ID, b.ID) })
	return rs
}

// Info returns the rule's description; ok is false for an unknown rule.
func (r Rule) Info() (RuleInfo, bool) {
	for _, info := range Rules() {
		if info.ID == r {
			return info, true
		}
	}
	return RuleInfo{}, false
}
