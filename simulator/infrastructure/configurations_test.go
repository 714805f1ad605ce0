package infrastructure_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/template"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/vm"
)

// The -expunge-* flags set the settings the expunge thread reads at start.
func TestExpungeFlagsSetTheSettings(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{ExpungeInterval: 7, ExpungeDelay: 5})
	d, i := simtesting.ListSettings(t, s.Client(), "expunge.delay"), simtesting.ListSettings(t, s.Client(), "expunge.interval")
	if len(d) != 1 || d[0].Value != "5" || d[0].Defaultvalue != "86400" || len(i) != 1 || i[0].Value != "7" {
		t.Fatalf("expunge.delay = %+v, expunge.interval = %+v", d, i)
	}
}

func TestListConfigurationsShowsTheModelledSettings(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{UploadMonitorInterval: -1})
	all := simtesting.ListSettings(t, s.Client(), "")
	var names []string
	for _, c := range all {
		names = append(names, c.Name)
	}
	want := "api.throttling.cachesize api.throttling.enabled api.throttling.interval api.throttling.max expose.cloudstack.version.api.list.capabilities expunge.delay expunge.interval secstorage.allowed.internal.sites upload.monitoring.interval upload.operation.timeout vm.stats.interval vm.userdata.max.length"
	if strings.Join(names, " ") != want {
		t.Fatalf("settings = %q", names)
	}
	up := simtesting.ListSettings(t, s.Client(), "upload.monitoring")
	if len(up) != 1 || up[0].Value != "60" || up[0].Defaultvalue != "60" || !up[0].Isdynamic ||
		up[0].Category != "Advanced" || up[0].Component != "ImageStoreUploadMonitor" || up[0].Scope != "" ||
		up[0].Type != "Number" {
		t.Fatalf("upload.monitoring.interval = %+v", up)
	}
	sites := simtesting.ListSettings(t, s.Client(), "secstorage.allowed.internal.sites")
	if len(sites) != 1 || sites[0].Value != "" || sites[0].Defaultvalue != "" || sites[0].Isdynamic || sites[0].Type != "String" {
		t.Fatalf("secstorage.allowed.internal.sites = %+v", sites)
	}
	r := s.Call(map[string]string{"command": "listConfigurations", "name": "secstorage.allowed.internal.sites"})
	if strings.Contains(r.Raw, `"value"`) || strings.Contains(r.Raw, `"defaultvalue"`) {
		t.Errorf("a null value and default are left out: %s", r.Raw)
	}
	if got := s.Call(map[string]string{"command": "listConfigurations", "keyword": "IMAGESTOREUPLOAD"}).Raw; !strings.Contains(got, `"count":2`) {
		t.Errorf("keyword over the component: %s", got)
	}
	if got := s.Call(map[string]string{"command": "listConfigurations", "zoneid": simtesting.ZoneID(t, s, "Sandbox-simulator")}).Raw; got != `{"listconfigurationsresponse":{}}` {
		t.Errorf("no modelled setting has zone scope: %s", got)
	}
}

func TestUpdateConfigurationValidatesAsCloudStack(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	p := cs.Configuration.NewUpdateConfigurationParams("vm.userdata.max.length")
	p.SetValue("4096")
	r, err := cs.Configuration.UpdateConfiguration(p)
	if err != nil || r.Value != "4096" || r.Defaultvalue != "32768" {
		t.Fatalf("updateConfiguration: %+v, %v", r, err)
	}
	name := "updateconfigurationresponse"
	for _, c := range []struct{ name, value, text string }{
		{"no.such.setting", "1", "Config parameter with name no.such.setting doesn't exist"},
		{"upload.monitoring.interval", "soon", "There was error in trying to parse value: soon. Please enter a valid integer value for parameter upload.monitoring.interval"},
		{"expunge.delay", "", "There was error in trying to parse value: null. Please enter a valid integer value for parameter expunge.delay"},
		{"vm.userdata.max.length", "0", "Please enter a positive value for the configuration parameter:vm.userdata.max.length"},
		{"vm.userdata.max.length", "2000000", "Please enter a value less than 1048576 for the configuration parameter:vm.userdata.max.length"},
	} {
		s.Call(map[string]string{"command": "updateConfiguration", "name": c.name, "value": c.value}).
			WantError(t, name, 431, 4350, c.text)
	}
	s.Call(map[string]string{"command": "updateConfiguration", "name": "expunge.delay", "value": "5",
		"zoneid": simtesting.ZoneID(t, s, "Sandbox-simulator")}).WantError(t, name, 431, 4350, "Invalid scope id provided for the parameter expunge.delay")

	// A blank value stores null.
	sites := s.Call(map[string]string{"command": "updateConfiguration", "name": "secstorage.allowed.internal.sites", "value": "10.0.0.0/8"})
	if !strings.Contains(sites.Raw, `"value":"10.0.0.0/8"`) {
		t.Fatalf("set: %s", sites.Raw)
	}
	cleared := s.Call(map[string]string{"command": "updateConfiguration", "name": "secstorage.allowed.internal.sites", "value": " "})
	if strings.Contains(cleared.Raw, `"value"`) {
		t.Fatalf("cleared: %s", cleared.Raw)
	}

	// Through Debian's CLI too.
	out, errOut, err := simtesting.RunCLI(t, s, simtesting.Secret, "updateConfiguration", "name=expunge.delay", "value=120")
	if err != nil || !strings.Contains(out, `"value": "120"`) {
		t.Fatalf("cli: %v\n%s\n%s", err, out, errOut)
	}
	out, _, err = simtesting.RunCLI(t, s, simtesting.Secret, "listConfigurations", "name=expunge.delay")
	if err != nil || !strings.Contains(out, `"value": "120"`) || !strings.Contains(out, `"defaultvalue": "86400"`) {
		t.Fatalf("cli list: %v\n%s", err, out)
	}
}

