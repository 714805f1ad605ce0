package kernel

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

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/schema"
)

// sessionTimeout is the servlet container's session timeout, reported as
// "timeout" in the login answer.
const sessionTimeout = 30 * time.Minute

// Session is a login session, identified by the JSESSIONID cookie and
// guarded by the session key (CloudStack's CSRF token).
type Session struct {
	id      string
	key     string
	userID  string
	expires time.Time
}

// sessionFor returns the live session named by the JSESSIONID cookie, which
// carries Jetty's ".node0" suffix (HttpUtils.validateSessionKey requires it;
// the simulator also takes the bare id).
func (s *Engine) sessionFor(r *http.Request, now time.Time) *Session {
	c, err := r.Cookie("JSESSIONID")
	if err != nil {
		return nil
	}
	id, _, _ := strings.Cut(c.Value, ".")
	sess := s.Sessions[id]
	if sess == nil || now.After(sess.expires) {
		delete(s.Sessions, id)
		return nil
	}
	return sess
}

// sessionUser authenticates a request that belongs to a session: the
// servlet's session checks, then ApiServer.verifyRequest with a logged-in
// user, whose unknown command is checkCommandAvailable's PermissionDenied
// (401, 9999, "errorresponse").
func (s *Engine) sessionUser(r *http.Request, sess *Session, raw rawParams, api *schema.API, now time.Time) (*model.User, *APIError) {
	user, err := s.sessionCaller(r, sess, raw)
	if err != nil {
		return nil, err
	}
	if api == nil {
		return nil, &APIError{Code: codeUnauthorized, CSCode: CsServerAPIException, responseName: "errorresponse",
			Text: fmt.Sprintf("The given command '%s' either does not exist, is not available for user.", raw["command"])}
	}
	if err := s.commandAvailable(user, api.Name, now); err != nil {
		return nil, err
	}
	sess.expires = now.Add(sessionTimeout)
	return user, nil
}

// sessionCaller is ApiServlet.processRequestInContext's check of a session:
// HttpUtils.validateSessionKey (the key as the sessionkey parameter or
// cookie, every copy sent matching: api.sessionkey.check.locations=
// CookieOrParameter), then ApiServer.verifyUser. A failure ends the session.
func (s *Engine) sessionCaller(r *http.Request, sess *Session, raw rawParams) (*model.User, *APIError) {
	fromParam, hasParam := raw["sessionkey"]
	fromCookie, hasCookie := "", false
	if c, err := r.Cookie("sessionkey"); err == nil {
		fromCookie, hasCookie = c.Value, true
	}
	ok := (hasParam || hasCookie) &&
		(!hasParam || subtle.ConstantTimeCompare([]byte(fromParam), []byte(sess.key)) == 1) &&
		(!hasCookie || subtle.ConstantTimeCompare([]byte(fromCookie), []byte(sess.key)) == 1)
	user, _ := model.ByID(s.State.Users, sess.userID)
	if !ok || user == nil || !userActive(s.State, user) {
		delete(s.Sessions, sess.id)
		return nil, unauthorized("unable to verify user credentials")
	}
	return user, nil
}

