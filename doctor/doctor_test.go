package doctor

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudprops"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/termtable"
)

// fakeCloud is a CloudStack of one zone, one network and what the CPI needs.
type fakeCloud struct {
	hypervisor cloudstack.Hypervisor
	network    cloudstack.Network
	sites      string
	siteErr    error
	interval   string
	denied     map[string]bool
	apisErr    error
	computes   []cloudstack.ServiceOffering
	disks      []cloudstack.DiskOffering
	moreZones  []cloudstack.ZoneStatus // besides z1
	throttled  map[string]bool         // the commands CloudStack's throttle refuses past request_timeout
	zonesWait  time.Duration           // what each listZones sleeps on the throttle's behalf
	waited     time.Duration
	version    *string // listCapabilities' cloudstackversion; nil: 4.22.0.0
	versionErr error
}

// throttle is the throttle's error for command, when it refuses it.
func (f *fakeCloud) throttle(command string) error {
	if f.throttled[command] {
		return &cloudstack.ThrottledError{Command: command, Elapsed: time.Minute, Waited: 55 * time.Second, Refusals: 40}
	}
	return nil
}

func (f *fakeCloud) ThrottleWaited() time.Duration { return f.waited }

func (f *fakeCloud) APIs() (map[string]bool, error) {
	if err := f.throttle("listApis"); err != nil {
		return nil, err
	}
	if f.apisErr != nil {
		return nil, f.apisErr
	}
	apis := map[string]bool{}
	for _, c := range slices.Concat(cloudstack.Commands, cloudstack.OptionalCommands) {
		apis[c] = !f.denied[c]
	}
	return apis, nil
}
func (f *fakeCloud) MayExpunge() (bool, error) { return true, nil }
func (f *fakeCloud) CloudStackVersion() (string, error) {
	if f.version == nil {
		return "4.22.0.0", f.versionErr
	}
	return *f.version, f.versionErr
}
func (f *fakeCloud) Setting(name string) (string, error) {
	if name == settingUploadInterval {
		return firstOf(f.interval, "60"), f.siteErr
	}
	return f.sites, f.siteErr
}
func (f *fakeCloud) HasKeyPair(name string) (bool, error) { return name == "bosh", nil }
func (f *fakeCloud) Zones() ([]cloudstack.ZoneStatus, error) {
	f.waited += f.zonesWait
	if err := f.throttle("listZones"); err != nil {
		return nil, err
	}
	z1 := cloudstack.ZoneStatus{Zone: cloudstack.Zone{ID: "z-1", Name: "z1"}, Enabled: true, State: "Enabled"}
	return append([]cloudstack.ZoneStatus{z1}, f.moreZones...), nil
}
func (f *fakeCloud) FindZones([]string) ([]cloudstack.Zone, error) { return nil, errors.New("unused") }
func (f *fakeCloud) ZoneHypervisors(string) ([]cloudstack.Hypervisor, error) {
	if err := f.throttle("listHypervisors"); err != nil {
		return nil, err
	}
	return []cloudstack.Hypervisor{f.hypervisor}, nil
}
func (f *fakeCloud) ServiceOfferings() ([]cloudstack.ServiceOffering, error) { return f.computes, nil }
func (f *fakeCloud) FindServiceOffering(ref string) (*cloudstack.ServiceOffering, error) {
	for i := range f.computes {
		if f.computes[i].Name == ref {
			return &f.computes[i], nil
		}
	}
	return nil, errors.New("no compute offering " + ref)
}
func (f *fakeCloud) DiskOfferings() ([]cloudstack.DiskOffering, error) { return f.disks, nil }
func (f *fakeCloud) CustomDiskOffering() (*cloudstack.DiskOffering, error) {
	return cloudstack.PickCustomDiskOffering(f.disks)
}
func (f *fakeCloud) FindDiskOffering(ref string) (*cloudstack.DiskOffering, error) {
	for i := range f.disks {
		if f.disks[i].Name == ref {
			return &f.disks[i], nil
		}
	}
	return nil, errors.New("no disk offering " + ref)
}
func (f *fakeCloud) FindNetworks(zoneID string, refs []string) (map[string]cloudstack.Network, error) {
	if refs[0] != f.network.Name || zoneID != "z-1" {
		return nil, errors.New("no network " + refs[0])
	}
	return map[string]cloudstack.Network{refs[0]: f.network}, nil
}