// addTenant adds a user account (type 0) whose user signs with
// tenant-key/tenant-secret.
func addTenant(s *simtesting.Sim) {
	s.Srv.Mu.Lock()
	defer s.Srv.Mu.Unlock()
	id, internal := s.Srv.State.NewID(model.KindAccount)
	acct := &model.Account{ID: id, InternalID: internal, Name: "tenant", Type: 0, DomainID: s.Srv.State.Domains[0].ID, State: "enabled"}
	uid, uinternal := s.Srv.State.NewID(model.KindUser)
	s.Srv.State.Accounts = append(s.Srv.State.Accounts, acct)
	s.Srv.State.Users = append(s.Srv.State.Users, &model.User{ID: uid, InternalID: uinternal, Username: "tenant", AccountID: id,
		State: "enabled", APIKey: "tenant-key", SecretKey: "tenant-secret"})
}

func TestConfigurationsAreForTheRootAdminOnly(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	addTenant(s)
	for _, cmd := range []string{"listConfigurations", "updateConfiguration"} {
		r := s.Get(simtesting.Signed(simtesting.V3(map[string]string{"command": cmd, "name": "expunge.delay", "value": "1"}, time.Minute), "tenant-key", "tenant-secret"))
		r.WantError(t, "errorresponse", 432, 9999,
			"The API ["+cmd+"] does not exist or is not available for the account tenant.")
	}
}

// TestUserDataMaxLengthFollowsTheSetting: UserDataManagerImpl reads
// vm.userdata.max.length at every call.
func TestUserDataMaxLengthFollowsTheSetting(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	s.Call(map[string]string{"command": "updateConfiguration", "name": "vm.userdata.max.length", "value": "8"})
	s.Srv.Mu.Lock()
	_, err := vm.ValidateUserData(s.Srv.State, "aGVsbG8gd29ybGQ=") // 16 characters
	s.Srv.Mu.Unlock()
	if err == nil || kernel.AsAPIError(err).Text != "User data has exceeded configurable max length : 8" {
		t.Fatalf("16 characters over a limit of 8: %v", err)
	}
	s.Call(map[string]string{"command": "updateConfiguration", "name": "vm.userdata.max.length", "value": "16"})
	s.Srv.Mu.Lock()
	_, err = vm.ValidateUserData(s.Srv.State, "aGVsbG8gd29ybGQ=")
	s.Srv.Mu.Unlock()
	if err != nil {
		t.Fatalf("16 characters at a limit of 16: %v", err)
	}
}

