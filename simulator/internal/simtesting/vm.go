package simtesting

import (
	"io"
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// StateOf is a shared test helper.
func (e *VMEnv) StateOf(t *testing.T, id string) string {
	t.Helper()
	p := e.Raw.VirtualMachine.NewListVirtualMachinesParams()
	p.SetId(id)
	l, err := e.Raw.VirtualMachine.ListVirtualMachines(p)
	if err != nil {
		t.Fatal(err)
	}
	if l.Count == 0 {
		return ""
	}
	return l.VirtualMachines[0].State
}

// ProjectNetwork creates an isolated network of the default network's
// offering in a project.
func (e *VMEnv) ProjectNetwork(t *testing.T, cs *cloudstack.CloudStackClient, projectID, name string) *cloudstack.CreateNetworkResponse {
	t.Helper()
	own, _, err := e.CS.Network.GetNetworkByID(e.Net)
	if err != nil {
		t.Fatal(err)
	}
	np := cs.Network.NewCreateNetworkParams(name, own.Networkofferingid, e.Zone)
	np.SetProjectid(projectID)
	n, err := cs.Network.CreateNetwork(np)
	if err != nil {
		t.Fatalf("createNetwork in project %s: %v", projectID, err)
	}
	return n
}

// PublicIPs is a shared test helper.
func (e *VMEnv) PublicIPs(t *testing.T, p *cloudstack.ListPublicIpAddressesParams) []*cloudstack.PublicIpAddress {
	t.Helper()
	if p == nil {
		p = e.CS.Address.NewListPublicIpAddressesParams()
	}
	l, err := e.CS.Address.ListPublicIpAddresses(p)
	if err != nil {
		t.Fatal(err)
	}
	return l.PublicIpAddresses
}

// MetadataFetch is a shared test helper.
func (e *VMEnv) MetadataFetch(t *testing.T, vmID, path string) (string, int) {
	t.Helper()
	resp, err := e.HTTP.Client().Get(e.HTTP.URL + "/metadata/" + vmID + "/" + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b), resp.StatusCode
}

// IsoUploadParams calls getUploadParamsForIso as the CPI does: through a
// custom request that unwraps "getuploadparams" (cloudstack-go v2.19.0's
// own call does not; see TestGetUploadParamsForIsoShape).
func (e *VMEnv) IsoUploadParams(t *testing.T, name string, extra map[string]string) (*cloudstack.GetUploadParamsForTemplateResponse, error) {
	t.Helper()
	p := &cloudstack.CustomServiceParams{}
	p.SetParam("name", name)
	p.SetParam("format", "ISO")
	p.SetParam("zoneid", e.Zone)
	for k, v := range extra {
		p.SetParam(k, v)
	}
	var r struct {
		Params cloudstack.GetUploadParamsForTemplateResponse `json:"getuploadparams"`
	}
	err := e.CS.Custom.(*cloudstack.CustomService).CustomRequest("getUploadParamsForIso", p, &r)
	return &r.Params, err
}

// ListSettings is a shared test helper.
func ListSettings(t *testing.T, cs *cloudstack.CloudStackClient, name string) []*cloudstack.Configuration {
	t.Helper()
	p := cs.Configuration.NewListConfigurationsParams()
	if name != "" {
		p.SetName(name)
	}
	r, err := cs.Configuration.ListConfigurations(p)
	if err != nil {
		t.Fatal(err)
	}
	return r.Configurations
}

// Associate takes a public address for the seeded network.
func (e *VMEnv) Associate(t *testing.T) *cloudstack.AssociateIpAddressResponse {
	t.Helper()
	return e.AssociateTo(t, e.Net)
}

// AssociateTo is a shared test helper.
func (e *VMEnv) AssociateTo(t *testing.T, network string) *cloudstack.AssociateIpAddressResponse {
	t.Helper()
	p := e.CS.Address.NewAssociateIpAddressParams()
	p.SetNetworkid(network)
	ip, err := e.CS.Address.AssociateIpAddress(p)
	if err != nil {
		t.Fatalf("associateIpAddress on %s: %v", network, err)
	}
	return ip
}

// LbParams is a shared test helper.
func (e *VMEnv) LbParams(ipID, name string, port int) *cloudstack.CreateLoadBalancerRuleParams {
	p := e.CS.LoadBalancer.NewCreateLoadBalancerRuleParams("roundrobin", name, 8080, port)
	if ipID != "" {
		p.SetPublicipid(ipID)
	}
	return p
}
