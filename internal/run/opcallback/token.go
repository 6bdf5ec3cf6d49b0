// Package opcallback is ork's completion callback for long-running operations: the token
// that authorises one operation's callback, and the HTTP handler of POST
// /operations/{token}, which wakes the custom resource's poll early. It knows the engine
// through Deps (a key getter, the gate's owns, a lookup in the cache and a wake callback),
// never the controller.
package opcallback

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
)

// version prefixes what is signed, so that a later token format can never verify as this
// one under the same key.
const version = "ork-operation-callback/v1\n"

// Token is the callback token of the operation id that the custom resource uid holds for
// generation, under key: HMAC-SHA256, base64url without padding. id "" is the token of a
// call that may start an operation (prepared.callback): bound to the uid and generation
// only, since the id is the reconciler's answer.
func Token(key []byte, uid types.UID, generation int64, id string) string {
	return base64.RawURLEncoding.EncodeToString(mac(key, uid, generation, id))
}

// Valid reports whether token was issued under key for the operation id of uid at
// generation, either for that operation or for the call that started it. The comparison is
// constant time.
func Valid(key []byte, token string, uid types.UID, generation int64, id string) bool {
	got, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(got) != sha256.Size || id == "" {
		return false
	}
	// Both are computed and compared, so that which one matched takes no measurable time.
	held := hmac.Equal(got, mac(key, uid, generation, id))
	start := hmac.Equal(got, mac(key, uid, generation, ""))
	return held || start
}

func mac(key []byte, uid types.UID, generation int64, id string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(version))
	// Length-prefixed fields: no two (uid, generation, id) sign the same bytes.
	for _, f := range []string{string(uid), strconv.FormatInt(generation, 10), id} {
		h.Write([]byte(strconv.Itoa(len(f)) + ":" + f + "\n"))
	}
	return h.Sum(nil)
}
