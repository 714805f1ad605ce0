package network

import (
	"strconv"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// aclProtocols is NetworkACLServiceImpl.supportedProtocolsForAclRules,
// checked with String.contains as the Java does.
const aclProtocols = "tcp,udp,icmp,all"

// createNetworkACL is CreateNetworkACLCmd: create
// (NetworkACLServiceImpl.createNetworkACLItem) checks and persists the rule
// in state Add at once; the job (execute: applyNetworkACL) makes it
// Active. The command's getters give its defaults: protocol trimmed, "1"
// is icmp; the end port the start port; ICMP type and code -1 for icmp;
// cidrlist 0.0.0.0/0 and ::/0; traffic type Ingress.
func createNetworkACL(c *kernel.Call) (*kernel.AsyncJob, error) {
	SeedVPCDefaults(c.State, c.Engine.Now())
	l, err := aclListFor(c)
	if err != nil {
		return nil, err
	}
	item, err := newACLItem(c, l)
	if err != nil {
		return nil, err
	}
	item.ID, item.InternalID = c.State.NewID(model.KindNetworkACLItem)
	c.State.NetworkACLItems = append(c.State.NetworkACLItems, item)
	c.Changed()
	return &kernel.AsyncJob{InstanceType: "NetworkAclItem", InstanceID: item.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.user.network.CreateNetworkACLCmd",
		Run: func() (any, error) {
			item.State = model.RuleActive // NetworkACLManagerImpl.applyACLToNetwork: Add becomes Active
			c.Changed()
			return map[string]any{"networkacl": views.ACLItemView(c, item)}, nil
		}}, nil
}

// newACLItem is createNetworkACLItem's checks, in its order, and the row.
func newACLItem(c *kernel.Call, l *model.NetworkACLList) (*model.NetworkACLItem, *kernel.APIError) {
	p := c.Params
	traffic := canonical([]string{"Ingress", "Egress"}, model.Or(p.Get("traffictype"), "Ingress"))
	switch {
	case traffic == "":
		return nil, kernel.ParamError("Invalid traffic type %s", p.Get("traffictype"))
	case l == nil: // validateNetworkAcl
		return nil, kernel.ParamError("Unable to find specified ACL.")
	case isDefaultACL(l):
		return nil, kernel.ParamError("Default ACL cannot be modified")
	case l.VPCID == "" && c.Account.Type != 1:
		return nil, kernel.PermissionDenied("Only Root Admins can create rules for a global ACL.")
	}
	number, err := aclNumber(c, l)
	if err != nil {
		return nil, err
	}
	action := p.Get("action")
	if action != "" && !strings.EqualFold(action, "Allow") && !strings.EqualFold(action, "Deny") {
		return nil, kernel.ParamError("Invalid action [%s]. Permitted actions are Allow and Deny", action)
	}
	item := &model.NetworkACLItem{ACLID: l.ID, Number: number, Protocol: aclProtocol(p.Get("protocol")),
		StartPort: optInt(p, "startport"), EndPort: optInt(p, "endport"), ICMPType: optInt(p, "icmptype"),
		ICMPCode: optInt(p, "icmpcode"), CIDRs: p.List("cidrlist"), TrafficType: traffic, Action: "Allow",
		State: model.RuleAdd, Reason: p.Get("reason"), Display: p.Bool("fordisplay", true), Created: c.Engine.Now()}
	if strings.EqualFold(action, "Deny") {
		item.Action = "Deny"
	}
	if item.EndPort == nil {
		item.EndPort = item.StartPort
	}
	if strings.EqualFold(item.Protocol, protoICMP) { // getIcmpType, getIcmpCode: -1 for icmp
		item.ICMPType, item.ICMPCode = orMinusOne(item.ICMPType), orMinusOne(item.ICMPCode)
	}
	if len(item.CIDRs) == 0 {
		item.CIDRs = []string{allIPv4CIDRs, "::/0"}
	}
	return item, validateACLItem(item)
}

// aclNumber is validateAclRuleNumber, and the next number
// (getMaxNumberByACL + 1) when none is given.
func aclNumber(c *kernel.Call, l *model.NetworkACLList) (int, *kernel.APIError) {
	highest := 0
	for _, i := range c.State.NetworkACLItems {
		if i.ACLID == l.ID {
			highest = max(highest, i.Number)
		}
	}
	if !c.Params.Has("number") {
		return highest + 1, nil
	}
	n := int(c.Params.Int("number", 0))
	if n < 1 {
		return 0, kernel.ParamError("Invalid number [%d]. Number cannot be < 1", n)
	}
	for _, i := range c.State.NetworkACLItems {
		if i.ACLID == l.ID && i.Number == n {
			return 0, kernel.ParamError("ACL item with number %d already exists in ACL: %s", n, l.ID)
		}
	}
	return n, nil
}

// aclProtocol is CreateNetworkACLCmd.getProtocol.
func aclProtocol(s string) string {
	s = strings.TrimSpace(s)
	if s == "1" {
		return protoICMP
	}
	return s
}

// validateACLItem is NetworkACLServiceImpl.validateNetworkACLItem: the
// ports (validateSourceStartAndEndPorts), the CIDRs (validateSourceCidrList)
// and the protocol with its ICMP type and code (validateProtocol,
// validateIcmpTypeAndCode).
func validateACLItem(i *model.NetworkACLItem) *kernel.APIError {
	if i.StartPort != nil || i.EndPort != nil {
		switch {
		case i.StartPort == nil || !validPort(*i.StartPort):
			return kernel.ParamError("Start public port is an invalid value: %s", intString(i.StartPort))
		case !validPort(*i.EndPort):
			return kernel.ParamError("End public port is an invalid value: %d", *i.EndPort)
		case *i.StartPort > *i.EndPort:
			return kernel.ParamError("Start port can't be bigger than end port [startport=%d,endport=%d]", *i.StartPort, *i.EndPort)
		case strings.EqualFold(i.Protocol, "all"):
			return kernel.ParamError("start port and end port must be null if protocol = 'all'")
		}
	}
	for _, cidr := range i.CIDRs {
		if !validCIDR(cidr) {
			return kernel.ServerParamError("Source cidrs formatting error %s", cidr)
		}
	}
	return validateACLProtocol(i)
}

func validateACLProtocol(i *model.NetworkACLItem) *kernel.APIError {
	if i.Protocol == "" {
		return nil
	}
	if n, err := strconv.Atoi(i.Protocol); err == nil {
		if n < 0 || n > 255 {
			return kernel.ParamError("Invalid protocol number: %d", n)
		}
	} else if !strings.Contains(aclProtocols, strings.ToLower(i.Protocol)) {
		return kernel.ParamError("Invalid protocol [%s]. Expected one of: [%s]", i.Protocol, aclProtocols)
	}
	icmp := strings.EqualFold(i.Protocol, protoICMP)
	switch {
	case !icmp && (i.ICMPCode != nil || i.ICMPType != nil):
		return kernel.ParamError("Can specify icmpCode and icmpType for ICMP protocol only")
	case icmp && (i.StartPort != nil || i.EndPort != nil):
		return kernel.ParamError("Can't specify start/end port when protocol is ICMP")
	case i.ICMPType != nil && *i.ICMPType != -1 && (*i.ICMPType < 0 || *i.ICMPType > 255): // NetUtils.validateIcmpType
		return kernel.ParamError("Invalid icmp type [%d]. It should belong to [0-255] range", *i.ICMPType)
	case i.ICMPType != nil && i.ICMPCode != nil && *i.ICMPCode != -1 && (*i.ICMPCode < 0 || *i.ICMPCode > 16): // validateIcmpCode
		return kernel.ParamError("Invalid icmp code [%d]. It should belong to [0-16] range and can be defined when icmpType belongs to [0-40] range", *i.ICMPCode)
	}
	return nil
}

func intString(p *int) string {
	if p == nil {
		return "null"
	}
	return strconv.Itoa(*p)
}

// listNetworkACLs is NetworkACLServiceImpl.listNetworkACLItems: id,
// aclid, traffictype, protocol and action EQ; networkid lists the
// network's list (none: no rules); without aclid only the rules of the
// caller's VPCs' lists and the global ones; newest first.
func listNetworkACLs(c *kernel.Call) (any, error) {
	SeedVPCDefaults(c.State, c.Engine.Now())
	p := c.Params
	aclID := p.Get("aclid")
	if id := p.Get("networkid"); id != "" {
		n := c.State.Network(id)
		if n == nil || n.ACLID == "" {
			return kernel.ListBody("networkacl", 0, []map[string]any{}), nil
		}
		aclID = n.ACLID
	}
	l := kernel.Lister[*model.NetworkACLItem]{Key: "networkacl", ID: (*model.NetworkACLItem).UUID,
		Keyword: func(*model.NetworkACLItem) []string { return nil }, View: views.ACLItemView}
	var newestFirst []*model.NetworkACLItem
	for i := len(c.State.NetworkACLItems) - 1; i >= 0; i-- {
		newestFirst = append(newestFirst, c.State.NetworkACLItems[i])
	}
	return l.Run(c, newestFirst, func(i *model.NetworkACLItem) bool {
		return kernel.OptEq(aclID, i.ACLID) && kernel.OptEq(p.Get("traffictype"), i.TrafficType) &&
			kernel.OptEq(p.Get("protocol"), i.Protocol) && kernel.OptEq(p.Get("action"), i.Action)
	})
}

// deleteNetworkACL is NetworkACLServiceImpl.revokeNetworkACLItem in the
// job: a rule of a default list cannot be deleted; the rule is revoked,
// applied, and gone.
func deleteNetworkACL(c *kernel.Call) (*kernel.AsyncJob, error) {
	item, ok := model.ByID(c.State.NetworkACLItems, c.Params.Get("id"))
	job := &kernel.AsyncJob{InstanceType: "NetworkAclItem", CmdClass: "org.apache.cloudstack.api.command.user.network.DeleteNetworkACLCmd"}
	job.Run = func() (any, error) {
		if !ok {
			return kernel.Success(), nil // a missing rule: revokeNetworkACLItem's findById is null (departure: the Java then fails on it)
		}
		if l, _ := model.ByID(c.State.NetworkACLLists, item.ACLID); l != nil && isDefaultACL(l) {
			return nil, kernel.ParamError("ACL Items in default ACL cannot be deleted")
		}
		items := c.State.NetworkACLItems[:0]
		for _, other := range c.State.NetworkACLItems {
			if other != item {
				items = append(items, other)
			}
		}
		c.State.NetworkACLItems = items
		c.Changed()
		return kernel.Success(), nil
	}
	return job, nil
}
