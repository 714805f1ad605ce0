package network

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/infrastructure"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/netutils"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/tag"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// VPCs: VpcManagerImpl (createVpc, startVpc, listVpcs, deleteVpc,
// destroyVpc) and the VPC offerings it configures.

// vpcCommands are the commands of vpcs.go (registerCommands).
func vpcCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listVPCOfferings", IDKind: model.KindVPCOffering, Sync: listVPCOfferings},
		{Name: "createVPC", Async: createVPC},
		{Name: "listVPCs", IDKind: model.KindVPC, Sync: listVPCs},
		{Name: "deleteVPC", IDKind: model.KindVPC, Async: deleteVPC},
	}
}

// VPCOwner is the taggable for Vpc: the account owning the resource a tag names.
func VPCOwner(st *model.State, id string) (string, bool) {
	if v := st.VPC(id); v != nil {
		return v.AccountID, true
	}
	return "", false
}

// defaultVPCOfferingName is VpcOffering.defaultVPCOfferingName.
const defaultVPCOfferingName = "Default VPC offering"

// vpcServices is VpcManagerImpl.getSupportedServices.
var vpcServices = []string{"Dhcp", "Dns", "UserData", "NetworkACL", "PortForwarding", "Lb", "SourceNat", "StaticNat",
	"Gateway", "Vpn"}

// SeedVPCDefaults makes what a management server has before any VPC: the
// default VPC offering (VpcManagerImpl.configure: every supported service
// by VpcVirtualRouter, Lb also by InternalLbVm, Enabled, isDefault) and the
// global ACL lists (the schema's default_deny, id 1, and default_allow, id
// 2, with their rules). Older state files get them on first use.
// Departure: the Netscaler, redundant, NSX and Netris VPC offerings
// configure also makes are not seeded; no command here could use them.
func SeedVPCDefaults(st *model.State, now time.Time) {
	if vpcOfferingNamed(st, defaultVPCOfferingName) == nil {
		o := &model.VPCOffering{Name: defaultVPCOfferingName, DisplayText: defaultVPCOfferingName, State: model.OfferingEnabled,
			IsDefault: true, Services: map[string][]string{}, Created: now}
		for _, s := range vpcServices {
			o.Services[s] = []string{"VpcVirtualRouter"}
		}
		o.Services["Lb"] = []string{"InternalLbVm", "VpcVirtualRouter"}
		o.ID, o.InternalID = st.NewID(model.KindVPCOffering)
		st.VPCOfferings = append(st.VPCOfferings, o)
	}
	seedDefaultACLs(st, now)
}

func vpcOfferingNamed(st *model.State, name string) *model.VPCOffering {
	for _, o := range st.VPCOfferings {
		if o.Name == name {
			return o
		}
	}
	return nil
}

// listVPCOfferings is VpcManagerImpl.listVpcOfferings: name and display
// text LIKE, keyword in either, isdefault and state EQ, supportedservices
// all provided; ordered by sort key then id.
func listVPCOfferings(c *kernel.Call) (any, error) {
	SeedVPCDefaults(c.State, c.Engine.Now())
	p := c.Params
	l := kernel.Lister[*model.VPCOffering]{Key: "vpcoffering", ID: (*model.VPCOffering).UUID, NameLike: true,
		Name:    func(o *model.VPCOffering) string { return o.Name },
		Keyword: func(o *model.VPCOffering) []string { return []string{o.Name, o.DisplayText} },
		View:    views.VPCOfferingView}
	services, err := serviceList(p.List("supportedservices"))
	if err != nil {
		return nil, err
	}
	return l.Run(c, c.State.VPCOfferings, func(o *model.VPCOffering) bool {
		return kernel.OptEq(p.Get("state"), o.State) && like(o.DisplayText, p.Get("displaytext")) &&
			(!p.Has("isdefault") || p.Bool("isdefault", false) == o.IsDefault) && hasEvery(o.Has, services)
	})
}

// serviceList is Service.getService of each name, refused when unknown
// ("Invalid service specified ").
func serviceList(names []string) ([]string, *kernel.APIError) {
	var out []string
	for _, n := range names {
		svc := canonical(views.NetworkServices, n)
		if svc == "" {
			return nil, kernel.ParamError("Invalid service specified %s", n)
		}
		out = append(out, svc)
	}
	return out, nil
}

