package cloudstack

import (
	"net/http"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
)

// API is the seam the CPI methods depend on: everything they ask of
// CloudStack, in the CPI's terms, composed of one small interface per
// resource so that a part of the CPI (or its test) can ask for just the
// ones it uses. *Client implements them against a real management server;
// cloudstackmock has a generated mock of API.
type API interface {
	VMs
	Volumes
	Snapshots
	Templates
	Addresses
	LoadBalancers
	Catalog
	AffinityGroups
	Tags
	ISOs
}

var _ API = (*Client)(nil)

// VMFinder finds the VM a CID names: what a part that acts on something
// else (a disk going onto a VM) asks of VMs.
type VMFinder interface {
	// FindVM looks a VM up by UUID, or by exact name for the name-style
	// CIDs of earlier CloudStack CPIs. Absent is (nil, nil).
	FindVM(ref string) (*VM, error)
}

// VMs is what the CPI asks of CloudStack's virtual machines.
type VMs interface {
	VMFinder
	// VMWithIP finds the VM (Destroyed ones included) whose NIC on the
	// network has the address; none is (nil, nil).
	VMWithIP(networkID, ip string) (*VM, error)
	// IncompleteVMs lists the VMs whose create_vm by this director never
	// finished (their display name still carries its Mark).
	IncompleteVMs(director string) ([]*VM, error)
	// AgentVMs lists this director's VMs for an agent_id: tagged with it,
	// or marked incomplete by a create_vm for it.
	AgentVMs(director, agent string) ([]*VM, error)
	// SettledVM finds the VM by id once no job works on it (or the
	// deadline has passed); gone is (nil, nil).
	SettledVM(id string, deadline time.Time) (*VM, error)
	// VMVolumes lists a VM's volumes.
	VMVolumes(vmID string) ([]Volume, error)

	// DeployVM deploys and waits, with the spec's tags sent beside the
	// deploy's job; the VM id comes back even when the job or the tags
	// failed, for cleanup.
	DeployVM(s DeploySpec) (string, *VM, error)
	// DestroyVM destroys a VM with the listed data volumes.
	DestroyVM(id string, expunge bool, volumeIDs []string) error
	// ExpungeVM expunges a Destroyed VM.
	ExpungeVM(id string) error
	// RebootVM reboots a running VM or starts a stopped one.
	RebootVM(vm *VM) error
	// StartVM starts a Stopped VM (one deployed with DeploySpec.Stopped).
	StartVM(id string) error
	// SetDisplayName renames a VM in CloudStack's UI.
	SetDisplayName(id, name string) error
}

// VolumeFinder finds the volume a disk CID names: what a part that acts
// on something else (a snapshot of a disk) asks of volumes.
type VolumeFinder interface {
	// FindVolume looks a volume up by UUID or exact name; absent is nil.
	FindVolume(ref string) (*Volume, error)
}

// VolumeLeftovers finds and deletes the volumes create_disk calls that
// could not finish left: all that their sweep asks of volumes.
type VolumeLeftovers interface {
	// VolumesNamedLike lists the data volumes whose name contains s.
	VolumesNamedLike(s string) ([]Volume, error)
	// SettledVolume finds the volume of that exact name once no job works
	// on it or the deadline has passed; absent is nil.
	SettledVolume(name string, deadline time.Time) (*Volume, error)
	// DeleteVolume deletes a detached volume.
	DeleteVolume(id string) error
}

// Volumes is what the CPI asks of CloudStack's data volumes.
type Volumes interface {
	VolumeFinder
	VolumeLeftovers
	// CreateVolume creates a data volume with tags, whose job runs beside
	// the create's; a failure to tag it is a MarkError (the volume exists).
	CreateVolume(name, zoneID, offeringID string, sizeGB int, tags map[string]string) (*Volume, error)
	// AttachVolume attaches a volume; the answer carries its device id.
	AttachVolume(id, vmID string) (*Volume, error)
	// DetachVolume detaches a volume.
	DetachVolume(id string) error
	// ResizeVolume grows a volume, optionally onto another offering.
	ResizeVolume(id string, sizeGB int, offeringID string) error
	// ChangeVolumeOffering moves a volume to another disk offering in place,
	// at sizeGB for a customized one; the answer is the volume after.
	ChangeVolumeOffering(id, offeringID string, sizeGB int) (*Volume, error)
}

