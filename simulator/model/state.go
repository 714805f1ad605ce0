// Package model is the simulator's database: every table's row type, the
// State holding all tables (saved as one JSON document), the ids CloudStack
// hands out, the lookups that only read tables, the named states of the
// Java enums, and the row changes more than one API family makes. It imports
// nothing of the simulator, so every other simulator package can import it.
package model

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// stateVersion is bumped when the state file's layout changes incompatibly.
// 2: zones are built through the admin API's tables (storage pools, network
// offerings, providers); a version 1 zone has no primary storage.
const stateVersion = 2

// State is everything CloudStack would keep in its database. It is saved as
// one JSON document; families add their tables as fields.
type State struct {
	Version int `json:"version"`

	// Counters hands out CloudStack's internal numeric ids per kind (they
	// show up in instance names such as i-2-17-VM).
	Counters map[string]int64 `json:"counters"`
	// Known records the kind of every UUID ever handed out, removed entities
	// included, because CloudStack resolves UUID parameters against removed
	// rows too.
	Known map[string]string `json:"known"`

	ManagementServerID string `json:"managementserverid"`
	RootAdminRoleID    string `json:"rootadminroleid"`
	// RoleIDs are the other default roles' UUIDs by role id (roles.go).
	RoleIDs map[string]string `json:"roleids,omitempty"`

	Domains  []*Domain  `json:"domains"`
	Accounts []*Account `json:"accounts"`
	Users    []*User    `json:"users"`

	Zones    []*Zone    `json:"zones"`
	Pods     []*Pod     `json:"pods"`
	Clusters []*Cluster `json:"clusters"`
	Hosts    []*Host    `json:"hosts"`

	StoragePools []*StoragePool `json:"storagepools"`
	ImageStores  []*ImageStore  `json:"imagestores"`

	PhysicalNetworks []*PhysicalNetwork        `json:"physicalnetworks"`
	TrafficTypes     []*TrafficType            `json:"traffictypes"`
	Providers        []*NetworkServiceProvider `json:"networkserviceproviders"`
	VRElements       []*VirtualRouterElement   `json:"virtualrouterelements"`
	NetworkOfferings []*NetworkOffering        `json:"networkofferings"`
	Networks         []*Network                `json:"networks"`
	VlanRanges       []*VlanRange              `json:"vlanranges"`

	ServiceOfferings []*ServiceOffering `json:"serviceofferings"`
	DiskOfferings    []*DiskOffering    `json:"diskofferings"`
	OSCategories     []*OSCategory      `json:"oscategories"`
	OSTypes          []*OSType          `json:"ostypes"`

	VMs  []*VirtualMachine `json:"virtualmachines"`
	Jobs []*Job            `json:"jobs"`

	// Settings are the global settings an operator changed (configurations.go);
	// a nil value is SQL NULL.
	Settings map[string]*string `json:"settings,omitempty"`

	Templates []*Template `json:"templates"`
	// UploadKey signs template upload parameters (CloudStack's SSVM PSK).
	UploadKey string `json:"uploadkey"`
	vmTables         // volumes, tags, key pairs, affinity/security groups, public IPs (vmTables below)
	vpcTables        // VPC offerings, VPCs, network ACL lists and their items (vpc.go)
	// The System-Public-Network offering and the zones' public networks (sysnetworks.go).
	systemNetworkTables

	// Firewall, static NAT and load balancer rules (rules.go).
	ruleTables
	// Projects and their members (project.go), the rows
	// ProjectManagerImpl.createProject and assignAccountToProject write.
	projectTables
}

// NewState is an empty state of the current version.
func NewState() *State {
	return &State{Version: stateVersion, Counters: map[string]int64{}, Known: map[string]string{}}
}

// NewID hands out a fresh UUID and internal id for an entity of kind.
func (st *State) NewID(kind string) (string, int64) {
	id := NewUUID()
	st.Known[id] = kind
	st.Counters[kind]++
	return id, st.Counters[kind]
}