func testConfig(t *testing.T, edit func(c *config.Config)) config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"cloudstack": {"endpoint": "https://cs.example.org/client/api",
		"api_key": "k", "secret_access_key": "s", "default_zone": "z1"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(&cfg)
	}
	return cfg
}

func rowOf(t *testing.T, results []Result, check string) Result {
	t.Helper()
	for _, r := range results {
		if r.Check == check {
			return r
		}
	}
	t.Fatalf("no %q row in %+v", check, results)
	return Result{}
}

var oneNetwork = &CloudConfig{Networks: []ccNetwork{{Name: "default", Type: "manual",
	Subnets: []ccSubnet{{CloudProperties: cloudprops.Network{Name: "guest"}}}}}}

// A network without the UserData service fails unless the zone runs KVM
// and OpenStack stemcells' VMs read a config drive there.
func TestNetworkWithoutUserData(t *testing.T) {
	off := false
	cases := []struct {
		name       string
		hypervisor cloudstack.Hypervisor
		edit       func(c *config.Config)
		ok         bool
	}{
		{"XenServer", hypervisor.XenServer, nil, false},
		{"KVM with config drives", hypervisor.KVM, nil, true},
		{"KVM without config drives", hypervisor.KVM, func(c *config.Config) { c.Stemcell.ConfigDrive = &off }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cloud := &fakeCloud{hypervisor: c.hypervisor, network: cloudstack.Network{ID: "n-1", Name: "guest"}}
			row := rowOf(t, Run(testConfig(t, c.edit), cloud, Options{CloudConfig: oneNetwork}), CheckNetworks)
			if row.OK != c.ok || !strings.Contains(row.Result, "UserData") {
				t.Fatalf("%+v", row)
			}
			if !c.ok && !strings.Contains(row.Fix, "UserData") {
				t.Fatalf("fix %q", row.Fix)
			}
		})
	}
	cloud := &fakeCloud{hypervisor: hypervisor.XenServer, network: cloudstack.Network{ID: "n-1", Name: "guest", UserData: true}}
	results := Run(testConfig(t, nil), cloud, Options{CloudConfig: oneNetwork})
	if row := rowOf(t, results, CheckNetworks); !row.OK {
		t.Fatalf("%+v", row)
	}
	if !AllOK(results) {
		t.Fatalf("%+v", results)
	}
}

func webdavConfig(url string) func(c *config.Config) {
	return func(c *config.Config) {
		c.Stemcell.Publish = config.PublishWebDAV
		c.WebDAV.Listen, c.WebDAV.PublicURL = "0.0.0.0:8443", url
	}
}

func TestWebDAVHosts(t *testing.T) {
	resolve := func(host string) ([]string, error) {
		if host == "webdav.internal" {
			return []string{"192.168.7.9"}, nil
		}
		return nil, errors.New("no such host")
	}
	denied := &cloudstack.APIError{Command: "listConfigurations", ErrorCode: 432}
	cases := []struct {
		name, url, sites string
		siteErr          error
		ok               bool
		want             string
	}{
		{"public", "http://203.0.113.5:8443", "", nil, true, "is public"},
		{"loopback", "http://127.0.0.1:8443", "", nil, false, "refuses"},
		{"private, covered", "http://10.1.2.3:8443", "10.0.0.0/8, 192.168.1.5", nil, true, "covered"},
		{"private, not covered", "http://192.168.1.6:8443", "10.0.0.0/8, 192.168.1.5", nil, false, "does not cover"},
		{"0.0.0.0 covers nothing", "http://10.1.2.3:8443", "0.0.0.0/0", nil, false, "does not cover"},
		{"resolved", "https://webdav.internal", "192.168.7.0/24", nil, true, "covered"},
		{"unresolved", "https://nowhere.internal", "", nil, false, "does not resolve"},
		{"not an admin", "http://10.1.2.3:8443", "", denied, true, "could not check"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cloud := &fakeCloud{hypervisor: hypervisor.XenServer, sites: c.sites, siteErr: c.siteErr}
			row := rowOf(t, Run(testConfig(t, webdavConfig(c.url)), cloud, Options{Resolve: resolve}), CheckWebDAV)
			if row.OK != c.ok || !strings.Contains(row.Result, c.want) {
				t.Fatalf("%+v", row)
			}
		})
	}
}