// SnapshotLeftovers finds and deletes the snapshots snapshot_disk calls
// that could not finish left: all that their sweep asks of snapshots.
type SnapshotLeftovers interface {
	// VolumeSnapshots lists a volume's snapshots, with their tags.
	VolumeSnapshots(volumeID string) ([]*Snapshot, error)
	// SettledSnapshot finds the volume's snapshot of that exact name once no
	// job works on it or the deadline has passed; absent is nil.
	SettledSnapshot(volumeID, name string, deadline time.Time) (*Snapshot, error)
	// DeleteSnapshot deletes a snapshot.
	DeleteSnapshot(id string) error
}

// Snapshots is what the CPI asks of CloudStack's volume snapshots.
type Snapshots interface {
	SnapshotLeftovers
	// CreateSnapshot snapshots a volume under a unique name.
	CreateSnapshot(volumeID, name string, tags map[string]string) (*Snapshot, error)
	// FindSnapshot returns a snapshot by id, or nil.
	FindSnapshot(id string) (*Snapshot, error)
}

// TemplateFinder finds a template by name: what create_vm asks of
// templates, for the earlier CPIs' stemcell CIDs.
type TemplateFinder interface {
	// FindTemplateByName finds a template by exact name in a zone.
	FindTemplateByName(name, zoneID string) (*Template, error)
}

// OwnedTemplates lists and deletes the account's own templates: all that
// the sweep of what interrupted create_stemcell calls left asks.
type OwnedTemplates interface {
	// OwnTemplates lists the account's own templates in every zone and
	// state, named exactly name unless name is "".
	OwnTemplates(name string) ([]Template, error)
	// DeleteTemplate deletes a template from every zone; forced deletes it
	// although VMs were deployed from it.
	DeleteTemplate(id string, forced bool) error
}

// Uploader is the HTTP client for POSTs to the secondary storage VM.
type Uploader interface {
	// UploadClient is an HTTP client for the secondary storage VM, with the
	// API's TLS and proxy settings and no overall timeout.
	UploadClient() *http.Client
}

// Templates is what the CPI asks of CloudStack's templates: a stemcell is
// one.
type Templates interface {
	TemplateFinder
	OwnedTemplates
	Uploader
	// GetUploadParams creates a template awaiting its bytes in the spec's
	// first zone.
	GetUploadParams(s TemplateSpec) (*UploadParams, error)
	// RegisterTemplate has CloudStack download url into the spec's zones.
	RegisterTemplate(s TemplateSpec, url string) (string, error)
	// Templates lists every zone's copy of a template; none is empty.
	Templates(id string) ([]Template, error)
	// WaitTemplate waits until a template is ready in every zone.
	WaitTemplate(id string, zoneIDs []string, timeout time.Duration, report func(Template)) error
	// CopyTemplate copies a template to more zones.
	CopyTemplate(id, fromZone string, toZones []string) error
	// SetTemplateDisplayText replaces a template's display text.
	SetTemplateDisplayText(id, text string) error
}

// OwnedISOs lists and deletes the account's own ISOs: all that delete_vm
// and the sweep of what interrupted create_vm calls left ask.
type OwnedISOs interface {
	// OwnISOs lists the account's own ISOs in every state, named exactly
	// name unless name is "".
	OwnISOs(name string) ([]ISO, error)
	// DetachISO detaches the VM's ISO; none is IsNoISOAttached.
	DetachISO(vmID string) error
	// DeleteISO deletes an ISO; one still attached to a VM CloudStack has
	// not expunged is IsISOInUse, one whose upload is pending IsISOBusy.
	DeleteISO(id string) error
}

// ISOs is what the CPI asks of CloudStack's ISOs: the per-VM config drive
// of OpenStack KVM stemcells.
type ISOs interface {
	OwnedISOs
	// ISOUploadParams creates an ISO awaiting its bytes.
	ISOUploadParams(s ISOSpec) (*UploadParams, error)
	// RegisterISO has CloudStack download the ISO from url.
	RegisterISO(s ISOSpec, url string) (string, error)
	// FindISO finds an own ISO by id, ready or not; absent is (nil, nil).
	FindISO(id string) (*ISO, error)
	// WaitISO waits until the ISO is ready.
	WaitISO(id string, timeout time.Duration) error
	// AttachISO attaches the ISO to a VM.
	AttachISO(id, vmID string) error
	// SetISODisplayText replaces an ISO's display text.
	SetISODisplayText(id, text string) error
}

// PublicIPFinder finds an allocated public address: what a part that puts
// something else on one (a load-balancer rule) asks of addresses.
type PublicIPFinder interface {
	// FindPublicIP returns an allocated public address, or nil.
	FindPublicIP(zoneID, ip string) (*PublicIP, error)
}

