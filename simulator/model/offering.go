package model

import (
	"time"
)

// ServiceOffering is a compute offering (ServiceOfferingVO). CPUNumber,
// CPUSpeed and Memory are nil where the offering leaves them to
// deployVirtualMachine's details: all three on an unconstrained customized
// offering, CPU and memory on a custom constrained one, whose limits are in
// Details (ConfigurationManagerImpl.createServiceOffering). HostTags and
// StorageTags are nil when not given; CloudStack answers a given one even
// when it is empty (Gson leaves out only nulls).
type ServiceOffering struct {
	ID          string `json:"id"`
	InternalID  int64  `json:"internalid"`
	Name        string `json:"name"`
	DisplayText string `json:"displaytext"`
	CPUNumber   *int   `json:"cpunumber,omitempty"`
	CPUSpeed    *int   `json:"cpuspeed,omitempty"` // MHz
	Memory      *int   `json:"memory,omitempty"`   // MiB
	// Details are the service_offering_details rows shown to every caller
	// (mincpunumber, maxcpunumber, minmemory, maxmemory and the admin's own).
	Details          map[string]string `json:"details,omitempty"`
	ProvisioningType string            `json:"provisioningtype,omitempty"`
	LocalStorage     bool              `json:"localstorage,omitempty"`
	OfferHA          bool              `json:"offerha,omitempty"`
	LimitCPUUse      bool              `json:"limitcpuuse,omitempty"`
	Volatile         bool              `json:"isvolatile,omitempty"`
	HostTags         *string           `json:"hosttags,omitempty"`
	StorageTags      *string           `json:"storagetags,omitempty"`
	NetworkRate      *int              `json:"networkrate,omitempty"`
	NoDynamicScaling bool              `json:"nodynamicscaling,omitempty"`
	DiskStrictness   bool              `json:"diskofferingstrictness,omitempty"`
	EncryptRoot      bool              `json:"encryptroot,omitempty"`
	RootDiskSizeGB   int64             `json:"rootdisksize,omitempty"`
	CacheMode        string            `json:"cachemode,omitempty"`
	Inactive         bool              `json:"inactive,omitempty"`
	Created          time.Time         `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (o *ServiceOffering) UUID() string { return o.ID }

// Dynamic is ServiceOfferingVO.isDynamic: any of CPU, speed or memory left
// to the deployment.
func (o *ServiceOffering) Dynamic() bool {
	return o.CPUNumber == nil || o.CPUSpeed == nil || o.Memory == nil
}

// DiskOffering is a data disk offering; DiskSize is in GiB, 0 for customized
// offerings.
type DiskOffering struct {
	ID               string            `json:"id"`
	InternalID       int64             `json:"internalid"`
	Name             string            `json:"name"`
	DisplayText      string            `json:"displaytext"`
	DiskSize         int64             `json:"disksize"`
	Customized       bool              `json:"iscustomized"`
	ProvisioningType string            `json:"provisioningtype,omitempty"`
	LocalStorage     bool              `json:"localstorage,omitempty"`
	Tags             *string           `json:"tags,omitempty"`   // nil when not given
	Hidden           bool              `json:"hidden,omitempty"` // displayoffering=false
	CustomizedIOPS   *bool             `json:"customizediops,omitempty"`
	MinIOPS          *int64            `json:"miniops,omitempty"`
	MaxIOPS          *int64            `json:"maxiops,omitempty"`
	SizeStrictness   bool              `json:"disksizestrictness,omitempty"`
	Encrypt          bool              `json:"encrypt,omitempty"`
	CacheMode        string            `json:"cachemode,omitempty"`
	Details          map[string]string `json:"details,omitempty"`
	Inactive         bool              `json:"inactive,omitempty"`
	Created          time.Time         `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (o *DiskOffering) UUID() string { return o.ID }

// Limit reads one of a constrained offering's min/max details
// (NumbersUtil.parseInt with the caller's default).
func (o *ServiceOffering) Limit(key string, def int) int {
	return ParseIntOr(o.Details[key], def)
}