func TestInternalSites(t *testing.T) {
	sites := internalSites(" 10.0.0.0/8,192.168.1.5,, bogus, 0.0.0.0")
	for ip, want := range map[string]bool{"10.9.9.9": true, "192.168.1.5": true, "192.168.1.6": false} {
		if got := covers(sites, net.ParseIP(ip)); got != want {
			t.Errorf("%s covered: %v, want %v", ip, got, want)
		}
	}
	if len(sites) != 2 {
		t.Fatalf("sites %v", sites)
	}
}

// On a terminal a failure's fix is a row of its own, so only the last
// column wraps; otherwise one line per check holds all four cells.
func TestTableFitsTheOutput(t *testing.T) {
	results := []Result{{Check: CheckZone, Result: "no zone", Fix: "set cloudstack.default_zone"},
		{Check: CheckKeys, OK: true, Result: "accepted"}}
	var tty strings.Builder
	if err := Table(results, termtable.Output{Width: 60}).Write(&tty, termtable.Output{Width: 60}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(tty.String()), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[1], "zone   FAIL") || !strings.Contains(lines[2], "→ set") {
		t.Fatalf("terminal table:\n%s", tty.String())
	}
	var plain strings.Builder
	if err := Table(results, termtable.Output{}).Write(&plain, termtable.Output{}); err != nil {
		t.Fatal(err)
	}
	if plain.String() != "zone\tFAIL\tno zone\tset cloudstack.default_zone\nkeys\tok\taccepted\t\n" {
		t.Fatalf("plain lines %q", plain.String())
	}
}

func TestCloudConfigNetworkRefs(t *testing.T) {
	cc := &CloudConfig{
		AZs: []ccAZ{{Name: "z1"}, {Name: "z2"}},
		Networks: []ccNetwork{
			{Name: "m", Subnets: []ccSubnet{{AZs: []string{"z1", "z2"}, CloudProperties: cloudprops.Network{Name: "n1"}}}},
			{Name: "d", CloudProperties: cloudprops.Network{Name: "n2"}},
			{Name: "vip", Type: "vip"},
		},
	}
	cc.AZs[1].CloudProperties.Zone = "other"
	refs := cc.networkRefs()
	want := []netRef{{"m", "n1", ""}, {"m", "n1", "other"}, {"d", "n2", ""}}
	if len(refs) != len(want) {
		t.Fatalf("refs %+v", refs)
	}
	for i := range want {
		if refs[i] != want[i] {
			t.Fatalf("refs %+v, want %+v", refs, want)
		}
	}
}

func TestStemcellZones(t *testing.T) {
	cfg := testConfig(t, func(c *config.Config) { c.Stemcell.Zones = []string{"z1", "z9"} })
	var rows []Result
	for _, r := range Run(cfg, &fakeCloud{hypervisor: hypervisor.KVM}, Options{}) {
		if r.Check == CheckZone {
			rows = append(rows, r)
		}
	}
	if len(rows) != 3 || !rows[0].OK || !rows[1].OK || rows[2].OK || !strings.Contains(rows[2].Fix, `"z1"`) {
		t.Fatalf("%+v", rows)
	}
}

// The zone check also finds the zones the cloud-config's AZs and VM types
// name, each enabled.
func TestCloudConfigZones(t *testing.T) {
	cloud := &fakeCloud{hypervisor: hypervisor.KVM, moreZones: []cloudstack.ZoneStatus{
		{Zone: cloudstack.Zone{ID: "z-2", Name: "z2"}, State: "Disabled"}}}
	cc := &CloudConfig{AZs: []ccAZ{{Name: "a1"}, {Name: "a2"}, {Name: "a3"}}, VMTypes: []ccVMType{{Name: "big"}, {Name: "any"}}}
	cc.AZs[0].CloudProperties.Zone, cc.AZs[1].CloudProperties.Zone = "z1", "z2"
	cc.VMTypes[0].CloudProperties.Zone = "z9"
	var rows []Result
	for _, r := range Run(testConfig(t, nil), cloud, Options{CloudConfig: cc}) {
		if r.Check == CheckZone {
			rows = append(rows, r)
		}
	}
	want := []struct {
		ok          bool
		result, fix string
	}{
		{true, `zone "z1" (z-1) is enabled`, ""},
		{true, `az "a1" cloud_properties.zone: zone "z1" is enabled`, ""},
		{false, `az "a2" cloud_properties.zone: zone "z2" is Disabled`, "allocationstate=Enabled"},
		{false, `vm_type "big" zone: CloudStack has no zone "z9"`, `"z1" (Enabled), "z2" (Disabled)`},
	}
	if len(rows) != len(want) {
		t.Fatalf("zone rows %+v", rows)
	}
	for i, w := range want {
		if rows[i].OK != w.ok || !strings.Contains(rows[i].Result, w.result) || !strings.Contains(rows[i].Fix, w.fix) {
			t.Errorf("row %d: %+v, want ok %v, %q, fix with %q", i, rows[i], w.ok, w.result, w.fix)
		}
	}
}

