package network

import (
	"strings"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// Network offerings: ConfigurationManagerImpl.createNetworkOffering and
// updateNetworkOffering, NetworkOfferingJoinDao's listing.

// networkOfferingCommands are the commands of netofferings.go (registerCommands).
func networkOfferingCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createNetworkOffering", Sync: createNetworkOffering},
		{Name: "updateNetworkOffering", IDKind: model.KindNetworkOffering, Sync: updateNetworkOffering},
		{Name: "listNetworkOfferings", IDKind: model.KindNetworkOffering, Sync: listNetworkOfferings},
	}
}

// networkProviders are the Network.Provider names the simulator's physical
// networks carry (Provider.getProvider matches case-insensitively).
var networkProviders = []string{"VirtualRouter", "VpcVirtualRouter", "SecurityGroupProvider", "ConfigDrive",
	"InternalLbVm", "BaremetalPxeProvider", "Tungsten", "Nsx", "Netris"}

func canonical(names []string, s string) string {
	for _, n := range names {
		if strings.EqualFold(n, s) {
			return n
		}
	}
	return ""
}

// OfferingSpec is createNetworkOffering's input after CreateNetworkOfferingCmd's
// defaults (display text the name, availability Optional, conserve mode and
// egress default policy true, not enabled).
type OfferingSpec struct {
	Name, DisplayText, GuestType, TrafficType, Availability, Tags string
	Services                                                      []string
	Providers                                                     map[string][]string
	ConserveMode, SpecifyVLAN, SpecifyIPRanges, Persistent        bool
	EgressDefault, Enable                                         bool
	ForVPC                                                        *bool
}

func createNetworkOffering(c *kernel.Call) (any, error) {
	p := c.Params
	s := OfferingSpec{Name: p.Get("name"), DisplayText: model.Or(p.Get("displaytext"), p.Get("name")),
		GuestType: p.Get("guestiptype"), TrafficType: p.Get("traffictype"), Availability: model.Or(p.Get("availability"), "Optional"),
		Tags: p.Get("tags"), Services: p.List("supportedservices"), Providers: map[string][]string{},
		ConserveMode: p.Bool("conservemode", true), SpecifyVLAN: p.Bool("specifyvlan", false),
		SpecifyIPRanges: p.Bool("specifyipranges", false), Persistent: p.Bool("ispersistent", false),
		EgressDefault: p.Bool("egressdefaultpolicy", true), Enable: p.Bool("enable", false)}
	if p.Has("forvpc") {
		v := p.Bool("forvpc", false)
		s.ForVPC = &v
	}
	// CreateNetworkOfferingCmd.getServiceProviders
	for _, m := range p.Map("serviceproviderlist") {
		s.Providers[m["service"]] = append(s.Providers[m["service"]], m["provider"])
	}
	o, err := MakeNetworkOffering(c.State, s, c.Engine.Now())
	if err != nil {
		return nil, err
	}
	c.Changed()
	return map[string]any{"networkoffering": views.NetworkOfferingView(o)}, nil
}

// MakeNetworkOffering follows ConfigurationManagerImpl.createNetworkOffering:
// Guest traffic only; the guest type Shared, Isolated or L2; availability
// Required or Optional; every service valid (Gateway is implied by
// SourceNat); each service given in serviceproviderlist must be supported,
// one provider unless Lb; the VR may serve UserData only when it serves
// Dhcp. Departure: service capabilities, IPv6, domain/zone scoping and
// service offerings for the router are not modelled.
func MakeNetworkOffering(st *model.State, s OfferingSpec, now time.Time) (*model.NetworkOffering, error) {
	if !strings.EqualFold(s.TrafficType, "Guest") {
		if canonical(trafficTypes, s.TrafficType) == "" && !strings.EqualFold(s.TrafficType, "Control") {
			return nil, kernel.ParamError("Invalid value for traffictype. Supported traffic types: Public, Management, Control, Guest, Vlan or Storage")
		}
		return nil, kernel.ParamError("Only traffic type Guest is supported in the current release")
	}
	guestType := canonical([]string{"Isolated", "Shared", "L2"}, s.GuestType)
	if guestType == "" {
		return nil, kernel.ParamError("Invalid \"type\" parameter is given; can have Shared and Isolated values")
	}
	availability := canonical([]string{"Required", "Optional"}, s.Availability)
	if availability == "" {
		return nil, kernel.ParamError("Invalid value for Availability. Supported types: Required, Optional")
	}
	o := &model.NetworkOffering{Name: s.Name, DisplayText: s.DisplayText, GuestType: guestType, Availability: availability,
		State: model.OfferingDisabled, ConserveMode: s.ConserveMode, SpecifyVLAN: s.SpecifyVLAN, SpecifyIPRanges: s.SpecifyIPRanges,
		Persistent: s.Persistent, EgressDefault: s.EgressDefault, Tags: s.Tags, Services: map[string][]string{},
		Created: now}
	forVPC := s.ForVPC
	for _, name := range s.Services {
		svc := canonical(views.NetworkServices, name)
		if svc == "" || svc == "Gateway" {
			return nil, kernel.ParamError("Invalid service %s", name)
		}
		if forVPC == nil && (svc == "SecurityGroup" || svc == "Firewall" || svc == "NetworkACL") {
			v := svc == "NetworkACL"
			forVPC = &v
		}
		if svc == "SecurityGroup" {
			if guestType != "Shared" {
				return nil, kernel.ParamError("Security group service is supported for network offerings with guest ip type Shared")
			}
			o.Services[svc] = []string{"SecurityGroupProvider"}
			continue
		}
		o.Services[svc] = []string{}
	}
	if err := setProviders(o, s.Providers); err != nil {
		return nil, err
	}
	if p, ok := o.Services["SourceNat"]; ok {
		o.Services["Gateway"] = p
	}
	o.ForVPC = forVPC != nil && *forVPC
	if s.Enable {
		o.State = model.OfferingEnabled
	}
	o.ID, o.InternalID = st.NewID(model.KindNetworkOffering)
	st.NetworkOfferings = append(st.NetworkOfferings, o)
	return o, nil
}

