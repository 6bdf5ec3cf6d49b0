package opcallback

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/orkspace/ork/internal/operation"
)

// SecretKey is the key of the callback Secret that holds the HMAC key.
const SecretKey = "key"

// CheckOptions refuses a half-configured completion callback: a URL without a listener (or a
// key) would send reconcilers somewhere nothing answers.
func CheckOptions(callbackURL, addr, secret string) error {
	set := []bool{callbackURL != "", addr != "", secret != ""}
	if !set[0] && !set[1] && !set[2] {
		return nil
	}
	if !set[0] || !set[1] || !set[2] {
		return errors.New("operation callback: set the URL, the listen address and the Secret together (--operation-callback-url, --operation-callback-addr, --operation-callback-secret)")
	}
	if errs := validation.IsDNS1123Subdomain(secret); len(errs) > 0 {
		return fmt.Errorf("operation callback Secret %q: %s", secret, strings.Join(errs, "; "))
	}
	u, err := url.Parse(callbackURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("operation callback URL %q: want an absolute http or https URL without query or fragment", callbackURL)
	}
	return nil
}

// KeyReader reads the HMAC key of the callback tokens, SecretKey of the Secret
// namespace/name, through read: the engine's Secret cache, so that a rotated key is used
// within the cache's TTL (tokens already sent then fail, and the operation is polled as
// usual).
func KeyReader(read func(ctx context.Context, namespace, name, key string) ([]byte, error), namespace, name string) func(context.Context) ([]byte, error) {
	return func(ctx context.Context) ([]byte, error) {
		k, err := read(ctx, namespace, name, SecretKey)
		if err != nil {
			return nil, fmt.Errorf("operation callback key: %w", err)
		}
		if len(k) < 16 {
			return nil, fmt.Errorf("operation callback key: secret %s/%s key %q has %d bytes, want at least 16", namespace, name, SecretKey, len(k))
		}
		return k, nil
	}
}

// Sender is the callback a request offers for the operation id of the custom resource uid
// at generation: callbackURL's /operations/{token}, the token bound to that operation
// (Token). Without the key the call goes on without one (logged): the operation is polled
// as usual.
func Sender(callbackURL string, key func(context.Context) ([]byte, error), log *slog.Logger) func(ctx context.Context, uid types.UID, generation int64, id string) *operation.Callback {
	base := strings.TrimSuffix(callbackURL, "/") + "/operations/"
	return func(ctx context.Context, uid types.UID, generation int64, id string) *operation.Callback {
		k, err := key(ctx)
		if err != nil {
			log.Warn("no operation callback sent", "err", err)
			return nil
		}
		token := Token(k, uid, generation, id)
		return &operation.Callback{URL: base + token, Token: token}
	}
}
