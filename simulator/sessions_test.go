package simulator_test

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

// login posts credentials and returns the answer and the cookies set.
func login(s *simtesting.Sim, params map[string]string) (simtesting.Response, []*http.Cookie) {
	s.T.Helper()
	v := url.Values{"command": {"login"}, "response": {"json"}}
	for k, val := range params {
		v.Set(k, val)
	}
	r := s.Do(mustRequest(http.MethodPost, s.API, v))
	return r, r.Cookies
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
	s := simtesting.Start(t, simulator.Options{})
	r, cookies := login(s, map[string]string{"username": "admin", "password": "password"})
	lr := r.Inner(t, "loginresponse")
	if r.Status != 200 || lr["username"] != "admin" || lr["account"] != "admin" || lr["type"] != "1" ||
		simtesting.Num(lr["timeout"]) != 1800 || lr["sessionkey"] == "" || lr["domainid"] == "" {
		t.Fatalf("login: %d %s", r.Status, r.Raw)
	}
	jsession := cookie(cookies, "JSESSIONID")
	if jsession == nil || cookie(cookies, "sessionkey") == nil {
		t.Fatalf("cookies = %v", cookies)
	}
	keys := s.Post(url.Values{"command": {"getUserKeys"}, "id": {lr["userid"].(string)},
		"sessionkey": {lr["sessionkey"].(string)}, "response": {"json"}}, jsession)
	uk := keys.Inner(t, "getuserkeysresponse")["userkeys"].(map[string]any)
	if uk["apikey"] != simtesting.Key || uk["secretkey"] != simtesting.Secret {
		t.Fatalf("getUserKeys: %s", keys.Raw)
	}
	if _, err := cloudstack.NewClient(s.API, simtesting.Key, simtesting.Secret, false).Zone.ListZones(&cloudstack.ListZonesParams{}); err != nil {
		t.Fatal(err)
	}
}

func TestSessionKeyMustMatch(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	r, cookies := login(s, map[string]string{"username": "admin", "password": "password", "domain": "/"})
	key := r.Inner(t, "loginresponse")["sessionkey"].(string)
	jsession := cookie(cookies, "JSESSIONID")
	list := url.Values{"command": {"listZones"}, "response": {"json"}}

	s.Post(list, jsession).WantError(t, "listzonesresponse", 401, 0, "unable to verify user credentials")
	// The failure ended the session: even the right key no longer works, and
	// without a signature the request is then refused as unsigned.
	list.Set("sessionkey", key)
	s.Post(list, jsession).WantError(t, "listzonesresponse", 401, 0, kernel.BadCredentials)
}