func hasEvery(has func(string) bool, services []string) bool {
	for _, s := range services {
		if !has(s) {
			return false
		}
	}
	return true
}

// like is SQL's LIKE '%s%' under MySQL's case-insensitive collation.
func like(value, s string) bool {
	return s == "" || strings.Contains(strings.ToLower(value), strings.ToLower(s))
}

// VPCSpec is createVPC's input.
type VPCSpec struct {
	Name, DisplayText, ZoneID, OfferingID, CIDR, NetworkDomain string
	CIDRSize                                                   string
	Account                                                    *model.Account
	CallerIsRoot                                               bool
}

// createVPC is CreateVPCCmd: create (VpcManagerImpl.createVpc) persists the
// VPC, Enabled, at once; the job (execute: startVpc when start, the
// default) implements it, which deploys its router and gives it its
// source NAT address (VpcVirtualRouterElement.implementVpc,
// assignSourceNatIpAddressToVpc). A VPC that fails to start is destroyed
// (startVpc's destroyOnFailure); with start=false the first VM on a tier
// starts it (StartTierVPC). Departure: no router VM exists; the
// sourcenatipaddress, ip4dns, mtu and routing parameters are not read.
func createVPC(c *kernel.Call) (*kernel.AsyncJob, error) {
	SeedVPCDefaults(c.State, c.Engine.Now())
	p := c.Params
	owner, err := ownerOf(c)
	if err != nil {
		return nil, err
	}
	vpc, err := MakeVPC(c.State, VPCSpec{Name: p.Get("name"), DisplayText: p.Get("displaytext"), ZoneID: p.Get("zoneid"),
		OfferingID: p.Get("vpcofferingid"), CIDR: p.Get("cidr"), CIDRSize: p.Get("cidrsize"),
		NetworkDomain: p.Get("networkdomain"), Account: owner, CallerIsRoot: c.Account.Type == 1}, c.Engine.Now())
	if err != nil {
		return nil, err
	}
	c.Changed()
	start := p.Bool("start", true)
	return &kernel.AsyncJob{InstanceType: "Vpc", InstanceID: vpc.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.admin.vpc.CreateVPCCmdByAdmin",
		Run: func() (any, error) {
			if start {
				if err := StartVPC(c, vpc); err != nil {
					destroyVPC(c, vpc)
					return nil, kernel.InternalError("Failed to start VPC")
				}
			}
			return map[string]any{"vpc": views.VPCView(c, vpc)}, nil
		}}, nil
}

// ownerOf is the owner a create command's account/domainid or projectid
// name (CreateVPCCmd.getEntityOwnerId: AccountManagerImpl.finalyzeAccountId
// of accountName, domainId and projectId), else the caller.
func ownerOf(c *kernel.Call) (*model.Account, error) {
	if c.Params.Get("projectid") != "" {
		return c.Owner()
	}
	name := c.Params.Get("account")
	if name == "" {
		return c.Account, nil
	}
	owner := accountNamed(c.State, name, model.Or(c.Params.Get("domainid"), c.Account.DomainID))
	if owner == nil {
		return nil, kernel.ParamError("Unable to find account %s in specified domain", name)
	}
	return owner, nil
}

// MakeVPC is VpcManagerImpl.createVpc's checks, in its order, and the row.
func MakeVPC(st *model.State, s VPCSpec, now time.Time) (*model.VPC, error) {
	z := st.Zone(s.ZoneID)
	if z == nil {
		return nil, kernel.ParamError("Can't find zone by id specified")
	}
	o, ok := model.ByID(st.VPCOfferings, s.OfferingID)
	if !ok || o.State != model.OfferingEnabled {
		return nil, kernel.ParamError("Unable to find vpc offering in Enabled state by specified id")
	}
	switch { // validateVpcCidrSize, for an offering that is not Routed
	case s.CIDR == "" && s.CIDRSize == "":
		return nil, kernel.ParamError("VPC cidr or cidr size must be specified")
	case s.CIDR != "" && s.CIDRSize != "":
		return nil, kernel.ParamError("VPC cidr and cidr size are mutually exclusive")
	case s.CIDRSize != "":
		return nil, kernel.ParamError("VPC cidr size is only applicable on VPC with Routed mode")
	case z.Allocation == model.AllocationDisabled && !s.CallerIsRoot:
		return nil, kernel.PermissionDenied("Cannot perform this operation since specified Zone is currently disabled")
	}
	domain := model.Or(s.NetworkDomain, "cs"+strconv.FormatInt(s.Account.InternalID, 16)+guestDomainSuffix)
	if !netutils.VerifyDomainName(domain) {
		return nil, infrastructure.InvalidNetworkDomain()
	}
	if err := checkVPCCIDR(s.CIDR); err != nil {
		return nil, err
	}
	if err := vpcProvidersEnabled(st, z, o); err != nil {
		return nil, err
	}
	v := &model.VPC{Name: s.Name, DisplayText: model.Or(s.DisplayText, s.Name), ZoneID: z.ID, OfferingID: o.ID,
		CIDR: s.CIDR, NetworkDomain: domain, AccountID: s.Account.ID, State: model.VPCEnabled, Display: true, Created: now}
	v.ID, v.InternalID = st.NewID(model.KindVPC)
	st.VPCs = append(st.VPCs, v)
	return v, nil
}

