package spec

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	csgo "github.com/apache/cloudstack-go/v2/cloudstack"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/fixtures"
)

// The earlier CloudStack CPIs' manifests: the Java CPI's, in the form its
// README documents (the project's own ../testdata/java-cpi), and
// bosh-deployment's ops file for the Go CPI, read where internal/fixtures
// finds it.

// javaCPI reads a manifest of ../testdata/java-cpi.
func javaCPI(t *testing.T, name string) []string {
	t.Helper()
	return readLines(t, filepath.Join("..", "testdata", "java-cpi", name))
}

// boshDeployment reads a file of bosh-deployment, rel in its own layout;
// without bosh-deployment the test skips, written down for make test.
func boshDeployment(t *testing.T, rel string) []string {
	t.Helper()
	return readLines(t, filepath.Join(fixtures.Require(t, rel), rel))
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(raw), "\n")
}

// yamlMap reads the map under the first line at or after the line holding
// start whose key is key: a flow map on that line, or the block below it.
// It reads only what these fixtures hold (scalars, # comments, YAML 1.1
// integers with underscores, as the director parses them) and fails on
// anything else.
func yamlMap(t *testing.T, lines []string, start, key string, vars map[string]string) map[string]any {
	t.Helper()
	i := lineWith(t, lines, 0, start)
	i = lineWith(t, lines, i, key+":")
	indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " -"))
	rest := strings.TrimSpace(strings.SplitN(lines[i], key+":", 2)[1])
	out := map[string]any{}
	if strings.HasPrefix(rest, "{") {
		for _, kv := range strings.Split(strings.Trim(rest, "{}"), ",") {
			k, v := yamlPair(t, kv, vars)
			out[k] = v
		}
		return out
	}
	for _, l := range lines[i+1:] {
		if strings.TrimSpace(l) == "" || len(l)-len(strings.TrimLeft(l, " ")) <= indent {
			break
		}
		k, v := yamlPair(t, l, vars)
		out[k] = v
	}
	return out
}

// lineWith is the index of the first line at or after index from that holds s.
func lineWith(t *testing.T, lines []string, from int, s string) int {
	t.Helper()
	for i := from; i < len(lines); i++ {
		if strings.Contains(lines[i], s) {
			return i
		}
	}
	t.Fatalf("no line holds %q", s)
	return 0
}

func yamlPair(t *testing.T, line string, vars map[string]string) (string, any) {
	t.Helper()
	k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
	if !ok {
		t.Fatalf("not a key: value line: %q", line)
	}
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, `"`) {
		end := strings.Index(v[1:], `"`)
		if end < 0 {
			t.Fatalf("unterminated string: %q", line)
		}
		return k, v[1 : end+1]
	}
	v, _, _ = strings.Cut(v, " #")
	v = strings.TrimSpace(v)
	if n, err := strconv.Atoi(strings.ReplaceAll(v, "_", "")); err == nil {
		return k, n
	}
	if strings.HasPrefix(v, "((") {
		sub, ok := vars[strings.Trim(v, "()")]
		if !ok {
			t.Fatalf("no value for %s", v)
		}
		return k, sub
	}
	if v == "" || strings.ContainsAny(v, "[]{}&*|>") {
		t.Fatalf("this reader does not take %q", line)
	}
	return k, v
}

// earlierOfferings are the offerings the manifests name, made as an
// operator of those CPIs would have them.
func (e *env) earlierOfferings() {
	e.t.Helper()
	c := e.client()
	for _, name := range []string{"CO1 - Small HA", "CO3 - Medium HA"} {
		p := c.ServiceOffering.NewCreateServiceOfferingParams(name, name)
		p.SetCpunumber(1)
		p.SetCpuspeed(500)
		p.SetMemory(512)
		if _, err := c.ServiceOffering.CreateServiceOffering(p); err != nil {
			e.t.Fatalf("createServiceOffering %s: %v", name, err)
		}
	}
	for name, sizeGB := range map[string]int64{"custom_size_ephemeral": 0, "shared.custom": 0,
		"DO4 - Small SSD": 10, "DO5 - Large STD": 40, "DO3n - 20 GiB": 20} {
		p := c.DiskOffering.NewCreateDiskOfferingParams(name, name)
		if sizeGB == 0 {
			p.SetCustomized(true)
		} else {
			p.SetDisksize(sizeGB)
		}
		if _, err := c.DiskOffering.CreateDiskOffering(p); err != nil {
			e.t.Fatalf("createDiskOffering %s: %v", name, err)
		}
	}
}