func TestSessionThroughCloudStackGoCookieJar(t *testing.T) {
	s := simtesting.Serve(t, simulator.Options{})
	jar, _ := cookiejar.New(nil)
	cs := cloudstack.NewClient(s.API, "", "", false, cloudstack.WithHTTPClient(&http.Client{Jar: jar}))
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
	if _, err := cloudstack.NewClient(s.API, reg.Apikey, reg.Secretkey, false).Zone.ListZones(&cloudstack.ListZonesParams{}); err != nil {
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
	s := simtesting.Start(t, simulator.Options{})
	r, _ := login(s, map[string]string{"username": "admin", "password": "nope"})
	r.WantError(t, "loginresponse", 531, 0, "Failed to authenticate user admin in domain 1; please provide valid credentials")
	r, _ = login(s, map[string]string{"username": "admin", "password": "password", "domain": "ROOT"})
	r.WantError(t, "loginresponse", 531, 0, "Unable to find the domain from the path /ROOT/")
	r, _ = login(s, map[string]string{"username": "admin", "password": "password", "domainId": "1"})
	if r.Status != 200 {
		t.Fatalf("domainId=1: %d %s", r.Status, r.Raw)
	}
	root := r.Inner(t, "loginresponse")["domainid"].(string)
	if r, _ = login(s, map[string]string{"username": "admin", "password": "password", "domainid": root}); r.Status != 200 {
		t.Fatalf("domainid=<ROOT's UUID>: %d %s", r.Status, r.Raw)
	}
	r, _ = login(s, map[string]string{"username": "admin", "password": "password", "domainid": "root"})
	r.WantError(t, "loginresponse", 401, 0, "Invalid domain id entered, please enter a valid one")
	r, _ = login(s, map[string]string{"username": "admin", "password": "password", "domainid": "7"})
	r.WantError(t, "loginresponse", 531, 0, "Unable to find the domain from the path null")
	// domainid 0 is no id: the path decides, and none means ROOT.
	if r, _ = login(s, map[string]string{"username": "admin", "password": "password", "domainid": "0"}); r.Status != 200 {
		t.Fatalf("domainid=0: %d %s", r.Status, r.Raw)
	}
	r, _ = login(s, map[string]string{"username": "admin"})
	r.WantError(t, "loginresponse", 531, 0, "Failed to authenticate user admin in domain 1; please provide valid credentials")
	if r, _ = login(s, map[string]string{"password": "password"}); r.Status != 531 || r.Raw != "null" || r.ContentType != kernel.JSONContentType {
		t.Fatalf("no username: %d %q %q", r.Status, r.ContentType, r.Raw)
	}
}

// TestLoginNeedsPost: DefaultLoginAPIAuthenticatorCmd refuses other methods
// with its bare message; cloudstack-go's Login posts and succeeds.
func TestLoginNeedsPost(t *testing.T) {
	s := simtesting.Serve(t, simulator.Options{})
	v := url.Values{"command": {"login"}, "username": {"admin"}, "password": {"password"}, "response": {"json"}}
	r := s.Do(mustRequest(http.MethodGet, s.API+"?"+v.Encode(), nil))
	if r.Status != http.StatusMethodNotAllowed || r.Raw != "Please use HTTP POST to authenticate using this API" ||
		cookie(r.Cookies, "sessionkey") != nil {
		t.Fatalf("GET login: %d %s %v", r.Status, r.Raw, r.Cookies)
	}
	cs := cloudstack.NewClient(s.API, "", "", false)
	if _, err := cs.Authentication.Login(cs.Authentication.NewLoginParams("password", "admin")); err != nil {
		t.Fatalf("cloudstack-go login: %v", err)
	}
}

func TestRegisterUserKeysRotates(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	users, err := cs.User.ListUsers(cs.User.NewListUsersParams())
	if err != nil || users.Count != 1 || users.Users[0].Apikey != simtesting.Key || users.Users[0].Secretkey != "" {
		t.Fatalf("listUsers = %+v, %v", users, err)
	}
	reg, err := cs.User.RegisterUserKeys(cs.User.NewRegisterUserKeysParams(users.Users[0].Id))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Zone.ListZones(&cloudstack.ListZonesParams{}); err == nil {
		t.Fatal("old keys still accepted")
	}
	fresh := cloudstack.NewClient(s.API, reg.Apikey, reg.Secretkey, false)
	keys, err := fresh.User.GetUserKeys(fresh.User.NewGetUserKeysParams(users.Users[0].Id))
	if err != nil || keys.Apikey != reg.Apikey || keys.Secretkey != reg.Secretkey {
		t.Fatalf("getUserKeys = %+v, %v", keys, err)
	}
	if strings.Contains(s.Call(map[string]string{"command": "listAccounts"}).Raw, "secretkey") {
		t.Fatal("listAccounts leaks a secret key")
	}
}

func TestListAccountsAndDomains(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
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
	s := simtesting.Start(t, simulator.Options{})
	s.Do(mustRequest(http.MethodGet, s.API, nil)).WantError(t, "errorresponse", 401, 0, kernel.BadCredentials)
	s.Get(simtesting.Signed(simtesting.V3(map[string]string{}, time.Minute), simtesting.Key, simtesting.Secret)).WantError(t, "null", 401, 0, kernel.BadCredentials)
	r, cookies := login(s, map[string]string{"username": "admin", "password": "password"})
	key := r.Inner(t, "loginresponse")["sessionkey"].(string)
	s.Post(url.Values{"sessionkey": {key}, "response": {"json"}}, cookie(cookies, "JSESSIONID")).
		WantError(t, "null", 400, 0, "no command specified")
	s.Post(url.Values{"sessionkey": {"wrong"}, "response": {"json"}}, cookie(cookies, "JSESSIONID")).
		WantError(t, "null", 401, 0, "unable to verify user credentials")
}