// checkVPCCIDR is VpcManagerImpl.createVpc(displayVpc, vpc)'s CIDR checks:
// a valid IPv4 CIDR, RFC 1918 (allow.non.rfc1918.compliant.ips is false).
func checkVPCCIDR(cidr string) *kernel.APIError {
	if _, err := netip.ParsePrefix(cidr); err != nil || !netutils.ValidIPv4(strings.Split(cidr, "/")[0]) {
		return kernel.ParamError("Invalid CIDR specified %s", cidr)
	}
	if !netutils.ValidateGuestCIDR(cidr) {
		return kernel.ParamError("Guest Cidr %s is not RFC1918 compliant", cidr)
	}
	return nil
}

// vpcProvidersEnabled is VpcManagerImpl.finalizeServicesAndProvidersForVpc:
// each provider of the offering enabled on a physical network of the zone
// (NetworkModelImpl.isProviderEnabledInZone).
func vpcProvidersEnabled(st *model.State, z *model.Zone, o *model.VPCOffering) *kernel.APIError {
	for _, svc := range vpcServices {
		for _, prov := range o.Services[svc] {
			if !providerEnabledInZone(st, z.ID, prov) {
				return kernel.ParamError("Provider %s should be enabled in at least one physical network of the zone specified", prov)
			}
		}
	}
	return nil
}

func providerEnabledInZone(st *model.State, zoneID, name string) bool {
	for _, nsp := range st.Providers {
		pn, ok := model.ByID(st.PhysicalNetworks, nsp.PhysicalNetworkID)
		if ok && pn.ZoneID == zoneID && strings.EqualFold(nsp.Name, name) && nsp.State == model.ProviderEnabled {
			return true
		}
	}
	return false
}

// StartVPC is startVpc with VpcVirtualRouterElement.implementVpc: the
// router's source NAT address, the lowest free address of the zone
// (assignSourceNatIpAddressToVpc: assignDedicateIpAddress with the VPC, no
// network). A VPC that has one keeps it (getExistingSourceNatInVpc).
func StartVPC(c *kernel.Call, v *model.VPC) *kernel.APIError {
	ensurePublicIPs(c)
	if vpcSourceNAT(c.State, v.ID) != nil {
		return nil
	}
	ip := freePublicIP(c.State, v.ZoneID, "")
	if ip == nil {
		return &kernel.APIError{Code: kernel.CodeCapacity, CSCode: kernel.CsInsufficientCap, Text: "Insufficient address capacity"}
	}
	allocatePublicIP(c, ip, v.AccountID)
	ip.State, ip.VPCID, ip.SourceNAT = model.IPAllocated, v.ID, true
	return nil
}

// StartTierVPC is VpcVirtualRouterElement.implement for a tier: the VPC's
// router is deployed with the tier if createVPC did not start it
// (start=false), and with it the VPC's source NAT address.
func StartTierVPC(c *kernel.Call, n *model.Network) *kernel.APIError {
	if v := c.State.ActiveVPC(n.VPCID); v != nil && n.VPCID != "" {
		return StartVPC(c, v)
	}
	return nil
}

// vpcSourceNAT is IpAddressManagerImpl.getExistingSourceNatInVpc.
func vpcSourceNAT(st *model.State, vpcID string) *model.PublicIP {
	for _, ip := range st.PublicIPs {
		if ip.SourceNAT && ip.VPCID == vpcID && ip.State != model.IPFree {
			return ip
		}
	}
	return nil
}