func (e *env) diskOfferingName(id string) string {
	e.t.Helper()
	c := e.client()
	p := c.DiskOffering.NewListDiskOfferingsParams()
	p.SetId(id)
	resp, err := c.DiskOffering.ListDiskOfferings(p)
	if err != nil || len(resp.DiskOfferings) != 1 {
		e.t.Fatalf("disk offering %s: %v", id, err)
	}
	return resp.DiskOfferings[0].Name
}

func (e *env) dataVolumesOf(vmID string) []*csgo.Volume {
	var data []*csgo.Volume
	for _, v := range e.volumes() {
		if v.Type == "DATADISK" && v.Virtualmachineid == vmID {
			data = append(data, v)
		}
	}
	return data
}

// TestEarlierCPIsResourcePoolsDeploy: the resource pools of the Java CPI's
// manifests and of bosh-deployment's ops file (its effective, last
// cloud_properties) create the VM they describe; the network's
// cloud_properties of the Java CPI's micro-bosh too.
func TestEarlierCPIsResourcePoolsDeploy(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	e.earlierOfferings()
	micro := javaCPI(t, "micro-bosh.yml")
	javaNet := yamlMap(t, micro, "networks:", "cloud_properties", nil)
	if javaNet["name"] != "2048 - staging - front" {
		t.Fatalf("the micro-bosh's network cloud_properties read as %v", javaNet)
	}
	for _, c := range []struct {
		what              string
		props             func(t *testing.T) map[string]any
		offering          string
		ephemeralGB, root int64
		ip                string
	}{
		{"the Java CPI's micro-bosh", func(t *testing.T) map[string]any {
			return yamlMap(t, micro, "resource_pools:", "cloud_properties", nil)
		}, "custom_size_ephemeral", 13, 0, "10.1.1.41"}, // 12_500 MiB
		{"the Java CPI's director", func(t *testing.T) map[string]any {
			return yamlMap(t, javaCPI(t, "director-deployment.yml"), "resource_pools:", "cloud_properties", nil)
		}, "DO5 - Large STD", 40, 0, "10.1.1.42"},
		{"bosh-deployment's", boshDeploymentPool, "shared.custom", 25, 15, "10.1.1.43"},
	} {
		t.Run(c.what, func(t *testing.T) {
			props := c.props(t)
			if _, ok := props["disk"]; !ok {
				t.Fatalf("%s cloud_properties read as %v: no disk", c.what, props)
			}
			cid, sent := e.createCustomVM(stemcell, props, c.ip)
			data := e.dataVolumesOf(cid)
			if len(data) != 1 || data[0].Size != c.ephemeralGB<<30 || e.diskOfferingName(data[0].Diskofferingid) != c.offering {
				t.Fatalf("%v: ephemeral disk %+v, want %d GiB on %s", props, data, c.ephemeralGB, c.offering)
			}
			if got := sent["rootdisksize"]; c.root != 0 && got != strconv.FormatInt(c.root, 10) {
				t.Errorf("rootdisksize %q, want %d", got, c.root)
			}
			e.call("delete_vm", cid).ok(t)
		})
	}
	net := manualNet("10.1.1.49")
	net["cloud_properties"] = map[string]any{"name": "guest-network", "undiscoverable": false}
	both := map[string]any{"compute_offering": "Small Instance", "disk": 3072, "ephemeral_disk_size": 3072,
		"affinity_group": "together", "affinity_group_type": "host affinity"}
	var result []json.RawMessage
	e.call("create_vm", "agent-both", stemcell, both, map[string]any{"default": net}, []string{}, boshEnv).ok(t).decode(t, &result)
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	if data := e.dataVolumesOf(cid); len(data) != 1 || data[0].Size != 3<<30 {
		t.Fatalf("disk and ephemeral_disk_size alike: %+v", data)
	}
	if groups := e.vm(cid).Affinitygroup; len(groups) != 1 || groups[0].Name != "together" || groups[0].Type != "host affinity" {
		t.Errorf("affinity groups %+v, want together of type host affinity", groups)
	}
	delete(both, "affinity_group")
	delete(both, "affinity_group_type")
	both["ephemeral_disk_size"] = 4096
	e.call("create_vm", "agent-differ", stemcell, both, map[string]any{"default": manualNet("10.1.1.48")}, []string{}, boshEnv).
		failed(t, "VMCreationFailed", "disk (3072 MiB) and ephemeral_disk_size (4096 MiB)")
	lbs := map[string]any{"compute_offering": "Small Instance", "lbs": []any{map[string]any{"name": "web", "algorithm": "roundrobin",
		"private_port": 80, "public_port": 80, "open_firewall": true, "public_ip": "192.168.2.80"}}}
	e.allocateIP("192.168.2.80")
	e.call("create_vm", "agent-lbs", stemcell, lbs, map[string]any{"default": manualNet("10.1.1.47")},
		[]string{}, boshEnv).ok(t).decode(t, &result)
	var lbVM string
	_ = json.Unmarshal(result[0], &lbVM)
	if rule := e.oneRule(lbVM); rule.Name != "web" || rule.Publicip != "192.168.2.80" {
		t.Errorf("the Go CPI's lbs entry made rule %+v", rule)
	}
	e.call("delete_vm", lbVM).ok(t)
	if rules := e.lbRules(); len(rules) != 0 {
		t.Errorf("the rule outlived its only VM: %+v", rules[0])
	}
}

