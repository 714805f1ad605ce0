package simulator

import (
	"fmt"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// TestListZonesAsListDataCentersInternal: name is EQ and id wins over it; a
// caller that is not a root admin does not see Disabled zones.
func TestListZonesAsListDataCentersInternal(t *testing.T) {
	e := newVMEnv(t, Options{})
	tenant, _ := e.addTenant(t, "tenant")
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
	if n := zones(e.cs, func(p *cloudstack.ListZonesParams) { p.SetName("sandbox") }); n != 0 {
		t.Fatalf("name=sandbox (EQ) matched %d zones", n)
	}
	if n := zones(e.cs, func(p *cloudstack.ListZonesParams) { p.SetId(e.zone); p.SetName("other") }); n != 1 {
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
	full, err := e.cs.Zone.ListZones(e.cs.Zone.NewListZonesParams())
	if err != nil || full.Zones[0].Dns1 == "" || full.Zones[0].Internaldns1 == "" {
		t.Fatalf("the root admin's zone view = %+v, %v", full.Zones[0], err)
	}
	up := e.cs.Zone.NewUpdateZoneParams(e.zone)
	up.SetAllocationstate("Disabled")
	if _, err := e.cs.Zone.UpdateZone(up); err != nil {
		t.Fatal(err)
	}
	if n := zones(tenant, none); n != 0 {
		t.Fatalf("the tenant sees %d zones, want no Disabled one", n)
	}
	if n := zones(e.cs, none); n != 1 {
		t.Fatalf("the root admin sees %d zones, want the Disabled one", n)
	}
}

// TestHostMaintenanceRefusalsFailTheJob: ResourceManagerImpl.maintain(cmd)
// and cancelMaintenance(cmd) refuse inside the job, with their texts.
func TestHostMaintenanceRefusalsFailTheJob(t *testing.T) {
	e := newVMEnv(t, Options{})
	e.srv.Mu.Lock()
	host, internal := e.srv.State.Hosts[0].ID, e.srv.State.Hosts[0].InternalID
	e.srv.Mu.Unlock()
	_, err := e.cs.Host.CancelHostMaintenance(e.cs.Host.NewCancelHostMaintenanceParams(host))
	wantJobError(t, err, 530, fmt.Sprintf("Cannot perform cancelMaintenance when resource state is Enabled, hostId = %d", internal))
	if h, err := e.cs.Host.PrepareHostForMaintenance(e.cs.Host.NewPrepareHostForMaintenanceParams(host)); err != nil || h.Resourcestate != "Maintenance" {
		t.Fatalf("prepareHostForMaintenance = %+v, %v", h, err)
	}
	_, err = e.cs.Host.PrepareHostForMaintenance(e.cs.Host.NewPrepareHostForMaintenanceParams(host))
	wantJobError(t, err, 530, "Host is already in state Maintenance. Cannot recall for maintenance until resolved.")
	if h, err := e.cs.Host.CancelHostMaintenance(e.cs.Host.NewCancelHostMaintenanceParams(host)); err != nil || h.Resourcestate != "Enabled" {
		t.Fatalf("cancelHostMaintenance = %+v, %v", h, err)
	}
}

// TestListCapabilitiesAsManagementServerImpl: the allowUser* flags are true
// for an admin, the API limits are absent without api.throttling.enabled,
// and extensionspath is only for a root admin (checked on the raw answer).
func TestListCapabilitiesAsManagementServerImpl(t *testing.T) {
	e := newVMEnv(t, Options{})
	tenant, _ := e.addTenant(t, "tenant")
	admin, err := e.cs.Configuration.ListCapabilities(e.cs.Configuration.NewListCapabilitiesParams())
	if err != nil || !admin.Capabilities.Allowuserviewdestroyedvm || !admin.Capabilities.Allowuserexpungerecovervm ||
		admin.Capabilities.Extensionspath == "" {
		t.Fatalf("listCapabilities as the root admin = %+v, %v", admin, err)
	}
	user, err := tenant.Configuration.ListCapabilities(tenant.Configuration.NewListCapabilitiesParams())
	if err != nil || user.Capabilities.Allowuserviewdestroyedvm || user.Capabilities.Extensionspath != "" {
		t.Fatalf("listCapabilities as a user = %+v, %v", user, err)
	}
	raw := e.call(map[string]string{"command": "listCapabilities"}).inner(t, "listcapabilitiesresponse")
	if capability := raw["capability"].(map[string]any); capability["apilimitinterval"] != nil || capability["apilimitmax"] != nil {
		t.Fatalf("API limits shown without api.throttling.enabled: %v", capability)
	}
}

// TestListHostsNameIsEQ: searchForServerIdsAndCount compares name with EQ
// and keyword with LIKE.
func TestListHostsNameIsEQ(t *testing.T) {
	e := newVMEnv(t, Options{})
	count := func(set func(p *cloudstack.ListHostsParams)) int {
		t.Helper()
		p := e.cs.Host.NewListHostsParams()
		set(p)
		l, err := e.cs.Host.ListHosts(p)
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
