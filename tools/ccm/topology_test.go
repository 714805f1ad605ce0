package ccm

import (
	"testing"

	"github.com/apache/cloudstack-go/v2/cloudstack"
)

// The names and addresses of the provider's development guide (its
// hack/e2e/env.sh): kind's three nodes on the docker network 172.30.0.0/24,
// whose gateway is .1 and whose first address, .2, the simulator container
// takes, so the nodes are .3 to .5 (the guide deploys cs-ccm-e2e-worker on
// 172.30.0.4).
const (
	zoneName        = "Sandbox-simulator"
	subnet          = "172.30.0.0/24"
	gateway         = "172.30.0.1"
	netmask         = "255.255.255.0"
	isolatedName    = "ccm-e2e-iso"
	projectName     = "ccm-e2e-vpc"
	vpcName         = "ccm-e2e-vpc"
	vpcCIDR         = "172.30.0.0/22"
	aclListName     = "ccm-e2e-acl"
	tierName        = "ccm-e2e-tier"
	serviceOffering = "Small Instance"
)

const (
	controlPlane = "cs-ccm-e2e-control-plane"
	worker       = "cs-ccm-e2e-worker"
	worker2      = "cs-ccm-e2e-worker2"
)

// nodes are the kind nodes, each with its docker address: the CloudStack VM
// of the same name carries it.
var nodes = []struct{ name, ip string }{
	{controlPlane, "172.30.0.3"}, {worker, "172.30.0.4"}, {worker2, "172.30.0.5"},
}

// topology is one of the guide's two environments: the isolated network
// (phase 1, the admin account's) or the VPC tier (phase 2, in a project).
type topology struct {
	projectID string            // "" for the isolated network
	networkID string            // the isolated network, or the VPC tier
	vpcID     string            // "" for the isolated network
	aclID     string            // the tier's custom ACL list
	vms       map[string]string // node name → VM id
}

// catalog is what both phases look up once: the zone and what VMs are made of.
type catalog struct {
	zoneID, serviceOfferingID, templateID string
}

// isolatedTopology is the guide's 30-topology-isolated.sh: the zone's guest
// CIDR aligned with the docker subnet, an isolated network with source NAT
// (so the provider manages firewall rules on it), one VM per node pinned to
// the node's address.
func (c *cloud) isolatedTopology(t *testing.T) topology {
	t.Helper()
	cs := c.cs
	up := cs.Zone.NewUpdateZoneParams(c.zoneID)
	up.SetGuestcidraddress(subnet)
	if _, err := cs.Zone.UpdateZone(up); err != nil {
		t.Fatalf("updateZone guestcidraddress=%s: %v", subnet, err)
	}
	p := cs.Network.NewCreateNetworkParams(isolatedName, c.networkOffering(t, "DefaultIsolatedNetworkOfferingWithSourceNatService"), c.zoneID)
	p.SetDisplaytext(isolatedName)
	p.SetGateway(gateway)
	p.SetNetmask(netmask)
	n, err := cs.Network.CreateNetwork(p)
	if err != nil {
		t.Fatalf("createNetwork %s: %v", isolatedName, err)
	}
	top := topology{networkID: n.Id}
	top.vms = c.deployNodes(t, top)
	return top
}

