package vm

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/identity"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/network"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// vmDeployCommands are the commands of vmdeploy.go (registerCommands).
func vmDeployCommands() []kernel.Command {
	return []kernel.Command{{Name: "deployVirtualMachine", Async: deployVirtualMachine}}
}

// Owner is the taggable for UserVm: the account owning the resource a tag names.
func Owner(st *model.State, id string) (string, bool) {
	vm, ok := model.ByID(st.VMs, id)
	if !ok || vm.Removed != nil {
		return "", false
	}
	return vm.AccountID, true
}

// nicPlan is one NIC of a VM being deployed.
type nicPlan struct {
	net *model.Network
	ip  string // requested, then allocated
	mac string // requested; generated when empty
}

// deployVirtualMachine checks everything CloudStack checks in the command's
// create phase and allocates the VM, its NICs (addresses included) and
// volumes before answering, so those errors come back at once. The job
// then places and starts the VM; while it runs the VM is Starting.
func deployVirtualMachine(c *kernel.Call) (*kernel.AsyncJob, error) {
	d, err := planDeploy(c)
	if err != nil {
		return nil, err
	}
	if err := allocateGuestIPs(c, d.nics); err != nil {
		return nil, err
	}
	vm := createDeployedVM(c, d)
	c.Changed()
	return deployJob(c, vm, d.tmpl.passwordEnabled), nil
}

// deployPlan is what the create phase settled: every input checked, nothing
// allocated yet.
type deployPlan struct {
	owner           *model.Account // the caller's account, or the project's with projectid
	zone            *model.Zone
	offering        *model.ServiceOffering
	tmpl            deployTemplate
	nics            []*nicPlan
	sgIDs, groupIDs []string
	keyNames        []string
	details         map[string]string
	cpu, speed, mem int
	rootBytes       int64
	dataOffering    *model.DiskOffering
	dataBytes       int64
	userData, name  string
}

// planDeploy runs the create phase's checks in CloudStack's order, so the
// first failing one is the error the caller sees.
func planDeploy(c *kernel.Call) (*deployPlan, error) {
	// DeployVMCmd.create: getEntityOwnerId is AccountManagerImpl.finalizeOwner.
	owner, err := c.Owner()
	if err != nil {
		return nil, err
	}
	d, err := deploySource(c)
	if err != nil {
		return nil, err
	}
	d.owner = owner
	if d.nics, err = deployNetworks(c, d.zone, owner); err != nil {
		return nil, err
	}
	if d.sgIDs, err = deploySecurityGroups(c, d.zone); err != nil {
		return nil, err
	}
	if d.keyNames, err = deployKeyPairs(c, owner); err != nil {
		return nil, err
	}
	if d.groupIDs, err = deployAffinityGroups(c, owner); err != nil {
		return nil, err
	}
	if d.details, err = deployBoot(c.Params, c.Params.Get("name"), deployDetails(c.Params)); err != nil {
		return nil, err
	}
	if d.cpu, d.speed, d.mem, err = computeOf(d.offering, d.details); err != nil {
		return nil, err
	}
	if d.rootBytes, err = rootDiskBytes(d.tmpl, d.details); err != nil {
		return nil, err
	}
	if d.dataOffering, d.dataBytes, err = deployDataDisk(c); err != nil {
		return nil, err
	}
	if d.userData, err = ValidateUserData(c.State, c.Params.Get("userdata")); err != nil {
		return nil, err
	}
	if err := checkUserDataService(c, d.nics[0].net, d.userData, d.keyNames, d.tmpl.passwordEnabled); err != nil {
		return nil, err
	}
	d.name, err = deployHostName(c, d.nics)
	return d, err
}

// deploySource is the zone, the service offering and the template the VM
// is deployed from.
func deploySource(c *kernel.Call) (*deployPlan, error) {
	p := c.Params
	zone := c.State.Zone(p.Get("zoneid"))
	offering, _ := model.ByID(c.State.ServiceOfferings, p.Get("serviceofferingid"))
	if zone == nil || offering == nil {
		return nil, kernel.ParamError("Unable to find zone or service offering")
	}
	if p.Get("volumeid") != "" || p.Get("snapshotid") != "" {
		return nil, &kernel.APIError{Code: kernel.CodeUnsupported, CSCode: kernel.CsUnavailableCmd,
			Text: "Deploying from a volume or snapshot is not implemented by the CloudStack simulator"}
	}
	if p.Get("templateid") == "" {
		return nil, kernel.ServerParamError("Unable to execute API command deployvirtualmachine due to missing parameter templateid")
	}
	tmpl, err := templateForDeploy(c, zone.ID, p.Get("templateid"))
	if err != nil {
		return nil, err
	}
	return &deployPlan{zone: zone, offering: offering, tmpl: tmpl}, nil
}