// boshDeploymentPool is the resource pool's effective cloud_properties in
// bosh-deployment's cloudstack/cpi.yml, which replaces them twice: the
// last wins.
func boshDeploymentPool(t *testing.T) map[string]any {
	ops := boshDeployment(t, "cloudstack/cpi.yml")
	joined := strings.Join(ops, "\n")
	last := strings.LastIndex(joined, "path: /resource_pools/name=vms/cloud_properties?")
	if last < 0 {
		t.Fatal("cloudstack/cpi.yml does not replace the pool's cloud_properties")
	}
	return yamlMap(t, ops[strings.Count(joined[:last], "\n"):], "resource_pools", "value",
		map[string]string{"cloudstack_compute_offering": "Small Instance"})
}

// TestEarlierCPIsDiskPoolsCreateDisks: their disk pools' cloud_properties
// put the disk on the offering they name.
func TestEarlierCPIsDiskPoolsCreateDisks(t *testing.T) {
	e := newEnv(t, nil)
	e.earlierOfferings()
	for _, c := range []struct {
		what                 string
		lines                func(t *testing.T) (manifest, sizeFrom []string)
		start, key, offering string
	}{
		{"the Java CPI's micro-bosh", func(t *testing.T) ([]string, []string) {
			m := javaCPI(t, "micro-bosh.yml")
			return m, m
		}, "disk_pools:", "cloud_properties", "DO3n - 20 GiB"},
		{"the Java CPI's director", func(t *testing.T) ([]string, []string) {
			m := javaCPI(t, "director-deployment.yml")
			return m, m
		}, "disk_pools:", "cloud_properties", "DO5 - Large STD"},
		{"bosh-deployment's", func(t *testing.T) ([]string, []string) {
			return boshDeployment(t, "cloudstack/cpi.yml"), boshDeployment(t, "bosh.yml")
		}, "path: /disk_pools/name=disks/cloud_properties?", "value", "shared.custom"},
	} {
		t.Run(c.what, func(t *testing.T) {
			manifest, sizeFrom := c.lines(t)
			props := yamlMap(t, manifest, c.start, c.key, nil)
			cid := e.createDisk(diskPoolSize(t, sizeFrom), props, nil)
			if got := e.diskOfferingName(e.volume(cid).Diskofferingid); got != c.offering {
				t.Errorf("%s: %v made a disk on %q, want %q", c.what, props, got, c.offering)
			}
			e.call("delete_disk", cid).ok(t)
		})
	}
}