// vpcTopology is the guide's 50-topology-vpc.sh: a project holding a VPC,
// a custom ACL list (the provider adds no rules to default_allow or
// default_deny), a tier on the same subnet and a VM per node of the same
// names and addresses, invisible to the isolated phase and it to them.
func (c *cloud) vpcTopology(t *testing.T) topology {
	t.Helper()
	cs := c.cs
	pr, err := cs.Project.CreateProject(cs.Project.NewCreateProjectParams(projectName, projectName))
	if err != nil {
		t.Fatalf("createProject %s: %v", projectName, err)
	}
	offering, _, err := cs.VPC.GetVPCOfferingID("Default VPC offering")
	if err != nil {
		t.Fatalf("listVPCOfferings: %v", err)
	}
	vp := cs.VPC.NewCreateVPCParams(vpcCIDR, vpcName, vpcName, offering, c.zoneID)
	vp.SetProjectid(pr.Id)
	vpc, err := cs.VPC.CreateVPC(vp)
	if err != nil {
		t.Fatalf("createVPC %s: %v", vpcName, err)
	}
	ap := cs.NetworkACL.NewCreateNetworkACLListParams(aclListName, vpc.Id)
	ap.SetDescription(aclListName)
	acl, err := cs.NetworkACL.CreateNetworkACLList(ap)
	if err != nil {
		t.Fatalf("createNetworkACLList %s: %v", aclListName, err)
	}
	np := cs.Network.NewCreateNetworkParams(tierName, c.networkOffering(t, "DefaultIsolatedNetworkOfferingForVpcNetworks"), c.zoneID)
	np.SetDisplaytext(tierName)
	np.SetVpcid(vpc.Id)
	np.SetAclid(acl.Id)
	np.SetGateway(gateway)
	np.SetNetmask(netmask)
	np.SetProjectid(pr.Id)
	tier, err := cs.Network.CreateNetwork(np)
	if err != nil {
		t.Fatalf("createNetwork %s: %v", tierName, err)
	}
	top := topology{projectID: pr.Id, networkID: tier.Id, vpcID: vpc.Id, aclID: acl.Id}
	top.vms = c.deployNodes(t, top)
	return top
}

// networkOffering is the enabled network offering of that name.
func (c *cloud) networkOffering(t *testing.T, name string) string {
	t.Helper()
	p := c.cs.NetworkOffering.NewListNetworkOfferingsParams()
	p.SetName(name)
	p.SetState("Enabled")
	l, err := c.cs.NetworkOffering.ListNetworkOfferings(p)
	if err != nil || l.Count == 0 {
		t.Fatalf("listNetworkOfferings name=%s state=Enabled: %d, %v", name, l.Count, err)
	}
	return l.NetworkOfferings[0].Id
}

// deployNodes deploys a running VM per node on the topology's network, with
// the node's name and address, and checks each got that address.
func (c *cloud) deployNodes(t *testing.T, top topology) map[string]string {
	t.Helper()
	vms := map[string]string{}
	for _, n := range nodes {
		p := c.cs.VirtualMachine.NewDeployVirtualMachineParams(c.serviceOfferingID, c.templateID, c.zoneID)
		p.SetName(n.name)
		p.SetDisplayname(n.name)
		p.SetNetworkids([]string{top.networkID})
		p.SetIpaddress(n.ip)
		p.SetStartvm(true)
		if top.projectID != "" {
			p.SetProjectid(top.projectID)
		}
		vm, err := c.cs.VirtualMachine.DeployVirtualMachine(p)
		if err != nil {
			t.Fatalf("deployVirtualMachine %s: %v", n.name, err)
		}
		if len(vm.Nic) == 0 || vm.Nic[0].Ipaddress != n.ip {
			t.Fatalf("VM %s has NICs %+v, not %s", n.name, vm.Nic, n.ip)
		}
		vms[n.name] = vm.Id
	}
	return vms
}

// lookUpCatalog finds the zone, the service offering and a ready executable
// template of the Simulator hypervisor, by name as the guide does (their
// UUIDs differ between deployments).
func lookUpCatalog(t *testing.T, cs *cloudstack.CloudStackClient) catalog {
	t.Helper()
	zone, _, err := cs.Zone.GetZoneID(zoneName)
	if err != nil {
		t.Fatalf("listZones name=%s: %v", zoneName, err)
	}
	offering, _, err := cs.ServiceOffering.GetServiceOfferingID(serviceOffering)
	if err != nil {
		t.Fatalf("listServiceOfferings name=%s: %v", serviceOffering, err)
	}
	p := cs.Template.NewListTemplatesParams("executable")
	p.SetZoneid(zone)
	p.SetHypervisor("Simulator")
	l, err := cs.Template.ListTemplates(p)
	if err != nil {
		t.Fatalf("listTemplates: %v", err)
	}
	for _, tpl := range l.Templates {
		if tpl.Isready {
			return catalog{zoneID: zone, serviceOfferingID: offering, templateID: tpl.Id}
		}
	}
	t.Fatalf("no ready executable Simulator template in zone %s", zoneName)
	return catalog{}
}
