package simulator

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// sessionTimeout is the servlet container's session timeout, reported as
// "timeout" in the login answer.
const sessionTimeout = 30 * time.Minute

// session is a login session, identified by the JSESSIONID cookie and
// guarded by the session key (CloudStack's CSRF token).
type session struct {
	id      string
	key     string
	userID  string
	expires time.Time
}

// sessionFor returns the live session named by the JSESSIONID cookie. The
// cookie carries a ".node0" route suffix, as Jetty's does.
func (s *Server) sessionFor(r *http.Request, now time.Time) *session {
	c, err := r.Cookie("JSESSIONID")
	if err != nil {
		return nil
	}
	id, _, _ := strings.Cut(c.Value, ".")
	sess := s.sessions[id]
	if sess == nil || now.After(sess.expires) {
		delete(s.sessions, id)
		return nil
	}
	return sess
}

// sessionUser authenticates a request that belongs to a session: the session
// key must come as the sessionkey parameter or cookie, and every copy sent
// must match (api.sessionkey.check.locations=CookieOrParameter).
func (s *Server) sessionUser(r *http.Request, sess *session, raw rawParams, api *schema.API, now time.Time) (*User, *APIError) {
	fromParam, hasParam := raw["sessionkey"]
	fromCookie, hasCookie := "", false
	if c, err := r.Cookie("sessionkey"); err == nil {
		fromCookie, hasCookie = c.Value, true
	}
	ok := (hasParam || hasCookie) &&
		(!hasParam || subtle.ConstantTimeCompare([]byte(fromParam), []byte(sess.key)) == 1) &&
		(!hasCookie || subtle.ConstantTimeCompare([]byte(fromCookie), []byte(sess.key)) == 1)
	user, _ := byID(s.st.Users, sess.userID)
	if !ok || user == nil || !s.st.userActive(user) {
		delete(s.sessions, sess.id)
		return nil, unauthorized("unable to verify user credentials")
	}
	if api == nil {
		return nil, &APIError{Code: codeUnauthorized, CSCode: csServerAPIException, responseName: "errorresponse",
			Text: fmt.Sprintf("The given command '%s' either does not exist, is not available for user.", raw["command"])}
	}
	sess.expires = now.Add(sessionTimeout)
	return user, nil
}

// login is DefaultLoginAPIAuthenticatorCmd: username and password, optional
// domain path or numeric domainId; no signature. Failures are 531 without a
// cserrorcode.
func (s *Server) login(raw rawParams, now time.Time) *reply {
	fail := func(text string) *reply {
		return errorReply("loginresponse", &APIError{Code: codeAccountError, Text: text})
	}
	username, password := raw["username"], raw["password"]
	if username == "" || password == "" {
		return fail("failed to authenticate user, check if username/password are correct")
	}
	dom, path := s.loginDomain(raw)
	if dom == nil {
		return fail("Unable to find the domain from the path " + path)
	}
	user := s.st.userInDomain(username, dom.ID)
	if user == nil || !user.checkPassword(password) || !s.st.userActive(user) {
		return fail(fmt.Sprintf("Failed to authenticate user %s in domain %d; please provide valid credentials", username, dom.InternalID))
	}
	sess := &session{id: randomHex(16), key: sessionKey(), userID: user.ID, expires: now.Add(sessionTimeout)}
	s.sessions[sess.id] = sess
	rep := okReply("loginresponse", s.loginView(user, sess))
	rep.cookies = []*http.Cookie{
		{Name: "JSESSIONID", Value: sess.id + ".node0", Path: "/client", HttpOnly: true},
		{Name: "sessionkey", Value: sess.key, HttpOnly: true},
	}
	return rep
}

// loginDomain resolves domainId (CloudStack's internal number) or the domain
// path, which CloudStack normalises to "/path/"; neither means ROOT.
func (s *Server) loginDomain(raw rawParams) (*Domain, string) {
	if idText := firstOf(raw, "domainId", "domainid"); idText != "" {
		id, _ := strconv.ParseInt(idText, 10, 64)
		for _, d := range s.st.Domains {
			if d.InternalID == id {
				return d, idText
			}
		}
		return nil, idText
	}
	path := strings.TrimSpace(raw["domain"])
	if path == "" {
		path = "/"
	}
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	if !strings.HasSuffix(path, "/") {
		path += "/"
	}
	for _, d := range s.st.Domains {
		if strings.EqualFold(d.Path, path) {
			return d, path
		}
	}
	return nil, path
}

func firstOf(raw rawParams, names ...string) string {
	for _, n := range names {
		if v := raw[n]; v != "" {
			return v
		}
	}
	return ""
}

func (st *state) userInDomain(username, domainID string) *User {
	for _, u := range st.Users {
		if a := st.account(u.AccountID); a != nil && a.DomainID == domainID && u.Username == username {
			return u
		}
	}
	return nil
}

func (s *Server) loginView(u *User, sess *session) map[string]any {
	a := s.st.account(u.AccountID)
	v := map[string]any{"username": u.Username, "userid": u.ID, "domainid": a.DomainID,
		"timeout": int(sessionTimeout.Seconds()), "account": a.Name, "firstname": u.Firstname,
		"lastname": u.Lastname, "type": strconv.Itoa(a.Type), "registered": "false",
		"sessionkey": sess.key, "is2faenabled": "false", "is2faverified": "true",
		"issuerfor2fa": "CloudStack"}
	if a.Type == 1 {
		v["managementserverid"] = s.st.ManagementServerID
	}
	if u.Timezone != "" {
		v["timezone"] = u.Timezone
	}
	return v
}

// logout ends the session named by the cookie, if any, and expires the
// cookies the client sent, as the servlet does.
func (s *Server) logout(r *http.Request) *reply {
	if c, err := r.Cookie("JSESSIONID"); err == nil {
		id, _, _ := strings.Cut(c.Value, ".")
		delete(s.sessions, id)
	}
	rep := okReply("logoutresponse", map[string]any{"description": "success"})
	for _, c := range r.Cookies() {
		rep.cookies = append(rep.cookies, &http.Cookie{Name: c.Name, Value: "", MaxAge: -1})
	}
	return rep
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return strings.ToUpper(hex.EncodeToString(b))
}

// sessionKey is 20 random bytes, URL-safe Base64 without padding, as in
// ApiServer.loginUser.
func sessionKey() string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