// diskPoolSize is the disk_size of a manifest's first disk pool.
func diskPoolSize(t *testing.T, lines []string) int {
	t.Helper()
	i := lineWith(t, lines, lineWith(t, lines, 0, "disk_pools:"), "disk_size:")
	_, v := yamlPair(t, strings.TrimLeft(lines[i], " -"), nil)
	n, ok := v.(int)
	if !ok {
		t.Fatalf("disk_size %v", v)
	}
	return n
}

// TestCreateDiskWithNoOfferingAnywhereTakesTheCustomizedOne: a disk type
// of {} and no cloudstack.default_disk_offering put the disk on "Custom",
// else on the only customized offering, and the log says which; among
// several others the error names them.
func TestCreateDiskWithNoOfferingAnywhereTakesTheCustomizedOne(t *testing.T) {
	e := newEnv(t, nil)
	r := e.call("create_disk", 3072, map[string]any{}, nil).ok(t)
	var cid string
	r.decode(t, &cid)
	vol := e.volume(cid)
	if got := e.diskOfferingName(vol.Diskofferingid); got != "Custom" || vol.Size != 3<<30 {
		t.Fatalf("create_disk {} made a %d-byte disk on %q, want 3 GiB on Custom", vol.Size, got)
	}
	if !strings.Contains(r.Stderr, `using customized disk offering "Custom"`) {
		t.Errorf("the log does not name the offering chosen:\n%s", r.Stderr)
	}
	e.call("delete_disk", cid).ok(t)

	c := e.client()
	if _, err := c.DiskOffering.DeleteDiskOffering(c.DiskOffering.NewDeleteDiskOfferingParams(vol.Diskofferingid)); err != nil {
		t.Fatal(err)
	}
	p := c.DiskOffering.NewCreateDiskOfferingParams("shared.custom", "shared.custom")
	p.SetCustomized(true)
	if _, err := c.DiskOffering.CreateDiskOffering(p); err != nil {
		t.Fatal(err)
	}
	r = e.call("create_disk", 1024, map[string]any{}, nil).ok(t)
	r.decode(t, &cid)
	if got := e.diskOfferingName(e.volume(cid).Diskofferingid); got != "shared.custom" {
		t.Fatalf("with one customized offering, create_disk {} chose %q", got)
	}
	p = c.DiskOffering.NewCreateDiskOfferingParams("other.custom", "other.custom")
	p.SetCustomized(true)
	if _, err := c.DiskOffering.CreateDiskOffering(p); err != nil {
		t.Fatal(err)
	}
	e.call("create_disk", 1024, map[string]any{}, nil).failed(t, "CloudError",
		`several customized disk offerings ("shared.custom", "other.custom") and none named "Custom"`)
}

type routedSettings struct {
	Networks map[string]struct {
		Routes []map[string]string `json:"routes"`
	} `json:"networks"`
}

var wantRoutes = []map[string]string{{"destination": "172.16.0.0", "netmask": "255.240.0.0", "gateway": "10.1.1.1"},
	{"destination": "192.168.7.0", "netmask": "255.255.255.0", "gateway": "10.1.1.254"}}

var routedVM = map[string]any{"compute_offering": "Small Instance", "routes": map[string]any{"default": []any{
	map[string]any{"cidr": "172.16.0.0/12"}, map[string]any{"cidr": "192.168.7.0/24", "gateway": "10.1.1.254"}}}}

func checkRoutes(t *testing.T, what, raw string) {
	t.Helper()
	var s routedSettings
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got := s.Networks["default"].Routes; !equalRoutes(got, wantRoutes) {
		t.Errorf("%s: routes of default %v, want %v", what, got, wantRoutes)
	}
	if got := s.Networks["second"].Routes; got == nil || len(got) != 0 {
		t.Errorf("%s: routes of second %v, want an empty list", what, got)
	}
}