// The offerings check reads VM and disk types as create_vm and create_disk
// use them.
func TestOfferingsFit(t *testing.T) {
	cloud := &fakeCloud{hypervisor: hypervisor.XenServer,
		computes: []cloudstack.ServiceOffering{
			{ID: "c-1", Name: "Small", CPUs: 1, MemoryMB: 512, CPUsFixed: true, MemoryFixed: true, SpeedFixed: true},
			{ID: "c-2", Name: "Bounded", Customized: true, Constrained: true, SpeedFixed: true, MinCPUs: 1, MaxCPUs: 2,
				MinMemoryMB: 512, MaxMemoryMB: 4096},
		},
		disks: []cloudstack.DiskOffering{{ID: "d-1", Name: "Fixed", SizeGB: 5}, {ID: "d-2", Name: "Custom", Customized: true}},
	}
	vm := func(name string, cp map[string]any) ccVMType {
		t := ccVMType{Name: name}
		t.CloudProperties.ComputeOffering, _ = cp["compute_offering"].(string)
		t.CloudProperties.CPU, _ = cp["cpu"].(int)
		t.CloudProperties.RAM, _ = cp["ram"].(int)
		t.CloudProperties.EphemeralDiskOffering, _ = cp["ephemeral_disk_offering"].(string)
		return t
	}
	cases := []struct {
		name string
		cfg  func(c *config.Config)
		cc   *CloudConfig
		ok   bool
		want string
	}{
		{"fixed default", func(c *config.Config) { c.CloudStack.DefaultComputeOffering = "Small" }, nil, true, `"Small"`},
		{"customized default", func(c *config.Config) { c.CloudStack.DefaultComputeOffering = "Bounded" }, nil, false, "is customized"},
		{"custom disk default not customized", func(c *config.Config) { c.CloudStack.DefaultCustomDiskOffering = "Fixed" }, nil, false,
			"is not customized"},
		{"cpu and ram within limits", nil, &CloudConfig{VMTypes: []ccVMType{vm("a", map[string]any{"cpu": 2, "ram": 2048})}}, true, `"Bounded"`},
		{"cpu and ram beyond limits", nil, &CloudConfig{VMTypes: []ccVMType{vm("a", map[string]any{"cpu": 4, "ram": 2048})}}, false,
			"no customized compute offering takes 4 CPUs"},
		{"cpu and ram on a fixed offering", nil,
			&CloudConfig{VMTypes: []ccVMType{vm("a", map[string]any{"cpu": 1, "ram": 512, "compute_offering": "Small"})}}, false,
			"is not customized"},
		{"no offering anywhere", nil, &CloudConfig{VMTypes: []ccVMType{vm("a", map[string]any{})}}, false, "names no compute_offering"},
		{"missing ephemeral offering", nil,
			&CloudConfig{VMTypes: []ccVMType{vm("a", map[string]any{"compute_offering": "Small", "ephemeral_disk_offering": "Gone"})}},
			false, "Gone"},
		{"disk type by size", nil, &CloudConfig{DiskTypes: []ccDiskType{{Name: "d"}}}, true, `"Custom"`},
		{"nothing named", nil, nil, true, "none named"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var bad *Result
			var all []string
			for _, r := range Run(testConfig(t, c.cfg), cloud, Options{CloudConfig: c.cc}) {
				if r.Check == CheckOfferings {
					all = append(all, r.Result)
					if !r.OK && bad == nil {
						bad = &r
					}
				}
			}
			text := strings.Join(all, " | ")
			if (bad == nil) != c.ok || !strings.Contains(text, c.want) || (bad != nil && bad.Fix == "") {
				t.Fatalf("offerings rows: %s", text)
			}
		})
	}
}

