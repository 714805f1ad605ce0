package simulator

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// login posts credentials and returns the answer and the cookies set.
func (s *testSim) login(params map[string]string) (response, []*http.Cookie) {
	s.t.Helper()
	v := url.Values{"command": {"login"}, "response": {"json"}}
	for k, val := range params {
		v.Set(k, val)
	}
	r := s.do(mustRequest(http.MethodPost, s.api, v))
	return r, r.cookies
}

func mustRequest(method, target string, v url.Values) *http.Request {
	req, _ := http.NewRequest(method, target, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func cookie(cs []*http.Cookie, name string) *http.Cookie {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestLoginSessionGetUserKeys is the harness path: log in as admin, fetch the
// admin's keys with the session, then use the keys with cloudstack-go.
func TestLoginSessionGetUserKeys(t *testing.T) {
	s := startSim(t, Options{})
	r, cookies := s.login(map[string]string{"username": "admin", "password": "password"})
	lr := r.inner(t, "loginresponse")
	if r.status != 200 || lr["username"] != "admin" || lr["account"] != "admin" || lr["type"] != "1" ||
		num(lr["timeout"]) != 1800 || lr["sessionkey"] == "" || lr["domainid"] == "" {
		t.Fatalf("login: %d %s", r.status, r.raw)
	}
	jsession := cookie(cookies, "JSESSIONID")
	if jsession == nil || cookie(cookies, "sessionkey") == nil {
		t.Fatalf("cookies = %v", cookies)
	}
	keys := s.post(url.Values{"command": {"getUserKeys"}, "id": {lr["userid"].(string)},
		"sessionkey": {lr["sessionkey"].(string)}, "response": {"json"}}, jsession)
	uk := keys.inner(t, "getuserkeysresponse")["userkeys"].(map[string]any)
	if uk["apikey"] != testKey || uk["secretkey"] != testSecret {
		t.Fatalf("getUserKeys: %s", keys.raw)
	}
	if _, err := cloudstack.NewClient(s.api, testKey, testSecret, false).Zone.ListZones(&cloudstack.ListZonesParams{}); err != nil {
		t.Fatal(err)
	}
}

func TestSessionKeyMustMatch(t *testing.T) {
	s := startSim(t, Options{})
	r, cookies := s.login(map[string]string{"username": "admin", "password": "password", "domain": "/"})
	key := r.inner(t, "loginresponse")["sessionkey"].(string)
	jsession := cookie(cookies, "JSESSIONID")
	list := url.Values{"command": {"listZones"}, "response": {"json"}}

	s.post(list, jsession).wantError(t, "listzonesresponse", 401, 0, "unable to verify user credentials")
	// The failure ended the session: even the right key no longer works, and
	// without a signature the request is then refused as unsigned.
	list.Set("sessionkey", key)
	s.post(list, jsession).wantError(t, "listzonesresponse", 401, 0, kernel.BadCredentials)
}

func TestSessionThroughCloudStackGoCookieJar(t *testing.T) {
	s := startSimNoKeys(t, Options{})
	jar, _ := cookiejar.New(nil)
	cs := cloudstack.NewClient(s.api, "", "", false, cloudstack.WithHTTPClient(&http.Client{Jar: jar}))
	login, err := cs.Authentication.Login(cs.Authentication.NewLoginParams("password", "admin"))
	if err != nil {
		t.Fatal(err)
	}
	// The jar sends JSESSIONID and the sessionkey cookie: CookieOrParameter.
	keys, err := cs.User.GetUserKeys(cs.User.NewGetUserKeysParams(login.Userid))
	if err != nil || keys.Apikey != "" {
		t.Fatalf("keys before registering = %+v, %v", keys, err)
	}
	reg, err := cs.User.RegisterUserKeys(cs.User.NewRegisterUserKeysParams(login.Userid))
	if err != nil || len(reg.Apikey) != 86 || len(reg.Secretkey) != 86 {
		t.Fatalf("registerUserKeys = %+v, %v", reg, err)
	}
	if _, err := cloudstack.NewClient(s.api, reg.Apikey, reg.Secretkey, false).Zone.ListZones(&cloudstack.ListZonesParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Authentication.Logout(cs.Authentication.NewLogoutParams()); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.User.GetUserKeys(cs.User.NewGetUserKeysParams(login.Userid)); err == nil {
		t.Fatal("session still valid after logout")
	}
}

func TestLoginFailures(t *testing.T) {
	s := startSim(t, Options{})
	r, _ := s.login(map[string]string{"username": "admin", "password": "nope"})
	r.wantError(t, "loginresponse", 531, 0, "Failed to authenticate user admin in domain 1; please provide valid credentials")
	r, _ = s.login(map[string]string{"username": "admin", "password": "password", "domain": "ROOT"})
	r.wantError(t, "loginresponse", 531, 0, "Unable to find the domain from the path /ROOT/")
	r, _ = s.login(map[string]string{"username": "admin", "password": "password", "domainId": "1"})
	if r.status != 200 {
		t.Fatalf("domainId=1: %d %s", r.status, r.raw)
	}
	root := r.inner(t, "loginresponse")["domainid"].(string)
	if r, _ = s.login(map[string]string{"username": "admin", "password": "password", "domainid": root}); r.status != 200 {
		t.Fatalf("domainid=<ROOT's UUID>: %d %s", r.status, r.raw)
	}
	r, _ = s.login(map[string]string{"username": "admin", "password": "password", "domainid": "root"})
	r.wantError(t, "loginresponse", 401, 0, "Invalid domain id entered, please enter a valid one")
	r, _ = s.login(map[string]string{"username": "admin", "password": "password", "domainid": "7"})
	r.wantError(t, "loginresponse", 531, 0, "Unable to find the domain from the path null")
	// domainid 0 is no id: the path decides, and none means ROOT.
	if r, _ = s.login(map[string]string{"username": "admin", "password": "password", "domainid": "0"}); r.status != 200 {
		t.Fatalf("domainid=0: %d %s", r.status, r.raw)
	}
	r, _ = s.login(map[string]string{"username": "admin"})
	r.wantError(t, "loginresponse", 531, 0, "Failed to authenticate user admin in domain 1; please provide valid credentials")
	if r, _ = s.login(map[string]string{"password": "password"}); r.status != 531 || r.raw != "null" || r.contentType != kernel.JSONContentType {
		t.Fatalf("no username: %d %q %q", r.status, r.contentType, r.raw)
	}
}

// TestLoginNeedsPost: DefaultLoginAPIAuthenticatorCmd refuses other methods
// with its bare message; cloudstack-go's Login posts and succeeds.
func TestLoginNeedsPost(t *testing.T) {
	s := startSimNoKeys(t, Options{})
	v := url.Values{"command": {"login"}, "username": {"admin"}, "password": {"password"}, "response": {"json"}}
	r := s.do(mustRequest(http.MethodGet, s.api+"?"+v.Encode(), nil))
	if r.status != http.StatusMethodNotAllowed || r.raw != "Please use HTTP POST to authenticate using this API" ||
		cookie(r.cookies, "sessionkey") != nil {
		t.Fatalf("GET login: %d %s %v", r.status, r.raw, r.cookies)
	}
	cs := cloudstack.NewClient(s.api, "", "", false)
	if _, err := cs.Authentication.Login(cs.Authentication.NewLoginParams("password", "admin")); err != nil {
		t.Fatalf("cloudstack-go login: %v", err)
	}
}

func TestRegisterUserKeysRotates(t *testing.T) {
	s := startSim(t, Options{})
	cs := s.client()
	users, err := cs.User.ListUsers(cs.User.NewListUsersParams())
	if err != nil || users.Count != 1 || users.Users[0].Apikey != testKey || users.Users[0].Secretkey != "" {
		t.Fatalf("listUsers = %+v, %v", users, err)
	}
	reg, err := cs.User.RegisterUserKeys(cs.User.NewRegisterUserKeysParams(users.Users[0].Id))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Zone.ListZones(&cloudstack.ListZonesParams{}); err == nil {
		t.Fatal("old keys still accepted")
	}
	fresh := cloudstack.NewClient(s.api, reg.Apikey, reg.Secretkey, false)
	keys, err := fresh.User.GetUserKeys(fresh.User.NewGetUserKeysParams(users.Users[0].Id))
	if err != nil || keys.Apikey != reg.Apikey || keys.Secretkey != reg.Secretkey {
		t.Fatalf("getUserKeys = %+v, %v", keys, err)
	}
	if strings.Contains(s.call(map[string]string{"command": "listAccounts"}).raw, "secretkey") {
		t.Fatal("listAccounts leaks a secret key")
	}
}

func TestListAccountsAndDomains(t *testing.T) {
	s := startSim(t, Options{})
	cs := s.client()
	accounts, err := cs.Account.ListAccounts(cs.Account.NewListAccountsParams())
	if err != nil || accounts.Count != 1 || accounts.Accounts[0].Name != "admin" || accounts.Accounts[0].Accounttype != 1 ||
		len(accounts.Accounts[0].User) != 1 {
		t.Fatalf("listAccounts = %+v, %v", accounts, err)
	}
	domains, err := cs.Domain.ListDomains(cs.Domain.NewListDomainsParams())
	if err != nil || domains.Count != 1 || domains.Domains[0].Name != "ROOT" || domains.Domains[0].Path != "ROOT" {
		t.Fatalf("listDomains = %+v, %v", domains, err)
	}
}

// TestNoCommand: the servlet answers a live session 400 and anyone else 401;
// with parameters but no command the error's name is getSerializedApiError's
// null.
func TestNoCommand(t *testing.T) {
	s := startSim(t, Options{})
	s.do(mustRequest(http.MethodGet, s.api, nil)).wantError(t, "errorresponse", 401, 0, kernel.BadCredentials)
	s.get(signed(v3(map[string]string{}, time.Minute), testKey, testSecret)).wantError(t, "null", 401, 0, kernel.BadCredentials)
	r, cookies := s.login(map[string]string{"username": "admin", "password": "password"})
	key := r.inner(t, "loginresponse")["sessionkey"].(string)
	s.post(url.Values{"sessionkey": {key}, "response": {"json"}}, cookie(cookies, "JSESSIONID")).
		wantError(t, "null", 400, 0, "no command specified")
	s.post(url.Values{"sessionkey": {"wrong"}, "response": {"json"}}, cookie(cookies, "JSESSIONID")).
		wantError(t, "null", 401, 0, "unable to verify user credentials")
}
