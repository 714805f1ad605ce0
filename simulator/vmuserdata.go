package simulator

import (
	"crypto/rand"
	"encoding/base64"
	"math/big"
	"net/url"
	"strings"
)

// validateUserData is UserDataManagerImpl.validateUserData for a POST
// request (the simulator applies the POST limit to GET requests too): the
// base64 text, at most vm.userdata.max.length characters (read at each call,
// as validateAndDecodeByHTTPMethod reads the dynamic setting), is stored
// re-encoded with padding.
func (st *state) validateUserData(ud string) (string, error) {
	if ud == "" {
		return "", nil
	}
	if strings.Contains(ud, "%") {
		decoded, err := url.QueryUnescape(ud)
		if err != nil {
			return "", paramError("Url decoding of userdata failed.")
		}
		ud = decoded
	}
	if !isBase64(ud) {
		return "", paramError("User data is not base64 encoded")
	}
	if len(ud) >= userDataMaxPOST {
		return "", paramError("User data is too long for an http POST request")
	}
	if maxLen := st.settingInt(settingUserDataMaxLen); len(ud) > maxLen {
		return "", paramError("User data has exceeded configurable max length : %d", maxLen)
	}
	decoded := decodeBase64Lenient(ud)
	if len(decoded) < 1 {
		return "", paramError("User data is too short")
	}
	return base64.StdEncoding.EncodeToString(decoded), nil
}

// isBase64 is commons-codec's Base64.isBase64(String): only characters of
// the standard or URL-safe alphabet, padding and whitespace.
func isBase64(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z', r >= '0' && r <= '9',
			r == '+', r == '/', r == '-', r == '_', r == '=', r == ' ', r == '\t', r == '\r', r == '\n':
		default:
			return false
		}
	}
	return true
}

// decodeBase64Lenient decodes like commons-codec: both alphabets, padding
// and whitespace ignored, a trailing partial quantum dropped.
func decodeBase64Lenient(s string) []byte {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '-':
			return '+'
		case '_':
			return '/'
		case '=', ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
	if len(s)%4 == 1 {
		s = s[:len(s)-1]
	}
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil
	}
	return b
}

// randomPassword is a password for a password-enabled template.
func randomPassword(n int) string {
	const alphabet = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	b := make([]byte, n)
	for i := range b {
		k, _ := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		b[i] = alphabet[k.Int64()]
	}
	return string(b)
}