// deployKeyPairs is BaseDeployVMCmd.getSSHKeyPairNames (keypairs, then
// keypair): every name must be one of the owner's key pairs, and only once.
func deployKeyPairs(c *kernel.Call, owner *model.Account) ([]string, error) {
	keyNames := c.Params.List("keypairs")
	if k := c.Params.Get("keypair"); k != "" {
		keyNames = append(keyNames, k)
	}
	for _, name := range keyNames {
		if identity.KeyPair(c.State, owner.ID, name) == nil || model.CountFold(keyNames, name) > 1 {
			return nil, kernel.ParamError("Not all specified keypairs exist")
		}
	}
	return keyNames, nil
}

// deployHostName checks a given name: a valid host name no VM on the same
// networks holds. "" when none was given.
func deployHostName(c *kernel.Call, nics []*nicPlan) (string, error) {
	name := c.Params.Get("name")
	if !c.Params.Has("name") {
		return name, nil
	}
	if !verifyHostName(name) {
		return "", hostNameError()
	}
	if n := hostNameTaken(c.State, name, nics, ""); n != nil {
		return "", duplicateHostName(name, n)
	}
	return name, nil
}

// createDeployedVM adds the VM row, its NICs and its volumes: Starting when
// the job will start it, Stopped otherwise.
func createDeployedVM(c *kernel.Call, d *deployPlan) *model.VirtualMachine {
	p := c.Params
	now := c.Engine.Now()
	id, internal := c.State.NewID(model.KindVM)
	name := d.name
	if name == "" {
		name = model.InstanceNameSuffix + "-" + id // generateHostName: instance.name + "-" + uuid
	}
	vm := &model.VirtualMachine{ID: id, InternalID: internal, Name: name, DisplayName: model.FirstNonEmpty(p.Get("displayname"), name),
		InstanceName: fmt.Sprintf("i-%d-%d-%s", d.owner.InternalID, internal, model.InstanceNameSuffix), State: model.VMStopped,
		ZoneID: d.zone.ID, TemplateID: strings.ToLower(p.Get("templateid")), OSTypeID: d.tmpl.osTypeID,
		ServiceOfferingID: d.offering.ID, AccountID: d.owner.ID, UserID: c.User.ID, Hypervisor: d.tmpl.hypervisor,
		CPUNumber: d.cpu, CPUSpeed: d.speed, Memory: d.mem, PasswordEnabled: d.tmpl.passwordEnabled, KeyPairs: d.keyNames,
		SSHPublicKeys: identity.PublicKeysOf(c.State, d.owner.ID, d.keyNames), UserData: d.userData, Group: p.Get("group"),
		Details: d.details, AffinityGroupIDs: d.groupIDs, SecurityGroupIDs: d.sgIDs, Created: now}
	if p.Bool("startvm", true) {
		vm.State = model.VMStarting
	}
	for i, plan := range d.nics {
		nicID, _ := c.State.NewID(model.KindNIC)
		vm.NICs = append(vm.NICs, &model.NIC{ID: nicID, NetworkID: plan.net.ID, IPAddress: plan.ip,
			MACAddress: model.FirstNonEmpty(plan.mac, nextMAC(c.State)), DeviceID: i, IsDefault: i == 0})
	}
	c.State.VMs = append(c.State.VMs, vm)
	root := c.State.NewVolume(vm, model.VolumeRoot, 0, d.rootBytes, now)
	root.ServiceOfferingID, root.TemplateID = d.offering.ID, vm.TemplateID
	if d.dataOffering != nil {
		c.State.NewVolume(vm, model.VolumeDataDisk, 1, d.dataBytes, now).DiskOfferingID = d.dataOffering.ID
	}
	return vm
}

// deployJob places and starts the VM (unless startvm=false) and answers
// with it, the generated password included once.
func deployJob(c *kernel.Call, vm *model.VirtualMachine, passwordEnabled bool) *kernel.AsyncJob {
	password := ""
	if passwordEnabled {
		password = randomPassword(model.VMPasswordLength)
	}
	startVM, hostID := c.Params.Bool("startvm", true), c.Params.Get("hostid")
	return &kernel.AsyncJob{InstanceType: "VirtualMachine", InstanceID: vm.ID, Created: true,
		CmdClass: "org.apache.cloudstack.api.command.admin.vm.DeployVMCmdByAdmin",
		Run: func() (any, error) {
			if startVM {
				if err := checkDestinationHost(c.State, vm, hostID); err != nil {
					return nil, err
				}
				if err := startOn(c, vm, hostID); err != nil {
					return nil, err
				}
			}
			v := views.VMView(c, vm)
			if password != "" {
				v["password"] = password
			}
			return map[string]any{"virtualmachine": v}, nil
		},
		Fail: func(*kernel.APIError) { failDeploy(c, vm) },
	}
}