// TestUploadSettingsTakeEffectAsInCloudStack: the upload parameters'
// expiry reads upload.operation.timeout at once; the monitor reads both
// settings when it starts, so an interval changed at run time applies after
// a restart.
func TestUploadSettingsTakeEffectAsInCloudStack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := simtesting.Start(t, simulator.Options{StatePath: path, UploadMonitorInterval: time.Hour})
	s.Call(map[string]string{"command": "updateConfiguration", "name": "upload.operation.timeout", "value": "5"})
	up := simtesting.GetUploadParams(t, s, "soon-expired", "VHD")
	expires, err := time.Parse(template.JodaTime, up.Expires)
	if err != nil || time.Until(expires) > 5*time.Minute || time.Until(expires) < 4*time.Minute {
		t.Fatalf("expires %q with a 5 minute timeout", up.Expires)
	}
	s.Call(map[string]string{"command": "updateConfiguration", "name": "upload.monitoring.interval", "value": "1"})
	vhd := simtesting.PaddedVHD(1<<30, 64<<10)
	if status, text := simtesting.PostImage(t, up, simtesting.UploadHeaders(up), "i.vhd", vhd); status != 200 {
		t.Fatalf("upload: %d %q", status, text)
	}
	time.Sleep(1500 * time.Millisecond)
	if row := simtesting.ListTemplate(t, s, up.Id)[0]; row.Isready || row.Status != "NotUploaded" {
		t.Fatalf("the running monitor still polls hourly: %+v", row)
	}
	s.Stop()
	s2 := simtesting.Start(t, simulator.Options{StatePath: path, UploadMonitorInterval: -1})
	// The restarted SSVM lost the upload; a fresh one completes within the
	// interval now stored (1 s).
	up2 := simtesting.GetUploadParams(t, s2, "after-restart", "VHD")
	if status, text := simtesting.PostImage(t, up2, simtesting.UploadHeaders(up2), "i.vhd", vhd); status != 200 {
		t.Fatalf("upload: %d %q", status, text)
	}
	start := time.Now()
	row, _ := simtesting.WaitTemplate(t, s2, up2.Id, simtesting.ListTemplate(t, s2, up2.Id)[0].Zoneid, func(r *cloudstack.Template) bool { return r.Isready })
	if row.Status != "Download Complete" || time.Since(start) > 3*time.Second {
		t.Fatalf("after the restart: %+v in %s", row, time.Since(start))
	}
	if row := simtesting.ListTemplate(t, s2, up.Id)[0]; row.Isready || row.Status != "NotUploaded" {
		t.Fatalf("the upload the restart lost stays NotUploaded until abandoned: %+v", row)
	}
}

// TestPrivateTemplateHostsFailInTheSSVM: UriUtils.validateUrl lets a private
// host through; the SSVM then has no route to it unless
// secstorage.allowed.internal.sites covered it when the SSVM started. The
// simulator does not try the connection.
func TestPrivateTemplateHostsFailInTheSSVM(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := simtesting.Start(t, simulator.Options{StatePath: path})
	zone := simtesting.ZoneID(t, s, "Sandbox-simulator")
	cs := s.Client()
	p := cs.Template.NewRegisterTemplateParams("private", "vhd", "XenServer", "private", "http://10.1.2.3:8080/s.vhd.bz2")
	p.SetZoneid(zone)
	p.SetOstypeid(simtesting.OsTypeID(t, s))
	r, err := cs.Template.RegisterTemplate(p)
	if err != nil {
		t.Fatalf("a private host passes the API's checks: %v", err)
	}
	id := r.RegisterTemplate[0].Id
	row, _ := simtesting.WaitTemplate(t, s, id, zone, func(r *cloudstack.Template) bool { return simtesting.DownloadState(r) == "DOWNLOAD_ERROR" })
	if row.Status != "Connection timed out" || row.Isready {
		t.Fatalf("download from an uncovered private host: %+v", row)
	}
	s.Call(map[string]string{"command": "updateConfiguration", "name": "secstorage.allowed.internal.sites", "value": "10.1.0.0/16,192.168.7.7"})
	s.Srv.Mu.Lock()
	before := s.Srv.SSVMUnreachable("http://10.1.2.3/s.vhd")
	s.Srv.Mu.Unlock()
	if before == "" {
		t.Fatal("the running SSVM got its routes when it started")
	}
	s.Stop()
	s2 := simtesting.Start(t, simulator.Options{StatePath: path})
	for url, want := range map[string]bool{"http://10.1.2.3/s.vhd": true, "http://192.168.7.7/s.vhd": true,
		"http://192.168.7.8/s.vhd": false, "http://172.16.0.1/s.vhd": false, "http://198.51.100.7/s.vhd": true} {
		if got := s2.Srv.SSVMUnreachable(url) == ""; got != want {
			t.Errorf("%s reachable = %v after the restart", url, got)
		}
	}
	if got := template.InternalSites("0.0.0.0/0, 10.0.0.0/8 ,bogus"); len(got) != 1 || got[0].String() != "10.0.0.0/8" {
		t.Errorf("internal sites parsed as %v", got)
	}
}

// TestTemplateStatusOnlyForAdminsAndOwners: TemplateJoinDaoImpl shows status
// and url in the full view or to the owner.
func TestTemplateStatusOnlyForAdminsAndOwners(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	addTenant(s)
	r := s.Get(simtesting.Signed(simtesting.V3(map[string]string{"command": "listTemplates", "templatefilter": "featured"}, time.Minute), "tenant-key", "tenant-secret"))
	row := simtesting.Items(t, r.Inner(t, "listtemplatesresponse"), "template")[0]
	if _, ok := row["status"]; ok || row["url"] != nil {
		t.Errorf("a user sees the builtin template's status or url: %v", row)
	}
	admin := simtesting.Items(t, s.Call(map[string]string{"command": "listTemplates", "templatefilter": "featured"}).Inner(t, "listtemplatesresponse"), "template")[0]
	if admin["status"] != "Download Complete" || admin["url"] == nil {
		t.Errorf("the admin view: %v", admin)
	}
}
