package simtesting

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// NewAccount creates an account through createAccount as the root admin and
// gives its user keys with registerUserKeys.
func NewAccount(t *testing.T, s *Sim, name string, accountType int) (key, secret string) {
	t.Helper()
	cs := s.Client()
	p := cs.Account.NewCreateAccountParams(name+"@example.org", "Ten", "Ant", "s3cret", name)
	p.SetAccounttype(accountType)
	a, err := cs.Account.CreateAccount(p)
	if err != nil {
		t.Fatalf("createAccount %s: %v", name, err)
	}
	if len(a.User) != 1 || a.Name != name || a.Accounttype != accountType {
		t.Fatalf("createAccount: %+v", a)
	}
	keys, err := cs.User.RegisterUserKeys(cs.User.NewRegisterUserKeysParams(a.User[0].Id))
	if err != nil {
		t.Fatal(err)
	}
	return keys.Apikey, keys.Secretkey
}

// AddTenant adds an account that is not an admin, with a user holding API
// keys, and returns a cloudstack-go client signing as that user.
func (e *VMEnv) AddTenant(t *testing.T, name string) (*cloudstack.CloudStackClient, string) {
	t.Helper()
	e.Srv.Mu.Lock()
	defer e.Srv.Mu.Unlock()
	st := e.Srv.State
	aid, aint := st.NewID(model.KindAccount)
	st.Accounts = append(st.Accounts, &model.Account{ID: aid, InternalID: aint, Name: name, Type: 0,
		DomainID: st.Accounts[0].DomainID, State: "enabled", Created: time.Now().UTC()})
	uid, uInternal := st.NewID(model.KindUser)
	st.Users = append(st.Users, &model.User{ID: uid, InternalID: uInternal, Username: name, AccountID: aid, State: "enabled",
		APIKey: name + "-key", SecretKey: name + "-secret"})
	return cloudstack.NewAsyncClient(e.API, name+"-key", name+"-secret", false), aid
}

// AdminGet GETs an admin endpoint (/sim/…) with the admin's basic auth and
// returns the body.
func AdminGet(t *testing.T, s *Sim, path string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, s.HTTP.URL+path, nil)
	req.SetBasicAuth(simulator.AdminUser, simulator.AdminPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
