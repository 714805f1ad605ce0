package infrastructure_test

import (
	"fmt"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
)

// TestListZonesAsListDataCentersInternal: name is EQ and id wins over it; a
// caller that is not a root admin does not see Disabled zones.
func TestListZonesAsListDataCentersInternal(t *testing.T) {
	e := simtesting.NewVMEnv(t, simulator.Options{})
	tenant, _ := e.AddTenant(t, "tenant")
	zones := func(cs *cloudstack.CloudStackClient, set func(p *cloudstack.ListZonesParams)) int {
		t.Helper()
		p := cs.Zone.NewListZonesParams()
		set(p)
		l, err := cs.Zone.ListZones(p)
		if err != nil {
			t.Fatal(err)
		}
		return l.Count
	}
	none := func(*cloudstack.ListZonesParams) {}
	if n := zones(e.CS, func(p *cloudstack.ListZonesParams) { p.SetName("sandbox") }); n != 0 {
		t.Fatalf("name=sandbox (EQ) matched %d zones", n)
	}
	if n := zones(e.CS, func(p *cloudstack.ListZonesParams) { p.SetId(e.Zone); p.SetName("other") }); n != 1 {
		t.Fatalf("id with another name matched %d zones, want 1", n)
	}
	if n := zones(tenant, none); n != 1 {
		t.Fatalf("the tenant sees %d enabled zones, want 1", n)
	}
	// DataCenterJoinDaoImpl.newDataCenterResponse: DNS servers and the guest
	// CIDR only in the full (admin) view.
	mine, err := tenant.Zone.ListZones(tenant.Zone.NewListZonesParams())
	if err != nil || mine.Zones[0].Dns1 != "" || mine.Zones[0].Internaldns1 != "" || mine.Zones[0].Guestcidraddress != "" {
		t.Fatalf("the tenant's zone view = %+v, %v", mine.Zones[0], err)
	}
	full, err := e.CS.Zone.ListZones(e.CS.Zone.NewListZonesParams())
	if err != nil || full.Zones[0].Dns1 == "" || full.Zones[0].Internaldns1 == "" {
		t.Fatalf("the root admin's zone view = %+v, %v", full.Zones[0], err)
	}
	up := e.CS.Zone.NewUpdateZoneParams(e.Zone)
	up.SetAllocationstate("Disabled")
	if _, err := e.CS.Zone.UpdateZone(up); err != nil {
		t.Fatal(err)
	}
	if n := zones(tenant, none); n != 0 {
		t.Fatalf("the tenant sees %d zones, want no Disabled one", n)
	}
	if n := zones(e.CS, none); n != 1 {
		t.Fatalf("the root admin sees %d zones, want the Disabled one", n)
	}
}

// TestHostMaintenanceRefusalsFailTheJob: ResourceManagerImpl.maintain(cmd)
// and cancelMaintenance(cmd) refuse inside the job, with their texts.
func TestHostMaintenanceRefusalsFailTheJob(t *testing.T) {
	e := simtesting.NewVMEnv(t, simulator.Options{})
	e.Srv.Mu.Lock()
	host, internal := e.Srv.State.Hosts[0].ID, e.Srv.State.Hosts[0].InternalID
	e.Srv.Mu.Unlock()
	_, err := e.CS.Host.CancelHostMaintenance(e.CS.Host.NewCancelHostMaintenanceParams(host))
	simtesting.WantJobError(t, err, 530, fmt.Sprintf("Cannot perform cancelMaintenance when resource state is Enabled, hostId = %d", internal))
	if h, err := e.CS.Host.PrepareHostForMaintenance(e.CS.Host.NewPrepareHostForMaintenanceParams(host)); err != nil || h.Resourcestate != "Maintenance" {
		t.Fatalf("prepareHostForMaintenance = %+v, %v", h, err)
	}
	_, err = e.CS.Host.PrepareHostForMaintenance(e.CS.Host.NewPrepareHostForMaintenanceParams(host))
	simtesting.WantJobError(t, err, 530, "Host is already in state Maintenance. Cannot recall for maintenance until resolved.")
	if h, err := e.CS.Host.CancelHostMaintenance(e.CS.Host.NewCancelHostMaintenanceParams(host)); err != nil || h.Resourcestate != "Enabled" {
		t.Fatalf("cancelHostMaintenance = %+v, %v", h, err)
	}
}

// TestListCapabilitiesAsManagementServerImpl: the allowUser* flags are true
// for an admin, the API limits are absent without api.throttling.enabled,
// and extensionspath is only for a root admin (checked on the raw answer).
func TestListCapabilitiesAsManagementServerImpl(t *testing.T) {
	e := simtesting.NewVMEnv(t, simulator.Options{})
	tenant, _ := e.AddTenant(t, "tenant")
	admin, err := e.CS.Configuration.ListCapabilities(e.CS.Configuration.NewListCapabilitiesParams())
	if err != nil || !admin.Capabilities.Allowuserviewdestroyedvm || !admin.Capabilities.Allowuserexpungerecovervm ||
		admin.Capabilities.Extensionspath == "" {
		t.Fatalf("listCapabilities as the root admin = %+v, %v", admin, err)
	}
	user, err := tenant.Configuration.ListCapabilities(tenant.Configuration.NewListCapabilitiesParams())
	if err != nil || user.Capabilities.Allowuserviewdestroyedvm || user.Capabilities.Extensionspath != "" {
		t.Fatalf("listCapabilities as a user = %+v, %v", user, err)
	}
	raw := e.Call(map[string]string{"command": "listCapabilities"}).Inner(t, "listcapabilitiesresponse")
	if capability := raw["capability"].(map[string]any); capability["apilimitinterval"] != nil || capability["apilimitmax"] != nil {
		t.Fatalf("API limits shown without api.throttling.enabled: %v", capability)
	}
}

// TestListHostsNameIsEQ: searchForServerIdsAndCount compares name with EQ
// and keyword with LIKE.
func TestListHostsNameIsEQ(t *testing.T) {
	e := simtesting.NewVMEnv(t, simulator.Options{})
	count := func(set func(p *cloudstack.ListHostsParams)) int {
		t.Helper()
		p := e.CS.Host.NewListHostsParams()
		set(p)
		l, err := e.CS.Host.ListHosts(p)
		if err != nil {
			t.Fatal(err)
		}
		return l.Count
	}
	if n := count(func(p *cloudstack.ListHostsParams) { p.SetName("SimulatedAgent") }); n != 0 {
		t.Fatalf("name=SimulatedAgent (EQ) matched %d hosts", n)
	}
	if n := count(func(p *cloudstack.ListHostsParams) { p.SetKeyword("simulatedagent") }); n == 0 {
		t.Fatal("keyword=simulatedagent (LIKE) matched no host")
	}
	if n := count(func(p *cloudstack.ListHostsParams) { p.SetKeyword("routing") }); n == 0 {
		t.Fatal("keyword=routing (the type) matched no host")
	}
}