// Exists reports whether id names an entity of kind, removed or not.
func (st *State) Exists(kind, id string) bool {
	return st.Known[id] == kind
}

// NewUUID returns a random (version 4) UUID.
func NewUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// LoadState reads a state file; a missing file yields (nil, nil).
func LoadState(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st := NewState()
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf("state file %s: %w", path, err)
	}
	if st.Version != stateVersion {
		return nil, fmt.Errorf("state file %s: version %d, want %d", path, st.Version, stateVersion)
	}
	return st, nil
}

// Save writes the state atomically: a temporary file in the same directory,
// fsynced, then renamed over the old one, so a crash leaves either the old or
// the new state and never half of one.
func (st *State) Save(path string) error {
	b, err := json.MarshalIndent(st, "", " ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // no-op once renamed
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// syncDir makes the rename durable; failures are ignored because some
// filesystems cannot fsync directories.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// ByID finds an entity by UUID in one of the state's tables.
func ByID[T interface{ UUID() string }](rows []T, id string) (T, bool) {
	for _, r := range rows {
		if strings.EqualFold(r.UUID(), id) {
			return r, true
		}
	}
	var zero T
	return zero, false
}

// Entity kinds, recorded with every UUID the simulator hands out so that a
// UUID parameter naming nothing is rejected the way CloudStack rejects it
// (ParamProcessWorker.translateUuidToInternalId over the parameter's
// entityType).
const (
	KindDomain          = "domain"
	KindAccount         = "account"
	KindUser            = "user"
	KindRole            = "role"
	KindZone            = "zone"
	KindPod             = "pod"
	KindCluster         = "cluster"
	KindHost            = "host"
	KindPhysicalNetwork = "physicalnetwork"
	KindNetwork         = "network"
	KindNetworkOffering = "networkoffering"
	KindVlanRange       = "vlaniprange"
	KindServiceOffering = "serviceoffering"
	KindDiskOffering    = "diskoffering"
	KindOSCategory      = "oscategory"
	KindOSType          = "ostype"
	KindVM              = "virtualmachine"
	KindTemplate        = "template"
	KindNIC             = "nic"
	KindJob             = "asyncjob"
	KindMgmtServer      = "managementserver"
	KindTrafficType     = "traffictype"
	KindProvider        = "networkserviceprovider"
	KindVRElement       = "virtualrouterelement"
	KindStoragePool     = "storagepool"
	KindImageStore      = "imagestore"
	KindSnapshot        = "snapshot"
)

// DefaultHypervisor is what the hosts of a new zone run unless told
// otherwise.
const DefaultHypervisor = "XenServer"

// Entity kinds of the VM family and of what a VM deploy touches.
const (
	KindVolume        = "volume"
	KindSSHKeyPair    = "sshkeypair"
	KindAffinityGroup = "affinitygroup"
	KindSecurityGroup = "securitygroup"
	KindPublicIP      = "ipaddress"
	KindResourceTag   = "resourcetag"
)

// vmTables are the state tables of the VM family (volumes, tags, SSH key
// pairs, affinity and security groups, public IP addresses). The state
// embeds them, so their JSON fields sit next to the other tables.
type vmTables struct {
	Volumes        []*Volume        `json:"volumes,omitempty"`
	ResourceTags   []*ResourceTag   `json:"resourcetags,omitempty"`
	SSHKeyPairs    []*SSHKeyPair    `json:"sshkeypairs,omitempty"`
	AffinityGroups []*AffinityGroup `json:"affinitygroups,omitempty"`
	SecurityGroups []*SecurityGroup `json:"securitygroups,omitempty"`
	PublicIPs      []*PublicIP      `json:"publicips,omitempty"`
	Snapshots      []*Snapshot      `json:"snapshots,omitempty"` // volume snapshots (snapshots.go)
}

// FirstZoneHypervisor is the hypervisor of the first zone's clusters.
func (st *State) FirstZoneHypervisor() string {
	if len(st.Clusters) > 0 {
		return st.Clusters[0].Hypervisor
	}
	return DefaultHypervisor
}