// listVPCs is VpcManagerImpl.listVpcs: name and display text LIKE, keyword
// in either, vpcofferingid, zoneid, state, restartrequired and cidr EQ,
// tags any pair, then supportedservices; newest first (Filter "created",
// false). Departure: the account/domain scoping is not modelled (every
// caller is its own account or the root admin), nor display.
func listVPCs(c *kernel.Call) (any, error) {
	p := c.Params
	l := kernel.Lister[*model.VPC]{Key: "vpc", ID: (*model.VPC).UUID, NameLike: true, Name: func(v *model.VPC) string { return v.Name },
		Keyword: func(v *model.VPC) []string { return []string{v.Name, v.DisplayText} },
		Zone:    func(v *model.VPC) string { return v.ZoneID }, View: views.VPCView,
		Owner: func(v *model.VPC) string { return v.AccountID }} // the project scope of buildACLSearchParameters
	services, err := serviceList(p.List("supportedservices"))
	if err != nil {
		return nil, err
	}
	var newestFirst []*model.VPC
	for i := len(c.State.VPCs) - 1; i >= 0; i-- {
		if v := c.State.VPCs[i]; v.Removed == nil {
			newestFirst = append(newestFirst, v)
		}
	}
	return l.Run(c, newestFirst, func(v *model.VPC) bool {
		o, _ := model.ByID(c.State.VPCOfferings, v.OfferingID)
		return like(v.DisplayText, p.Get("displaytext")) && kernel.OptEq(p.Get("vpcofferingid"), v.OfferingID) &&
			kernel.OptEq(p.Get("state"), v.State) && kernel.OptEq(p.Get("cidr"), v.CIDR) &&
			(!p.Has("restartrequired") || p.Bool("restartrequired", false) == v.RestartRequired) &&
			tag.TaggedWithAny(c.State, "Vpc", v.ID, p.Map("tags")) && o != nil && hasEvery(o.Has, services)
	})
}

// deleteVPC is VpcManagerImpl.deleteVpc: the VPC's tags go, then
// destroyVpc in the job refuses a VPC that still has tiers ("Can't delete
// VPC ... as its used by N networks"), else marks it Inactive, releases
// its addresses, deletes its ACL lists and removes it.
func deleteVPC(c *kernel.Call) (*kernel.AsyncJob, error) {
	v := c.State.VPC(c.Params.Get("id"))
	if v == nil {
		return nil, kernel.ParamError("unable to find VPC id=%d", vpcInternalID(c.State, c.Params.Get("id")))
	}
	return &kernel.AsyncJob{InstanceType: "Vpc", InstanceID: v.ID,
		CmdClass: "org.apache.cloudstack.api.command.user.vpc.DeleteVPCCmd",
		Run: func() (any, error) {
			tag.RemoveTagsOf(c.State, "Vpc", v.ID)
			if n := len(c.State.VPCTiers(v.ID)); n > 0 {
				return nil, kernel.ParamError("Can't delete VPC %s as its used by %d networks", describeVPC(v), n)
			}
			destroyVPC(c, v)
			return kernel.Success(), nil
		}}, nil
}

// destroyVPC is destroyVpc once no tier is left: Inactive, then
// cleanupVpcResources (every address of the VPC disassociated, its ACL
// lists deleted), then removed.
func destroyVPC(c *kernel.Call, v *model.VPC) {
	v.State = model.VPCInactive
	for _, ip := range c.State.PublicIPs {
		if ip.VPCID == v.ID && ip.State != model.IPFree {
			cleanupIPRules(c, ip)
			tag.RemoveTagsOf(c.State, "PublicIpAddress", ip.ID)
			ip.Release()
		}
	}
	deleteACLListsOf(c.State, v.ID)
	now := c.Engine.Now()
	v.Removed = &now
	c.Changed()
}

func vpcInternalID(st *model.State, id string) int64 {
	if v, ok := model.ByID(st.VPCs, id); ok {
		return v.InternalID
	}
	return 0
}

// describeVPC is VpcVO.toString, as CloudStack's error texts show it.
func describeVPC(v *model.VPC) string {
	return `VPC {"id": ` + strconv.FormatInt(v.InternalID, 10) + `, "name": "` + v.Name + `", "uuid": "` + v.ID + `"}`
}