// login is DefaultLoginAPIAuthenticatorCmd.authenticate, then
// ApiServer.loginUser: POST only, username and password, optional domain
// path or domainid; no signature. Its ServerApiExceptions reach the client as
// their bare message (ApiServlet.processRequestInContext), which for a failed
// login is an error body serialized without cserrorcode.
func (s *Engine) login(method string, raw rawParams, now time.Time) *Reply {
	if method != http.MethodPost {
		return &Reply{Status: http.StatusMethodNotAllowed, Raw: "Please use HTTP POST to authenticate using this API", rawJSON: true}
	}
	fail := func(code int, text string) *Reply {
		return errorReply("loginresponse", &APIError{Code: code, Text: text})
	}
	username, ok := raw["username"]
	if !ok {
		// No username: the authenticator throws with a null message, which
		// the servlet prints.
		return &Reply{Status: CodeAccountError, Raw: "null", rawJSON: true}
	}
	dom, path, badID := s.loginDomain(raw)
	if badID {
		return fail(codeUnauthorized, "Invalid domain id entered, please enter a valid one")
	}
	if dom == nil {
		return fail(CodeAccountError, "Unable to find the domain from the path "+path)
	}
	user := userInDomain(s.State, username, dom.ID)
	if user == nil || !user.CheckPassword(raw["password"]) || !userActive(s.State, user) {
		return fail(CodeAccountError, fmt.Sprintf("Failed to authenticate user %s in domain %d; please provide valid credentials", username, dom.InternalID))
	}
	sess := &Session{id: randomHex(16), key: sessionKey(), userID: user.ID, expires: now.Add(sessionTimeout)}
	s.Sessions[sess.id] = sess
	rep := okReply("loginresponse", s.loginView(user, sess))
	rep.cookies = []*http.Cookie{
		{Name: "JSESSIONID", Value: sess.id + ".node0", Path: "/client", HttpOnly: true},
		{Name: "sessionkey", Value: sess.key, HttpOnly: true},
	}
	return rep
}

// loginDomain resolves the login's domain: domainid as a domain UUID
// (ApiServer.fetchDomainId) or CloudStack's internal number, anything else
// refused; then DomainManagerImpl.findDomainByIdOrPath: an id of 1 or more
// is looked up alone, otherwise the path as getDomainName normalises it
// ("/path/"), otherwise ROOT. path is what the failure text shows: "null"
// when no domain was sent.
func (s *Engine) loginDomain(raw rawParams) (dom *model.Domain, path string, badID bool) {
	path = "null"
	if p, ok := raw["domain"]; ok {
		path = p
		if !strings.HasSuffix(path, "/") {
			path += "/"
		}
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
	}
	var id int64
	if idText := firstOf(raw, "domainid", "domainId"); idText != "" {
		if d, ok := model.ByID(s.State.Domains, idText); ok {
			return d, path, false
		}
		n, err := strconv.ParseInt(idText, 10, 64)
		if err != nil {
			return nil, path, true
		}
		id = n
	}
	if id >= 1 {
		for _, d := range s.State.Domains {
			if d.InternalID == id {
				return d, path, false
			}
		}
		return nil, path, false
	}
	want := "/"
	if _, sent := raw["domain"]; sent {
		want = strings.TrimSpace(path)
	}
	for _, d := range s.State.Domains {
		if strings.EqualFold(d.Path, want) {
			return d, path, false
		}
	}
	return nil, path, false
}

func firstOf(raw rawParams, names ...string) string {
	for _, n := range names {
		if v := raw[n]; v != "" {
			return v
		}
	}
	return ""
}

func userInDomain(st *model.State, username, domainID string) *model.User {
	for _, u := range st.Users {
		if a := st.Account(u.AccountID); a != nil && a.DomainID == domainID && u.Username == username {
			return u
		}
	}
	return nil
}

// loginView is ApiServer.createLoginResponse over loginUser's session
// attributes.
func (s *Engine) loginView(u *model.User, sess *Session) map[string]any {
	a := s.State.Account(u.AccountID)
	v := map[string]any{"username": u.Username, "userid": u.ID, "domainid": a.DomainID,
		"timeout": int(sessionTimeout.Seconds()), "account": a.Name, "firstname": u.Firstname,
		"lastname": u.Lastname, "type": strconv.Itoa(a.Type), "registered": "false",
		"sessionkey": sess.key, "is2faenabled": "false", "is2faverified": "true",
		"issuerfor2fa": "CloudStack"}
	if a.Type == 1 {
		v["managementserverid"] = s.State.ManagementServerID
	}
	if u.Timezone != "" {
		v["timezone"] = u.Timezone
	}
	return v
}

// logout is DefaultLogoutAPIAuthenticatorCmd.authenticate ({"description":
// "success"}) and ApiServlet's LOGOUT_API branch: the session ends and every
// cookie the client sent is expired.
func (s *Engine) logout(r *http.Request) *Reply {
	if c, err := r.Cookie("JSESSIONID"); err == nil {
		id, _, _ := strings.Cut(c.Value, ".")
		delete(s.Sessions, id)
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
