package network

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// VPC tiers: the VPC branch of NetworkServiceImpl.createGuestNetwork and
// VpcManagerImpl.createVpcGuestNetwork with validateNtwkOffForNtwkInVpc.

// vpcMaxNetworks is vpc.max.networks's default (VpcManagerImpl.configure).
const vpcMaxNetworks = 3

// vpcTierProviders are VpcManagerImpl.supportedProviders, as the
// simulator's provider names spell them.
var vpcTierProviders = []string{"VpcVirtualRouter", "NiciraNvp", "InternalLbVm", "Netscaler", "JuniperContrailVpcRouter",
	"Ovs", "BigSwitchBcf", "ConfigDrive", "Nsx", "Netris"}

// vpcOfTier is createGuestNetwork's choice between a VPC tier and a
// network of its own: an offering for VPCs only in a VPC, and for a tier
// the ACL list named, the VPC, its zone and the tier's checks. It answers
// the VPC (nil outside one) and the tier's network domain.
func vpcOfTier(st *model.State, o *model.NetworkOffering, s Spec, cidr string) (*model.VPC, string, error) {
	if s.VPCID == "" {
		if o.ForVPC {
			return nil, "", kernel.ParamError("Network offering can be used for VPC networks only")
		}
		return nil, s.NetworkDomain, nil
	}
	if !o.ForVPC {
		return nil, "", kernel.ParamError("Network offering can't be used for VPC networks")
	}
	if err := checkTierACL(st, s); err != nil {
		return nil, "", err
	}
	v := st.ActiveVPC(s.VPCID)
	if v == nil {
		return nil, "", kernel.ParamError("Unable to find Enabled VPC ")
	}
	domain := model.Or(s.NetworkDomain, v.NetworkDomain)
	if v.ZoneID != s.ZoneID {
		return nil, "", kernel.ParamError("New network doesn't belong to vpc zone")
	}
	if err := validateNewVPCTier(st, v, cidr, s.Gateway, domain); err != nil {
		return nil, "", err
	}
	if err := validateTierOffering(st, v, o, s.ACLID != ""); err != nil {
		return nil, "", err
	}
	return v, domain, nil
}

// checkTierACL is createGuestNetwork's aclid check: the list exists and is
// a default one or the VPC's.
func checkTierACL(st *model.State, s Spec) *kernel.APIError {
	if s.ACLID == "" {
		return nil
	}
	l, ok := model.ByID(st.NetworkACLLists, s.ACLID)
	switch {
	case !ok:
		return kernel.ParamError("Unable to find specified NetworkACL")
	case !isDefaultACL(l) && !strings.EqualFold(l.VPCID, s.VPCID):
		return kernel.ParamError("ACL: %d do not belong to the VPC", l.InternalID)
	}
	return nil
}

// validateNewVPCTier is VpcManagerImpl.validateNewVpcGuestNetwork: at most
// vpc.max.networks tiers, a CIDR given, inside the VPC's and crossing no
// other tier's, the VPC's network domain, a gateway that is not the
// subnet's address.
func validateNewVPCTier(st *model.State, v *model.VPC, cidr, gateway, domain string) error {
	tiers := st.VPCTiers(v.ID)
	if len(tiers) >= vpcMaxNetworks {
		return kernel.InternalError("Number of networks per VPC cannot surpass [%d].", vpcMaxNetworks)
	}
	if cidr == "" {
		return kernel.ParamError("Gateway/netmask are required when create network for VPC")
	}
	if !cidrWithin(cidr, v.CIDR) {
		return kernel.ParamError("Network cidr %s is not within vpc %s cidr", cidr, describeVPC(v))
	}
	for _, t := range tiers {
		if cidrWithin(t.CIDR, cidr) || cidrWithin(cidr, t.CIDR) {
			return kernel.ParamError("Network cidr %s crosses other network cidr %s belonging to the same vpc %s", cidr,
				Describe(t), describeVPC(v))
		}
	}
	if !strings.EqualFold(domain, v.NetworkDomain) {
		return kernel.ParamError("Network domain of the new network should match network domain of vpc %s", describeVPC(v))
	}
	if p, _ := netip.ParsePrefix(cidr); p.Masked().Addr().String() == gateway {
		return kernel.ParamError("Invalid gateway specified. It should never be equal to the cidr subnet value")
	}
	return nil
}

// cidrWithin is NetUtils.isNetworkAWithinNetworkB.
func cidrWithin(a, b string) bool {
	pa, errA := netip.ParsePrefix(a)
	pb, errB := netip.ParsePrefix(b)
	return errA == nil && errB == nil && pa.Bits() >= pb.Bits() && pb.Masked().Contains(pa.Addr())
}

// validateTierOffering is the rest of validateNtwkOffForNtwkInVpc:
// validateNtwkOffForVpc (providers a VPC supports, an Isolated offering
// with SourceNat or Gateway), each service and provider of the offering in
// the VPC's offering, one offering with public LB per VPC, and NetworkACL
// for an aclid.
func validateTierOffering(st *model.State, v *model.VPC, o *model.NetworkOffering, withACL bool) *kernel.APIError {
	for _, provs := range o.Services {
		for _, p := range provs {
			if !slices.Contains(vpcTierProviders, p) {
				return kernel.ParamError("Provider of type %s is not supported for network offerings that can be used in VPC", p)
			}
		}
	}
	if o.GuestType != "Isolated" || !o.Has("SourceNat") && !o.Has("Gateway") {
		return kernel.ParamError("Only network offerings of type Isolated with service SourceNat are valid for vpc ")
	}
	vo, _ := model.ByID(st.VPCOfferings, v.OfferingID)
	for _, svc := range views.NetworkServices {
		for _, p := range o.Services[svc] {
			if vo == nil || !slices.Contains(vo.Services[svc], p) {
				return kernel.ParamError("Service/provider combination %s/%s is not supported by VPC %s", svc, p, describeVPC(v))
			}
		}
	}
	if o.Has("Lb") {
		for _, t := range st.VPCTiers(v.ID) {
			if t.OfferingID != o.ID && Provides(st, t, "Lb") {
				return kernel.ParamError("Public LB service is already supported by network %s in VPC %s", Describe(t), describeVPC(v))
			}
		}
	}
	if withACL && !o.Has("NetworkACL") {
		return kernel.ParamError("Cannot apply NetworkACL. Network Offering does not support NetworkACL service")
	}
	return nil
}