// With cpu and ram and no compute_offering, doctor names the offering
// create_vm picks: a constrained one that takes them before an
// unconstrained one listed first.
func TestOfferingsNameTheConstrainedOfferingCreateVMPicks(t *testing.T) {
	cloud := &fakeCloud{hypervisor: hypervisor.XenServer,
		computes: []cloudstack.ServiceOffering{
			{ID: "c-1", Name: "Open", Customized: true},
			{ID: "c-2", Name: "Bounded", Customized: true, Constrained: true, SpeedFixed: true, MinCPUs: 1, MaxCPUs: 2,
				MinMemoryMB: 512, MaxMemoryMB: 4096},
		}}
	cc := &CloudConfig{VMTypes: []ccVMType{{Name: "a"}}}
	cc.VMTypes[0].CloudProperties.CPU, cc.VMTypes[0].CloudProperties.RAM = 2, 2048
	row := rowOf(t, Run(testConfig(t, nil), cloud, Options{CloudConfig: cc}), CheckOfferings)
	if !row.OK || !strings.Contains(row.Result, `customized compute offering "Bounded" takes 2 CPUs`) {
		t.Fatalf("%+v", row)
	}
}

// writeCloudConfig returns a function writing a cloud-config and loading it.
func writeCloudConfig(t *testing.T) func(text string) (*CloudConfig, error) {
	path := filepath.Join(t.TempDir(), "cc.yml")
	return func(text string) (*CloudConfig, error) {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return LoadCloudConfig(path)
	}
}

// A cloud-config's VM types are read with create_vm's schema: a key it
// does not know or a wrong type names the VM type.
func TestLoadCloudConfigReadsVMTypesAsCreateVM(t *testing.T) {
	load := writeCloudConfig(t)
	cc, err := load("vm_types:\n- name: sized\n  cloud_properties: {cpu: 2, ram: 2048, cpu_speed: 1000, keypair: bosh, " +
		"zone: z1, ephemeral_disk_offering: Fast, lbs: [{name: web, public_ip: 192.0.2.1}]}\n")
	if err != nil {
		t.Fatal(err)
	}
	p := cc.VMTypes[0].CloudProperties
	if cc.VMTypes[0].Name != "sized" || p.CPU != 2 || p.RAM != 2048 || p.CPUSpeed != 1000 || p.KeyPair != "bosh" ||
		p.Zone != "z1" || p.EphemeralDiskOffering != "Fast" || len(p.LBs) != 1 || p.LBs[0].Name != "web" {
		t.Fatalf("%+v", cc.VMTypes[0])
	}
	if _, err := load("vm_types:\n- name: bad\n  cloud_properties: {cpu: two}\n"); err == nil ||
		!strings.Contains(err.Error(), `vm_type "bad" cloud_properties.cpu`) {
		t.Fatalf("a wrong type: %v", err)
	}
	// Another cloud's VM type, in the cloud-config of a director with
	// several CPIs, is not doctor's to refuse.
	if cc, err := load("vm_types:\n- name: aws\n  cloud_properties: {instance_type: m5.large, cpu: 2}\n"); err != nil ||
		cc.VMTypes[0].CloudProperties.CPU != 2 {
		t.Fatalf("another CPI's keys: %+v, %v", cc, err)
	}
}

// A disk type's cloud_properties are read with create_disk's schema: a value
// of the wrong type names the disk type; another CPI's keys are ignored.
func TestLoadCloudConfigReadsDiskTypesAsCreateDisk(t *testing.T) {
	load := writeCloudConfig(t)
	cc, err := load("disk_types:\n- name: fast\n  disk_size: 1024\n  cloud_properties: {disk_offering: Fast}\n- name: plain\n")
	if err != nil || len(cc.DiskTypes) != 2 || cc.DiskTypes[0].Name != "fast" ||
		cc.DiskTypes[0].CloudProperties.DiskOffering != "Fast" || cc.DiskTypes[1].Name != "plain" {
		t.Fatalf("%+v, %v", cc, err)
	}
	if _, err := load("disk_types:\n- name: fast\n  cloud_properties: {disk_offering: [Fast]}\n"); err == nil ||
		!strings.Contains(err.Error(), `disk_type "fast" cloud_properties.disk_offering`) {
		t.Fatalf("a wrong type: %v", err)
	}
	if cc, err := load("disk_types:\n- name: gp3\n  cloud_properties: {type: gp3, disk_offering: Fast}\n"); err != nil ||
		cc.DiskTypes[0].CloudProperties.DiskOffering != "Fast" {
		t.Fatalf("another CPI's keys: %+v, %v", cc, err)
	}
}