// failDeploy is updateVmStateForFailedVmCreation: the VM goes to Error and
// its volumes are destroyed. CloudStack releases the NICs (addresses and
// host name) when the expunge thread removes the VM; the simulator releases
// them at once.
func failDeploy(c *kernel.Call, vm *model.VirtualMachine) {
	vm.State, vm.HostID, vm.NICs, vm.UpdateTime = model.VMError, "", nil, c.Engine.Now()
	for _, v := range c.State.VolumesOf(vm.ID) {
		v.State = model.VolumeDestroy
	}
	c.Changed()
}

// hostNameLabel is the character set of NetUtils.verifyDomainNameLabel.
var hostNameLabel = regexp.MustCompile(`^[a-z0-9-]+$`)

// verifyHostName is NetUtils.verifyDomainNameLabel(name, true): 1 to 63
// letters (either case), digits and hyphens, not starting or ending with a
// hyphen, not starting with a digit.
func verifyHostName(name string) bool {
	return len(name) >= 1 && len(name) <= 63 && hostNameLabel.MatchString(strings.ToLower(name)) &&
		!strings.HasPrefix(name, "-") && !strings.HasSuffix(name, "-") && !(name[0] >= '0' && name[0] <= '9')
}

func hostNameError() *kernel.APIError {
	return kernel.ParamError(`Invalid name. Vm name can contain ASCII letters 'a' through 'z', the digits '0' through '9', ` +
		`and the hyphen ('-'), must be between 1 and 63 characters long, and can't start or end with "-" and can't start with digit`)
}

// hostNameTaken finds the first planned network where another VM that is not
// expunged (Destroyed ones included) has a NIC and the host name (compared
// exactly, as listDistinctHostNames' result is).
func hostNameTaken(st *model.State, name string, plans []*nicPlan, except string) *model.Network {
	for _, plan := range plans {
		for _, vm := range st.VMs {
			if vm.Removed == nil && vm.ID != except && vm.Name == name && vm.NICOn(plan.net.ID) != nil {
				return plan.net
			}
		}
	}
	return nil
}

func duplicateHostName(name string, n *model.Network) *kernel.APIError {
	return kernel.ParamError("The vm with hostName %s already exists in the network domain: %s; network=%s", name, n.NetworkDomain, n.Name)
}

// deploySecurityGroups resolves securitygroupids/securitygroupnames; only a
// zone with security groups (a basic zone here) takes them.
func deploySecurityGroups(c *kernel.Call, zone *model.Zone) ([]string, error) {
	p := c.Params
	ids, names := p.List("securitygroupids"), p.List("securitygroupnames")
	if len(ids) > 0 && len(names) > 0 {
		return nil, kernel.ParamError("securitygroupids parameter is mutually exclusive with securitygroupnames parameter")
	}
	if len(names) > 0 {
		network.EnsureDefaultSecurityGroup(c)
		for _, name := range names {
			g := network.SecurityGroupByName(c.State, c.Account.ID, name)
			if g == nil {
				return nil, kernel.ParamError("Unable to find group by name %s", name)
			}
			ids = append(ids, g.ID)
		}
	}
	if len(ids) > 0 && zone.NetworkType != "Basic" {
		return nil, kernel.ParamError("Can't create vm with security groups; security group feature is not enabled per zone")
	}
	for i := range ids {
		ids[i] = strings.ToLower(ids[i])
	}
	return ids, nil
}

// deployAffinityGroups resolves affinitygroupids/affinitygroupnames (names
// among the owner's groups).
func deployAffinityGroups(c *kernel.Call, owner *model.Account) ([]string, error) {
	p := c.Params
	ids, names := p.List("affinitygroupids"), p.List("affinitygroupnames")
	if len(ids) > 0 && len(names) > 0 {
		return nil, kernel.ParamError("affinitygroupids parameter is mutually exclusive with affinitygroupnames parameter")
	}
	var out []string
	for _, id := range ids {
		g, ok := model.ByID(c.State.AffinityGroups, id)
		if !ok {
			return nil, kernel.ParamError("Unable to find affinity group by id %s", id)
		}
		out = append(out, g.ID)
	}
	for _, name := range names {
		g := affinityGroupByName(c.State, owner.ID, name)
		if g == nil {
			return nil, kernel.ParamError("Unable to find affinity group by name %s", name)
		}
		out = append(out, g.ID)
	}
	return out, nil
}
