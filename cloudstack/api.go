package cloudstack

import (
	"net/http"
	"time"
)

// API is the seam the CPI methods depend on: everything they ask of
// CloudStack, in the CPI's terms. *Client implements it against a real
// management server; unit tests use a fake.
type API interface {
	LoadBalancers

	// Endpoint is the API URL without credentials, for messages.
	Endpoint() string

	// UploadClient is an HTTP client for the secondary storage VM, with the
	// API's TLS and proxy settings and no overall timeout.
	UploadClient() *http.Client

	// FindVM looks a VM up by UUID, or by exact name for the name-style
	// CIDs of earlier CloudStack CPIs. Absent is (nil, nil).
	FindVM(ref string) (*VM, error)
	// VMWithIP finds the VM (Destroyed ones included) whose NIC on the
	// network has the address; none is (nil, nil).
	VMWithIP(networkID, ip string) (*VM, error)
	// IncompleteVMs lists the VMs whose create_vm by this director never
	// finished (their display name still carries its Mark).
	IncompleteVMs(director string) ([]*VM, error)

	// DeployVM deploys and waits; the VM id comes back even when the job
	// failed, for cleanup.
	DeployVM(s DeploySpec) (string, *VM, error)
	// DestroyVM destroys a VM with the listed data volumes.
	DestroyVM(id string, expunge bool, volumeIDs []string) error
	// ExpungeVM expunges a Destroyed VM.
	ExpungeVM(id string) error
	// RebootVM reboots a running VM or starts a stopped one.
	RebootVM(vm *VM) error
	// SetDisplayName renames a VM in CloudStack's UI.
	SetDisplayName(id, name string) error
	// VMVolumes lists a VM's volumes.
	VMVolumes(vmID string) ([]Volume, error)
	// SetTags moves a resource from its current tags to the desired ones.
	SetTags(resourceType, id string, current, desired map[string]string) error

	// FindVolume looks a volume up by UUID or exact name; absent is nil.
	FindVolume(ref string) (*Volume, error)
	// VolumesNamedLike lists the data volumes whose name contains s.
	VolumesNamedLike(s string) ([]Volume, error)
	// CreateVolume creates a data volume.
	CreateVolume(name, zoneID, offeringID string, sizeGB int) (*Volume, error)
	// AttachVolume attaches a volume; the answer carries its device id.
	AttachVolume(id, vmID string) (*Volume, error)
	// DetachVolume detaches a volume.
	DetachVolume(id string) error
	// DeleteVolume deletes a detached volume.
	DeleteVolume(id string) error
	// ResizeVolume grows a volume, optionally onto another offering.
	ResizeVolume(id string, sizeGB int, offeringID string) error
	// CreateSnapshot snapshots a volume under a unique name.
	CreateSnapshot(volumeID, name string, tags map[string]string) (*Snapshot, error)
	// SettledVM finds the VM by id once no job works on it (or the
	// deadline has passed); gone is (nil, nil).
	SettledVM(id string, deadline time.Time) (*VM, error)
	// SettledVolume finds the volume of that exact name once no job works
	// on it or the deadline has passed; absent is nil.
	SettledVolume(name string, deadline time.Time) (*Volume, error)
	// VolumeSnapshots lists a volume's snapshots, with their tags.
	VolumeSnapshots(volumeID string) ([]*Snapshot, error)
	// SettledSnapshot finds the volume's snapshot of that exact name once no
	// job works on it or the deadline has passed; absent is nil.
	SettledSnapshot(volumeID, name string, deadline time.Time) (*Snapshot, error)
	// FindSnapshot returns a snapshot by id, or nil.
	FindSnapshot(id string) (*Snapshot, error)
	// DeleteSnapshot deletes a snapshot.
	DeleteSnapshot(id string) error

	// ServiceOfferings lists compute offerings.
	ServiceOfferings() ([]ServiceOffering, error)
	// FindServiceOffering resolves a compute offering by id or exact name.
	FindServiceOffering(ref string) (*ServiceOffering, error)
	// DiskOfferings lists disk offerings.
	DiskOfferings() ([]DiskOffering, error)
	// CustomDiskOffering returns a disk offering that takes a size.
	CustomDiskOffering() (*DiskOffering, error)
	// FindDiskOffering resolves a disk offering by id or exact name.
	FindDiskOffering(ref string) (*DiskOffering, error)
	// FindNetworks resolves a zone's networks by id or exact name.
	FindNetworks(zoneID string, refs []string) (map[string]Network, error)
	// FindOrCreateAffinityGroup returns the named group's id, creating it.
	FindOrCreateAffinityGroup(name, kind string) (string, error)

	// FindPublicIP returns an allocated public address, or nil.
	FindPublicIP(zoneID, ip string) (*PublicIP, error)
	// PublicIPByID returns an allocated public address by id, or nil.
	PublicIPByID(id string) (*PublicIP, error)
	// AcquirePublicIP associates a free address, tagged as the CPI's.
	AcquirePublicIP(networkID, ip string) (*PublicIP, error)
	// EnableStaticNAT points an address at a VM.
	EnableStaticNAT(ipID, vmID, networkID string) error
	// DisableStaticNAT undoes EnableStaticNAT.
	DisableStaticNAT(ipID string) error
	// ReleasePublicIP gives an address back.
	ReleasePublicIP(ipID string) error

	// FindZones resolves zone names or ids exactly; a missing one is an error.
	FindZones(refs []string) ([]Zone, error)
	// FindOSType resolves an OS type description or id to its id.
	FindOSType(ref string) (string, error)

	// GetUploadParams creates a template awaiting its bytes in the spec's
	// first zone.
	GetUploadParams(s TemplateSpec) (*UploadParams, error)
	// RegisterTemplate has CloudStack download url into the spec's zones.
	RegisterTemplate(s TemplateSpec, url string) (string, error)
	// Templates lists every zone's copy of a template; none is empty.
	Templates(id string) ([]Template, error)
	// FindTemplateByName finds a template by exact name in a zone.
	FindTemplateByName(name, zoneID string) (*Template, error)
	// WaitTemplate waits until a template is ready in every zone.
	WaitTemplate(id string, zoneIDs []string, timeout time.Duration, report func(Template)) error
	// CopyTemplate copies a template to more zones.
	CopyTemplate(id, fromZone string, toZones []string) error
	// DeleteTemplate deletes a template from every zone; forced deletes it
	// although VMs were deployed from it.
	DeleteTemplate(id string, forced bool) error
	// OwnTemplates lists the account's own templates in every zone and
	// state, named exactly name unless name is "".
	OwnTemplates(name string) ([]Template, error)
	// SetTemplateDisplayText replaces a template's display text.
	SetTemplateDisplayText(id, text string) error
}

var _ API = (*Client)(nil)