func equalRoutes(a, b []map[string]string) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestRoutesAndUndiscoverableInTheAgentSettings: the Go CPI's routes go to
// their network's agent settings, and an undiscoverable network (here the
// director's default gateway) is not CloudStack's default NIC.
func TestRoutesAndUndiscoverableInTheAgentSettings(t *testing.T) {
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	e.ownNetwork(apiKey, secretKey, "second-network")
	hidden := manualNet("10.1.1.60")
	hidden["cloud_properties"] = map[string]any{"name": "guest-network", "undiscoverable": true}
	networks := map[string]any{"default": hidden,
		"second": map[string]any{"type": "dynamic", "cloud_properties": map[string]any{"name": "second-network"}}}
	var result []json.RawMessage
	e.call("create_vm", "agent-routes", stemcell, routedVM, networks, []string{}, boshEnv).ok(t).decode(t, &result)
	var cid string
	_ = json.Unmarshal(result[0], &cid)
	vm := e.vm(cid)
	for _, nic := range vm.Nic {
		if nic.Isdefault != (nic.Networkname == "second-network") {
			t.Errorf("NIC on %s isdefault %v: the undiscoverable network must not be the default NIC", nic.Networkname, nic.Isdefault)
		}
	}
	raw := e.metadata(cid, "/latest/user-data")
	if decoded, err := base64.StdEncoding.DecodeString(raw); err == nil {
		raw = string(decoded)
	}
	checkRoutes(t, "user data", raw)
	e.call("create_vm", "agent-x", stemcell, map[string]any{"compute_offering": "Small Instance", "routes": map[string]any{
		"elsewhere": []any{map[string]any{"cidr": "10.9.0.0/16"}}}}, map[string]any{"default": manualNet("10.1.1.61")},
		[]string{}, boshEnv).failed(t, "VMCreationFailed", `routes name network "elsewhere"`)
}

// TestRoutesInTheRegistrySettings: an old stemcell's agent reads the same
// routes from the registry.
func TestRoutesInTheRegistrySettings(t *testing.T) {
	e, base := oldStemcellEnv(t)
	stemcell := e.stemcell()
	e.ownNetwork(apiKey, secretKey, "second-network")
	networks := map[string]any{"default": manualNet("10.1.1.62"),
		"second": map[string]any{"type": "dynamic", "cloud_properties": map[string]any{"name": "second-network", "undiscoverable": true}}}
	var cid string
	e.apiVersion = 1
	e.call("create_vm", "agent-old", stemcell, routedVM, networks, []string{}, boshEnv).ok(t).decode(t, &cid)
	code, settings := registryGet(t, base, e.vm(cid).Name)
	if code != 200 {
		t.Fatalf("registry settings %d %s", code, settings)
	}
	checkRoutes(t, "registry settings", settings)
	e.call("delete_vm", cid).ok(t)
}

// TestTheRealAgentReadsTheRoutes: bosh-agent v2.769.0's own settings code
// finds the routes in the user data.
func TestTheRealAgentReadsTheRoutes(t *testing.T) {
	tool := agentSettingsTool(t)
	e := newEnv(t, nil)
	stemcell := e.stemcell()
	cid, _ := e.createCustomVM(stemcell, routedVM, "10.1.1.63")
	out, err := exec.Command(tool, "-uri", e.sim.Base+"/metadata/"+cid).Output()
	if err != nil {
		t.Fatalf("the agent could not read its settings: %v\n%s", err, out)
	}
	var got struct {
		Settings struct {
			Networks map[string]struct{ Routes []map[string]string } `json:"networks"`
		} `json:"settings"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	routes := got.Settings.Networks["default"].Routes
	if len(routes) != len(wantRoutes) {
		t.Fatalf("the agent sees routes %v, want %v", routes, wantRoutes)
	}
	for i, want := range wantRoutes {
		if r := routes[i]; r["Destination"] != want["destination"] || r["Netmask"] != want["netmask"] || r["Gateway"] != want["gateway"] {
			t.Errorf("the agent's route %d is %v, want %v", i, r, want)
		}
	}
}
