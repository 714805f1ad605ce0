package model

import (
	"strings"
	"time"
)

// VirtualMachine is a guest VM. deployVirtualMachine adds rows to state.VMs
// and the lifecycle commands move State through CloudStack's values
// (Starting, Running, Stopping, Stopped, Destroyed, Expunging, Error). An
// expunged VM keeps its row with Removed set, because CloudStack still
// resolves its UUID. Its tags live in the ResourceTag table (tags.go).
type VirtualMachine struct {
	ID                string            `json:"id"`
	InternalID        int64             `json:"internalid"`
	Name              string            `json:"name"`
	DisplayName       string            `json:"displayname"`
	InstanceName      string            `json:"instancename"` // i-<account>-<vm>-VM
	State             string            `json:"state"`
	ZoneID            string            `json:"zoneid"`
	HostID            string            `json:"hostid,omitempty"`
	LastHostID        string            `json:"lasthostid,omitempty"`
	TemplateID        string            `json:"templateid,omitempty"`
	ISOID             string            `json:"isoid,omitempty"` // vm_instance.iso_id: the one ISO attached (4.22)
	OSTypeID          string            `json:"ostypeid,omitempty"`
	ServiceOfferingID string            `json:"serviceofferingid"`
	AccountID         string            `json:"accountid"`
	UserID            string            `json:"userid"`
	Hypervisor        string            `json:"hypervisor"`
	CPUNumber         int               `json:"cpunumber"`
	CPUSpeed          int               `json:"cpuspeed"` // MHz
	Memory            int               `json:"memory"`   // MiB
	PasswordEnabled   bool              `json:"passwordenabled"`
	Password          string            `json:"password,omitempty"`
	KeyPairs          []string          `json:"keypairs,omitempty"`
	SSHPublicKeys     string            `json:"sshpublickeys,omitempty"` // the key pairs' public keys at deploy, one per line
	UserData          string            `json:"userdata,omitempty"`      // base64, re-encoded with padding
	Group             string            `json:"group,omitempty"`
	HAEnable          bool              `json:"haenable"`
	Details           map[string]string `json:"details,omitempty"`
	NICs              []*NIC            `json:"nics"`
	AffinityGroupIDs  []string          `json:"affinitygroupids,omitempty"`
	SecurityGroupIDs  []string          `json:"securitygroupids,omitempty"`
	Created           time.Time         `json:"created"`
	// UpdateTime is vm_instance.update_time as far as the expunge thread
	// reads it: when the VM became Destroyed or Error.
	UpdateTime time.Time  `json:"updatetime,omitempty"`
	Removed    *time.Time `json:"removed,omitempty"`
	// Stats are the VM's vm_stats as StatsCollector.getVmStats gives them;
	// nil until the stats collector has seen the VM Running (vmstats.go).
	Stats *VMStats `json:"stats,omitempty"`
}

// VMStats is a VM's VmStatsEntry accumulated over the collections
// (StatsCollector.getVmStats with vm.stats.increment.metrics).
type VMStats struct {
	CPUUtilization  float64 `json:"cpuutilization"` // percent
	NetworkReadKBs  float64 `json:"networkreadkbs"`
	NetworkWriteKBs float64 `json:"networkwritekbs"`
	DiskReadKBs     float64 `json:"diskreadkbs"`
	DiskWriteKBs    float64 `json:"diskwritekbs"`
	DiskReadIOs     float64 `json:"diskreadios"`
	DiskWriteIOs    float64 `json:"diskwriteios"`
	MemoryKBs       float64 `json:"memorykbs"`
	IntFreeMemKBs   float64 `json:"intfreememorykbs"`
	TargetMemKBs    float64 `json:"targetmemorykbs"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (vm *VirtualMachine) UUID() string { return vm.ID }

// UsesHost reports whether the VM holds capacity on its host.
func (vm *VirtualMachine) UsesHost() bool {
	switch vm.State {
	case VMStarting, VMRunning, VMStopping, VMMigrating:
		return true
	}
	return false
}

// NIC is a VM's network interface.
type NIC struct {
	ID         string `json:"id"`
	NetworkID  string `json:"networkid"`
	IPAddress  string `json:"ipaddress"`
	MACAddress string `json:"macaddress"`
	DeviceID   int    `json:"deviceid"`
	IsDefault  bool   `json:"isdefault"`
}

// Tag is a key/value pair. Resource tags are kept in the ResourceTag table
// (tags.go); the simulator package's taggedWith answers the tags[i] filter
// of list commands.
type Tag struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// NICOn is the VM's NIC on a network; nil when it has none there.
func (vm *VirtualMachine) NICOn(networkID string) *NIC {
	for _, n := range vm.NICs {
		if strings.EqualFold(n.NetworkID, networkID) {
			return n
		}
	}
	return nil
}

// UserByID finds a user by UUID; nil when none.
func (st *State) UserByID(id string) *User { u, _ := ByID(st.Users, id); return u }

// DisplayNameOrHostName is VMInstanceVO.getDisplayNameOrHostName.
func (vm *VirtualMachine) DisplayNameOrHostName() string {
	if strings.TrimSpace(vm.DisplayName) != "" {
		return vm.DisplayName
	}
	return vm.Name
}

// Stop leaves the VM Stopped, remembering the host it ran on as its last.
func (vm *VirtualMachine) Stop() {
	if vm.HostID != "" {
		vm.LastHostID = vm.HostID
	}
	vm.HostID, vm.State = "", VMStopped
}

// OperationFailed is VirtualMachine.State.s_fsm's OperationFailed event,
// which AsyncJobManagerImpl.cleanupVirtualMachine sends a VM left in a
// transitional state by a job a management server restart cut short:
// Starting goes back to Stopped, Stopping and Migrating to Running,
// Expunging stays Expunging; a VM in any other state has no such
// transition and stays as it is. The VM keeps its host: cleanupVirtualMachine
// passes the VM's own host id to VirtualMachineManagerImpl.stateTransitTo,
// and VMInstanceDaoImpl.updateState writes that id back.
func (vm *VirtualMachine) OperationFailed() {
	switch vm.State {
	case VMStarting:
		vm.State = VMStopped
	case VMStopping, VMMigrating:
		vm.State = VMRunning
	}
}

// ZoneHypervisor is the hypervisor of a zone's hosts: CloudStack takes a
// zone's hypervisors from its clusters. The simulator's zones have one.
func (st *State) ZoneHypervisor(zoneID string) string {
	for _, cl := range st.Clusters {
		if cl.ZoneID == zoneID {
			return cl.Hypervisor
		}
	}
	return DefaultHypervisor
}

// AffinityGroup is an account's affinity group. Its members are the VMs
// whose AffinityGroupIDs name it.
type AffinityGroup struct {
	ID          string    `json:"id"`
	InternalID  int64     `json:"internalid"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Type        string    `json:"type"`
	AccountID   string    `json:"accountid"`
	Created     time.Time `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (g *AffinityGroup) UUID() string { return g.ID }

// Members are a group's VMs that are not expunged.
func Members(st *State, g *AffinityGroup) []*VirtualMachine {
	var out []*VirtualMachine
	for _, vm := range st.VMs {
		if vm.Removed == nil && ContainsFold(vm.AffinityGroupIDs, g.ID) {
			out = append(out, vm)
		}
	}
	return out
}