// A network's cloud_properties, its own and its subnets', are read with
// create_vm's schema: a value of the wrong type names the network; another
// CPI's keys are ignored.
func TestLoadCloudConfigReadsNetworksAsCreateVM(t *testing.T) {
	load := writeCloudConfig(t)
	cc, err := load("networks:\n- name: m\n  type: manual\n  subnets:\n  - {az: z1, range: 10.0.0.0/24, " +
		"cloud_properties: {name: guest, undiscoverable: \"true\"}}\n- name: d\n  type: dynamic\n  cloud_properties: {name: pub}\n")
	if err != nil || len(cc.Networks) != 2 || cc.Networks[0].Subnets[0].AZ != "z1" ||
		cc.Networks[0].Subnets[0].CloudProperties.Name != "guest" || !bool(cc.Networks[0].Subnets[0].CloudProperties.Undiscoverable) ||
		cc.Networks[1].Type != "dynamic" || cc.Networks[1].CloudProperties.Name != "pub" {
		t.Fatalf("%+v, %v", cc, err)
	}
	if _, err := load("networks:\n- name: m\n  subnets:\n  - cloud_properties: {name: [guest]}\n"); err == nil ||
		!strings.Contains(err.Error(), `network "m" cloud_properties.name`) {
		t.Fatalf("a subnet's wrong type: %v", err)
	}
	if cc, err := load("networks:\n- name: d\n  type: dynamic\n  cloud_properties: {subnet: subnet-1, name: pub}\n"); err != nil ||
		cc.Networks[0].CloudProperties.Name != "pub" {
		t.Fatalf("another CPI's keys: %+v, %v", cc, err)
	}
}

// A role that lacks commands fails the commands check naming each one;
// one that may not call listApis says the check could not run.
func TestCommandsTheRoleLacks(t *testing.T) {
	cloud := &fakeCloud{hypervisor: hypervisor.KVM, denied: map[string]bool{"createTags": true, "expungeVirtualMachine": true}}
	results := Run(testConfig(t, nil), cloud, Options{})
	row := rowOf(t, results, CheckCommands)
	if row.OK || !strings.Contains(row.Result, "2 of the CPI's commands: createTags, expungeVirtualMachine") {
		t.Fatalf("%+v", row)
	}
	if row := rowOf(t, results, CheckExpunge); row.OK || !strings.Contains(row.Result, "may not call expungeVirtualMachine") {
		t.Fatalf("%+v", row)
	}
	if row := rowOf(t, Run(testConfig(t, nil), &fakeCloud{hypervisor: hypervisor.KVM}, Options{}), CheckCommands); !row.OK ||
		strings.Contains(row.Result, "changeOfferingForVolume") {
		t.Fatalf("a role with every command: %+v", row)
	}
	cloud = &fakeCloud{hypervisor: hypervisor.KVM, denied: map[string]bool{"changeOfferingForVolume": true}}
	if row := rowOf(t, Run(testConfig(t, nil), cloud, Options{}), CheckCommands); !row.OK ||
		!strings.Contains(row.Result, "not changeOfferingForVolume") || !strings.Contains(row.Result, "NotSupported") {
		t.Fatalf("an optional command lacking passes and says what is lost: %+v", row)
	}
	cloud = &fakeCloud{hypervisor: hypervisor.KVM, denied: map[string]bool{"getUser": true}}
	if row := rowOf(t, Run(testConfig(t, nil), cloud, Options{}), CheckCommands); !row.OK ||
		!strings.Contains(row.Result, "not getUser (only root admins may call it)") {
		t.Fatalf("a role without getUser (all but root admins) passes and says what it means: %+v", row)
	}
	for _, c := range cloudstack.OptionalCommands {
		if optionalWithout[c] == "" {
			t.Errorf("doctor does not say what the CPI does without %s", c)
		}
	}
	cloud = &fakeCloud{hypervisor: hypervisor.KVM, apisErr: &cloudstack.APIError{Command: "listApis", ErrorCode: 432}}
	results = Run(testConfig(t, nil), cloud, Options{})
	if row := rowOf(t, results, CheckKeys); !row.OK {
		t.Fatalf("%+v", row)
	}
	if row := rowOf(t, results, CheckCommands); row.OK || !strings.Contains(row.Fix, "listApis") {
		t.Fatalf("%+v", row)
	}
	if row := rowOf(t, results, CheckZone); !row.OK {
		t.Fatalf("the later checks run: %+v", row)
	}
}