// Addresses is what the CPI asks of CloudStack's public IP addresses: a
// vip network's address, by static NAT.
type Addresses interface {
	PublicIPFinder
	// PublicIPByID returns an allocated public address by id, or nil.
	PublicIPByID(id string) (*PublicIP, error)
	// AcquirePublicIP associates a free address with a network (a tier's
	// with its VPC), tagged as the CPI's.
	AcquirePublicIP(network Network, ip string) (*PublicIP, error)
	// EnableStaticNAT points an address at a VM.
	EnableStaticNAT(ipID, vmID, networkID string) error
	// DisableStaticNAT undoes EnableStaticNAT.
	DisableStaticNAT(ipID string) error
	// ReleasePublicIP gives an address back.
	ReleasePublicIP(ipID string) error
}

// LoadBalancers is what the CPI asks of CloudStack's public load-balancer
// rules (the Go CPI's lbs): find one by name on an address, create it,
// put VMs behind it and take them away, and delete it.
type LoadBalancers interface {
	// LBRulesOn lists the rules on a public address.
	LBRulesOn(publicIPID string) ([]LBRule, error)
	// VMLBRules lists the rules a VM is behind.
	VMLBRules(vmID string) ([]LBRule, error)
	// LBRulesCreatedFor lists the rules this director's create_vm for the
	// agent created (their description carries the marks.LB).
	LBRulesCreatedFor(m marks.LB) ([]LBRule, error)
	// CreateLBRule creates a rule carrying its mark, waits, and tags it.
	CreateLBRule(s LBSpec) (*LBRule, error)
	// LBRuleVMs lists the ids of the VMs behind a rule (CloudStack leaves
	// out Destroyed, Expunging, Error and Unknown ones).
	LBRuleVMs(ruleID string) ([]string, error)
	// AssignToLBRule puts a VM behind a rule.
	AssignToLBRule(ruleID, vmID string) error
	// RemoveFromLBRule takes a VM from behind a rule.
	RemoveFromLBRule(ruleID, vmID string) error
	// DeleteLBRule deletes a rule, with the firewall rule CloudStack opened
	// for it.
	DeleteLBRule(ruleID string) error
}

// Catalog is what the CPI looks up and never changes: zones, compute and
// disk offerings, OS types and guest networks, one small interface each.
type Catalog interface {
	ZoneCatalog
	ComputeCatalog
	DiskCatalog
	NetworkCatalog
	OSTypeCatalog
}

// ZoneCatalog resolves zones.
type ZoneCatalog interface {
	// FindZones resolves zone names or ids exactly; a missing one is an error.
	FindZones(refs []string) ([]Zone, error)
	// ZoneHypervisors lists the hypervisors a zone's clusters run.
	ZoneHypervisors(zoneID string) ([]Hypervisor, error)
}

// ComputeCatalog lists and resolves compute (service) offerings.
type ComputeCatalog interface {
	// ServiceOfferings lists compute offerings.
	ServiceOfferings() ([]ServiceOffering, error)
	// FindServiceOffering resolves a compute offering by id or exact name.
	FindServiceOffering(ref string) (*ServiceOffering, error)
}

// DiskCatalog lists and resolves disk offerings.
type DiskCatalog interface {
	// DiskOfferings lists disk offerings.
	DiskOfferings() ([]DiskOffering, error)
	// CustomDiskOffering returns a disk offering that takes a size.
	CustomDiskOffering() (*DiskOffering, error)
	// FindDiskOffering resolves a disk offering by id or exact name.
	FindDiskOffering(ref string) (*DiskOffering, error)
}

// NetworkCatalog resolves guest networks.
type NetworkCatalog interface {
	// FindNetworks resolves a zone's networks by id or exact name.
	FindNetworks(zoneID string, refs []string) (map[string]Network, error)
}

// OSTypeCatalog resolves OS types.
type OSTypeCatalog interface {
	// FindOSType resolves an OS type description or id to its id.
	FindOSType(ref string) (string, error)
}

// AffinityGroups is what the CPI asks of CloudStack's affinity groups.
type AffinityGroups interface {
	// FindOrCreateAffinityGroup returns the named group's id, creating it.
	FindOrCreateAffinityGroup(name, kind string) (string, error)
}

// Tags is what the CPI asks of CloudStack's resource tags.
type Tags interface {
	// SetTags moves a resource from its current tags to the desired ones.
	SetTags(resourceType, id string, current, desired map[string]string) error
}