// setProviders is createNetworkOffering's provider loop.
func setProviders(o *model.NetworkOffering, providers map[string][]string) *kernel.APIError {
	var dhcp string
	vrUserData := false
	for name, provs := range providers {
		svc := canonical(views.NetworkServices, name)
		if _, ok := o.Services[svc]; !ok || svc == "" {
			return kernel.ParamError("Service %s is not enabled for the network offering, can't add a provider to it", name)
		}
		if svc != "Lb" && len(provs) > 1 {
			return kernel.ParamError("In the current release only one provider can be specified for the service if the service is not LB")
		}
		var list []string
		for _, pn := range provs {
			prov := canonical(networkProviders, pn)
			if prov == "" {
				return kernel.ParamError("Invalid service provider: %s", pn)
			}
			if svc == "Dhcp" {
				dhcp = prov
			}
			if svc == "UserData" && prov == "VirtualRouter" {
				vrUserData = true
			}
			list = append(list, prov)
		}
		o.Services[svc] = list
	}
	if dhcp == "" && vrUserData {
		return kernel.ParamError("Without VR as dhcp provider, User data can't selected for VR. Please select VR as DHCP provider ")
	}
	return nil
}

// updateNetworkOffering follows ConfigurationManagerImpl.updateNetworkOffering
// for name, display text, state (case-insensitive), tags and availability
// (Required only for an Isolated offering with SourceNat, and only one
// offering of the system may be Required). Departure: the sort key, maximum
// connections, domains and zones are not stored, and new tags are not
// checked against the physical networks' tags.
func updateNetworkOffering(c *kernel.Call) (any, error) {
	p := c.Params
	o := c.State.NetworkOffering(p.Get("id"))
	if o == nil {
		return nil, kernel.ParamError("unable to find network offering %s", p.Get("id"))
	}
	if err := changeNetworkOffering(c.State, o, p.Get("name"), p.Get("displaytext"), p.Get("availability"), p.Get("state")); err != nil {
		return nil, err
	}
	if p.Has("tags") {
		o.Tags = p.Get("tags")
	}
	c.Changed()
	return map[string]any{"networkoffering": views.NetworkOfferingView(o)}, nil
}

func changeNetworkOffering(st *model.State, o *model.NetworkOffering, name, text, availability, stateName string) *kernel.APIError {
	if stateName != "" {
		s := canonical([]string{model.OfferingDisabled, model.OfferingEnabled}, stateName)
		if s == "" {
			return kernel.ParamError("Incorrect state value: %s", stateName)
		}
		stateName = s
	}
	if availability != "" {
		a := canonical([]string{"Required", "Optional"}, availability)
		if a == "" {
			return kernel.ParamError("Invalid value for Availability. Supported types: Required, Optional")
		}
		if a == "Required" {
			if o.GuestType != "Isolated" || !o.Has("SourceNat") {
				return kernel.ParamError("Availability can be Required only for networkOfferings of type Isolated and with SourceNat enabled")
			}
			for _, other := range st.NetworkOfferings {
				if other != o && other.Availability == "Required" {
					return kernel.ParamError("System already has network offering id=%d with availability Required", other.InternalID)
				}
			}
		}
		availability = a
	}
	o.Name, o.DisplayText = model.Or(name, o.Name), model.Or(text, o.DisplayText)
	o.Availability = model.Or(availability, o.Availability)
	o.State = model.Or(stateName, o.State)
	return nil
}

// listNetworkOfferings follows ConfigurationManagerImpl.searchForNetworkOfferings
// for the filters the simulator's offerings have.
func listNetworkOfferings(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.NetworkOffering]{Key: "networkoffering", ID: (*model.NetworkOffering).UUID,
		Name:    func(o *model.NetworkOffering) string { return o.Name },
		Keyword: func(o *model.NetworkOffering) []string { return []string{o.Name, o.DisplayText} },
		View:    kernel.PlainView(views.NetworkOfferingView)}
	p := c.Params
	return l.Run(c, c.State.NetworkOfferings, func(o *model.NetworkOffering) bool {
		return kernel.OptEq(p.Get("guestiptype"), o.GuestType) && kernel.OptEq(p.Get("state"), o.State) &&
			kernel.OptEq(p.Get("availability"), o.Availability) && kernel.OptEq(p.Get("traffictype"), "Guest") &&
			(!p.Has("specifyvlan") || p.Bool("specifyvlan", false) == o.SpecifyVLAN) &&
			(!p.Has("forvpc") || p.Bool("forvpc", false) == o.ForVPC) &&
			(!p.Has("isdefault") || !p.Bool("isdefault", false)) &&
			(!p.Has("sourcenatsupported") || p.Bool("sourcenatsupported", false) == o.Has("SourceNat")) &&
			hasAll(o, p.List("supportedservices"))
	})
}

func hasAll(o *model.NetworkOffering, services []string) bool {
	for _, s := range services {
		if !o.Has(canonical(views.NetworkServices, s)) {
			return false
		}
	}
	return true
}
