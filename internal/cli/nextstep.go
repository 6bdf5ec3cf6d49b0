package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/orkspace/ork/internal/katalog"
)

// besideSecrets is the secret.yaml beside crd's Katalog file (ork init writes the token
// there) when crd reads a Secret, the file exists and given does not name it already.
func besideSecrets(crd *katalog.CRD, given []string) string {
	r := crd.OperatorBox.Reconcile.Remote
	if r == nil || crd.Source == nil {
		return ""
	}
	readsSecret := (r.Auth != nil && r.Auth.SecretRef != nil) || (r.TLS != nil && r.TLS.CASecretRef != nil)
	p := filepath.Join(filepath.Dir(crd.Source.Path), "secret.yaml")
	if !readsSecret || slices.ContainsFunc(given, func(g string) bool { return filepath.Clean(g) == p }) {
		return ""
	}
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return p
}

// remoteNextStep is the ork command (simulate or remote check) that takes the remote CRDs
// named further: the Katalog files, the --secrets files given and the secret.yaml beside the
// Katalogs for their Secrets.
func remoteNextStep(set *katalog.Set, crds []string, command string, given []string) string {
	args := []string{"ork", command}
	for _, f := range set.Files {
		args = append(args, "-f", f.Path)
	}
	if command == "simulate" {
		args = append(args, "--remote")
	}
	secrets := slices.Clone(given)
	for _, name := range crds {
		if s := besideSecrets(set.CRD(name), given); s != "" && !slices.Contains(secrets, s) {
			secrets = append(secrets, s)
		}
	}
	for _, s := range secrets {
		args = append(args, "--secrets", s)
	}
	return strings.Join(args, " ")
}
