package network

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// staticNATCommands are the commands of staticnat.go (registerCommands).
func staticNATCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "enableStaticNat", Sync: enableStaticNat},
		{Name: "disableStaticNat", Async: disableStaticNat},
	}
}

// enableStaticNat is synchronous in CloudStack. Its checks follow
// RulesManagerImpl.enableStaticNat (the network must provide StaticNat, the
// address be usable for it: checkIpForService) and isIpReadyForStaticNat;
// conflicts with another VM are 537.
func enableStaticNat(c *kernel.Call) (any, error) {
	ip, vm, nic, err := staticNatTarget(c)
	if err != nil {
		return nil, err
	}
	switch vm.State {
	case model.VMDestroyed, model.VMExpunging, model.VMError:
		return nil, kernel.ParamError("Invalid user vm: %d", vm.InternalID)
	}
	dstIP := nic.IPAddress
	if guest := c.Params.Get("vmguestip"); guest != "" && guest != dstIP {
		return nil, kernel.ParamError("VM ip %s address not belongs to the vm", guest)
	}
	if err := ipReadyForStaticNat(c.State, ip, vm, dstIP); err != nil {
		return nil, err
	}
	ip.NetworkID = model.FirstNonEmpty(ip.NetworkID, c.Params.Get("networkid"))
	ip.StaticNAT, ip.VMID, ip.VMIP = true, vm.ID, dstIP
	c.Changed()
	return kernel.Success(), nil
}

// staticNatTarget is the address, the VM and its NIC on the address's
// network, checked as enableStaticNat checks them before the VM's state.
// An address of a VPC no tier has yet is checked for the tier named
// (assignToVpcNtwk) and associated with it once static NAT is enabled
// (associateIPToGuestNetwork; enableStaticNat unassigns it on failure).
func staticNatTarget(c *kernel.Call) (*model.PublicIP, *model.VirtualMachine, *model.NIC, error) {
	p := c.Params
	ip, _ := model.ByID(c.State.PublicIPs, p.Get("ipaddressid"))
	vm, _ := model.ByID(c.State.VMs, p.Get("virtualmachineid"))
	if ip == nil || ip.State == model.IPFree {
		return nil, nil, nil, kernel.ParamError("Unable to find ip address by id %s", p.Get("ipaddressid"))
	}
	networkID := model.FirstNonEmpty(ip.NetworkID, p.Get("networkid")) // EnableStaticNatCmd.getNetworkId
	if networkID == "" {
		return nil, nil, nil, kernel.ParamError("Unable to enable static NAT for the ipAddress id=%d as IP is not associated with any network and no networkId is passed in", ip.InternalID)
	}
	net := c.State.Network(networkID)
	if net == nil {
		return nil, nil, nil, kernel.ParamError("Unable to find network by id")
	}
	if vm == nil || vm.Removed != nil {
		return nil, nil, nil, kernel.ParamError("Can't enable static nat for the address id=%d, invalid virtual machine id specified (%s).", ip.InternalID, p.Get("virtualmachineid"))
	}
	nic := vm.NICOn(net.ID)
	if nic == nil {
		return nil, nil, nil, kernel.ParamError("Vm doesn't belong to the network with specified id")
	}
	if !Provides(c.State, net, "StaticNat") { // areServicesSupportedInNetwork(StaticNat)
		return nil, nil, nil, kernel.ParamError("Unable to create static nat rule; StaticNat service is not supported in network with specified id")
	}
	if err := staticNATNetwork(c.State, ip, net); err != nil {
		return nil, nil, nil, err
	}
	return ip, vm, nic, nil
}

// staticNATNetwork is enableStaticNat's check of the address's network:
// the one passed, or, for an address of the tier's VPC with none yet, the
// tier (checkIpForService with the tier's id).
func staticNATNetwork(st *model.State, ip *model.PublicIP, net *model.Network) *kernel.APIError {
	if ip.NetworkID == "" && net.VPCID != "" && strings.EqualFold(ip.VPCID, net.VPCID) {
		return checkIPForService(st, ip, "StaticNat", net.ID)
	}
	if ip.NetworkID == "" {
		return kernel.ParamError("Ip address %s is not assigned to the network %s", ipString(st, ip), Describe(net))
	}
	if !strings.EqualFold(ip.NetworkID, net.ID) {
		return kernel.ParamError("Invalid network Id=%d. IP is associated with a different network than passed network id", net.InternalID)
	}
	return checkIPForService(st, ip, "StaticNat", "")
}

// ipReadyForStaticNat is RulesManagerImpl.isIpReadyForStaticNat: not a
// source NAT address, no load balancer rules on it (there are no port
// forwarding rules), not static NAT to another VM, and the VM's address
// not already static NAT of another public address.
func ipReadyForStaticNat(st *model.State, ip *model.PublicIP, vm *model.VirtualMachine, dstIP string) error {
	if ip.SourceNAT {
		return kernel.ParamError("Can't enable static, ip address %s is a sourceNat ip address", ipString(st, ip))
	}
	if !ip.StaticNAT && len(rulesOnIP(st, ip.ID, model.PurposeLB)) > 0 {
		return ruleConflict("Failed to enable static nat for the ip address %s as it already has LoadBalancing rules assigned", ipString(st, ip))
	}
	if ip.StaticNAT && !strings.EqualFold(ip.VMID, vm.ID) {
		return &kernel.APIError{Code: kernel.CodeRuleConflict, CSCode: kernel.CsServerAPIException,
			Text: fmt.Sprintf("Failed to enable static for the ip address %s and vm id=%d as it's already assigned to antoher vm",
				ipString(st, ip), vm.InternalID)}
	}
	if old := model.StaticNATOf(st, vm.ID); old != nil && old.VMIP == dstIP {
		return kernel.ParamError("Failed to enable static nat on the  ip %s with Id %s as the vm %s with Id %s is already associated with another public ip %s with id %s",
			ip.Address, ip.ID, vm.InstanceName, vm.ID, old.Address, old.ID)
	}
	return nil
}

// unassignFromTier is VpcManagerImpl.unassignIPFromVpcNetwork: an address
// of a VPC with neither static NAT nor rules is no tier's any more.
func unassignFromTier(st *model.State, ip *model.PublicIP) {
	if ip.VPCID != "" && !ip.StaticNAT && len(rulesOnIP(st, ip.ID, "")) == 0 {
		ip.NetworkID = ""
	}
}

// disableStaticNat clears an address's static NAT in the job
// (RulesManagerImpl.disableStaticNat).
func disableStaticNat(c *kernel.Call) (*kernel.AsyncJob, error) {
	ip, found := model.ByID(c.State.PublicIPs, c.Params.Get("ipaddressid"))
	if !found {
		return nil, kernel.ParamError("Unable to find ip address by id %s", c.Params.Get("ipaddressid"))
	}
	return &kernel.AsyncJob{InstanceType: "IpAddress", InstanceID: ip.ID,
		CmdClass: "org.apache.cloudstack.api.command.user.nat.DisableStaticNatCmd",
		Run: func() (any, error) {
			if !ip.StaticNAT {
				return nil, kernel.ParamError("Specified IP address id is not associated with any vm Id")
			}
			disableStaticNATRules(c, ip) // RulesManagerImpl.disableStaticNat revokes the address's rules first
			ip.StaticNAT, ip.VMID, ip.VMIP = false, "", ""
			unassignFromTier(c.State, ip)
			c.Changed()
			return kernel.Success(), nil
		}}, nil
}
