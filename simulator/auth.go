package simulator

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// verifySignature is ApiServer.verifyRequest for requests signed with API
// keys. Every failure is the same 401 (ApiServlet.processRequestInContext),
// so a client cannot tell a wrong key from a wrong signature, an expired
// request or a command that does not exist. Not modelled (defaults kept):
// enforce.post.requests.and.timestamps, api.key.access
// (verifyApiKeyAccessAllowed), key pair permissions and validity dates.
func (s *engine) verifySignature(raw rawParams, api *schema.API, now time.Time) (*model.User, *APIError) {
	fail := unauthorized(badCredentials)
	if api == nil {
		return nil, fail
	}
	var signature, apiKey, version, expires string
	var parts []string
	for _, name := range raw.sortedNames() {
		value := raw[name]
		switch strings.ToLower(name) {
		case "signature":
			signature = value
			continue
		case "apikey":
			apiKey = value
		case "signatureversion":
			version = value
		case "expires":
			expires = value
		}
		parts = append(parts, name+"="+javaURLEncode(value))
	}
	if signature == "" || apiKey == "" {
		return nil, fail
	}
	// Only version 3 makes expires binding; legacy signatures never expire.
	if version == "3" {
		t, ok := parseTZDate(expires)
		if !ok || t.Before(now) {
			return nil, fail
		}
	}
	user := s.st.UserByAPIKey(apiKey)
	if user == nil || !userActive(s.st, user) {
		return nil, fail
	}
	// verifyRequest asks commandAvailable before it checks the signature.
	if err := commandAvailable(s.st, user, api.Name); err != nil {
		return nil, err
	}
	if user.SecretKey == "" {
		return nil, fail
	}
	if !validSignature(strings.Join(parts, "&"), user.SecretKey, signature) {
		return nil, fail
	}
	return user, nil
}

// validSignature compares in constant time, like ConstantTimeComparator.
func validSignature(unsigned, secret, signature string) bool {
	mac := hmac.New(sha1.New, []byte(secret))
	mac.Write([]byte(strings.ToLower(unsigned)))
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	return subtle.ConstantTimeCompare([]byte(want), []byte(signature)) == 1
}

// javaURLEncode is java.net.URLEncoder.encode(value, "UTF-8") followed by
// CloudStack's replaceAll("\\+", "%20"): letters, digits and . - * _ stay,
// everything else becomes %XX of its UTF-8 bytes. Note that '~' is encoded,
// unlike Go's and Python's escaping.
func javaURLEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '.', c == '-', c == '*', c == '_':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// tzLayouts are the formats DateUtil.parseTZDateString accepts for expires:
// ISO offsets (Z, +00:00), "+0000" offsets, a legacy literal 'Z' followed by
// an offset, each with optional fractional seconds (Go accepts a fraction
// after the seconds even when the layout has none).
var tzLayouts = []string{
	"2006-01-02T15:04:05Z07:00",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05-0700",
	"2006-01-02T15:04:05Z07",
	"2006-01-02T15:04:05Z-0700",
}

func parseTZDate(s string) (time.Time, bool) {
	for _, layout := range tzLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