// An answer that is not CloudStack's fails the endpoint check, and a 401
// the keys check; everything after them is not checked.
func TestEndpointAndKeys(t *testing.T) {
	cases := []struct {
		err         error
		failed, fix string
	}{
		{errors.New("CloudStack listApis: unexpected answer: invalid character '<'"), CheckEndpoint, "/client/api"},
		{&cloudstack.TLSError{Endpoint: "https://cs.example.org", Err: errors.New("x509: unknown authority")}, CheckEndpoint,
			"cloudstack.ca_cert"},
		{&cloudstack.CredentialsRefusedError{Endpoint: "https://cs.example.org", Command: "listApis"}, CheckKeys,
			"cloudstack.secret_access_key"},
	}
	for _, c := range cases {
		results := Run(testConfig(t, nil), &fakeCloud{apisErr: c.err}, Options{})
		if row := rowOf(t, results, c.failed); row.OK || !strings.Contains(row.Fix, c.fix) {
			t.Errorf("%v: %+v", c.err, row)
		}
		if row := rowOf(t, results, CheckPolling); row.OK || !strings.Contains(row.Result, "not checked") || AllOK(results) {
			t.Errorf("%v: %+v", c.err, row)
		}
	}
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// Uploads wait for CloudStack's upload monitor: a wait shorter than two of
// its polls fails.
func TestUploadsAgainstTheUploadMonitor(t *testing.T) {
	denied := &cloudstack.APIError{Command: "listConfigurations", ErrorCode: 432}
	cases := []struct {
		name, interval string
		err            error
		ok             bool
		want           string
	}{
		{"default", "", nil, true, "leave room"},
		{"slow monitor", "600", nil, false, "stemcell.config_drive_timeout is only 10m0s"},
		{"not an admin", "", denied, true, "could not check"},
		{"unreadable", "soon", nil, false, "reading upload.monitoring.interval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cloud := &fakeCloud{hypervisor: hypervisor.KVM, interval: c.interval, siteErr: c.err}
			row := rowOf(t, Run(testConfig(t, nil), cloud, Options{}), CheckUploads)
			if row.OK != c.ok || !strings.Contains(row.Result, c.want) {
				t.Fatalf("%+v", row)
			}
		})
	}
}

// TestVersionCheck: doctor reports the version, fails one older than the
// oldest release the CPI supports, and says it could not check (without
// failing) when CloudStack hides its version or names none.
func TestVersionCheck(t *testing.T) {
	for _, c := range []struct {
		version string
		err     error
		ok      bool
		want    string
	}{
		{"4.22.0.0", nil, true, "CloudStack 4.22.0.0"},
		{"4.20.1.0", nil, true, "CloudStack 4.20.1.0"},
		{"4.19.3.0", nil, true, "CloudStack 4.19.3.0"},
		{"4.18.2.5", nil, false, "CloudStack 4.18.2.5 is older than 4.19, the oldest release the CPI supports"},
		{"3.0.7", nil, false, "older than 4.19"},
		{"", nil, true, "could not check: CloudStack hides its version"},
		{"unknown", nil, true, `could not check: CloudStack reports its version as "unknown"`},
		{"", errors.New("refused"), false, "listCapabilities failed: refused"},
	} {
		cloud := &fakeCloud{hypervisor: hypervisor.KVM, version: &c.version, versionErr: c.err}
		row := rowOf(t, Run(testConfig(t, nil), cloud, Options{}), CheckVersion)
		if row.OK != c.ok || !strings.HasPrefix(row.Result, c.want) && !strings.Contains(row.Result, c.want) ||
			(row.Fix == "") == (row.Result != "CloudStack "+c.version) {
			t.Errorf("version %q: %+v", c.version, row)
		}
	}
}
