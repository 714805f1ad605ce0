package model

import (
	"fmt"
	"strings"
	"time"
)

// Template is a template (vm_template) with one copy per zone
// (template_store_ref on the zone's image store). listTemplates shows one row
// per copy. A deleted template keeps its row with Removed set, because
// CloudStack still resolves its UUID.
type Template struct {
	ID                  string            `json:"id"`
	InternalID          int64             `json:"internalid"`
	Name                string            `json:"name"`
	DisplayText         string            `json:"displaytext"`
	Format              string            `json:"format"` // QCOW2, RAW, VHD, VHDX, OVA, ISO
	Hypervisor          string            `json:"hypervisor"`
	OSTypeID            string            `json:"ostypeid,omitempty"`
	AccountID           string            `json:"accountid,omitempty"` // empty: the system account
	URL                 string            `json:"url,omitempty"`
	Type                string            `json:"templatetype"` // USER, BUILTIN, ...
	State               string            `json:"state"`        // Active, Inactive, NotUploaded, UploadInProgress, UploadError, UploadAbandoned
	PostUpload          bool              `json:"postupload,omitempty"`
	Public              bool              `json:"ispublic"`
	Featured            bool              `json:"isfeatured"`
	Extractable         bool              `json:"isextractable"`
	Bootable            bool              `json:"bootable,omitempty"` // ISOs only (vm_template.bootable)
	PasswordEnabled     bool              `json:"passwordenabled"`
	SSHKeyEnabled       bool              `json:"sshkeyenabled"`
	DynamicallyScalable bool              `json:"isdynamicallyscalable"`
	RequiresHVM         bool              `json:"requireshvm"`
	CrossZones          bool              `json:"crosszones"`
	DeployAsIs          bool              `json:"deployasis,omitempty"`
	Bits                int               `json:"bits"`
	Checksum            string            `json:"checksum,omitempty"`
	Details             map[string]string `json:"details,omitempty"`
	Copies              []*TemplateCopy   `json:"copies"`
	Created             time.Time         `json:"created"`
	Removed             *time.Time        `json:"removed,omitempty"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (t *Template) UUID() string { return t.ID }

// TemplateCopy is a template's copy in one zone: what the zone's secondary
// storage VM reports about it.
type TemplateCopy struct {
	ZoneID        string     `json:"zoneid"`
	DownloadState string     `json:"downloadstate"` // NOT_DOWNLOADED, DOWNLOAD_IN_PROGRESS, DOWNLOADED, DOWNLOAD_ERROR, NOT_UPLOADED, ABANDONED
	Percent       int        `json:"downloadpercent"`
	ErrorString   *string    `json:"errorstring,omitempty"`  // nil is SQL NULL, which getTemplateStatus tells from ""
	Size          int64      `json:"size,omitempty"`         // virtual size
	PhysicalSize  int64      `json:"physicalsize,omitempty"` // bytes on the image store
	Created       time.Time  `json:"created"`
	Removed       *time.Time `json:"removed,omitempty"`

	// The SSVM's upload entity for a POSTed template, which the management
	// server learns of only when its upload monitor polls (upload_monitor.go):
	// its status (IN_PROGRESS, COMPLETED, ERROR; "" when the SSVM has none),
	// percentage and, once installed, the image's sizes.
	UploadState        string `json:"uploadstate,omitempty"`
	UploadPercent      int    `json:"uploadpercent,omitempty"`
	UploadSize         int64  `json:"uploadsize,omitempty"`
	UploadPhysicalSize int64  `json:"uploadphysicalsize,omitempty"`
}

// Download states (VMTemplateStorageResourceAssoc.Status).
const (
	DlNotDownloaded = "NOT_DOWNLOADED"
	DlInProgress    = "DOWNLOAD_IN_PROGRESS"
	DlDownloaded    = "DOWNLOADED"
	DlError         = "DOWNLOAD_ERROR"
	DlNotUploaded   = "NOT_UPLOADED"
	DlAbandoned     = "ABANDONED"
	dlBypassed      = "BYPASSED"
)

// Ready is TemplateJoinDaoImpl's isready: the template_store_ref state is
// Ready, which every path that sets DOWNLOADED sets with it
// (TemplateServiceImpl's create callback, ImageStoreUploadMonitorImpl's
// COMPLETED case), and no other path does.
func (cp *TemplateCopy) Ready() bool { return cp.DownloadState == DlDownloaded }

// Status is TemplateJoinDaoImpl.getTemplateStatus: its initial "Processing"
// is always overwritten. Outside the download states it is the error string
// when one is stored (even an empty one), else the template's state name.
func (cp *TemplateCopy) Status(t *Template) string {
	switch {
	case cp.DownloadState == DlDownloaded:
		return "Download Complete"
	case cp.DownloadState == DlInProgress && cp.Percent == 100:
		return "Installing Template"
	case cp.DownloadState == DlInProgress:
		return fmt.Sprintf("%d%% Downloaded", cp.Percent)
	case cp.DownloadState == dlBypassed:
		return "Bypassed Secondary Storage"
	case cp.ErrorString == nil:
		return t.State
	}
	return *cp.ErrorString
}

// CopyIn is the template's live copy in a zone, nil if none.
func (t *Template) CopyIn(zoneID string) *TemplateCopy {
	for _, cp := range t.Copies {
		if cp.Removed == nil && strings.EqualFold(cp.ZoneID, zoneID) {
			return cp
		}
	}
	return nil
}

// LiveCopies are the template's copies in zones that are not removed.
func (t *Template) LiveCopies() []*TemplateCopy {
	var out []*TemplateCopy
	for _, cp := range t.Copies {
		if cp.Removed == nil {
			out = append(out, cp)
		}
	}
	return out
}

// AddBuiltinCopy gives the builtin template its ready copy in a zone, as
// the zone's image store arriving makes it available there.
func (st *State) AddBuiltinCopy(t *Template, zoneID string, now time.Time) {
	if t.CopyIn(zoneID) == nil {
		t.Copies = append(t.Copies, &TemplateCopy{ZoneID: zoneID, DownloadState: DlDownloaded, Percent: 100,
			Size: 2 << 30, PhysicalSize: 2101252608, Created: now})
	}
}

// BuiltinTemplate is the BUILTIN template CloudStack installs with.
func (st *State) BuiltinTemplate() *Template {
	for _, t := range st.Templates {
		if t.Type == "BUILTIN" && t.Removed == nil {
			return t
		}
	}
	return nil
}

// Describe is VMTemplateVO.toString.
func (t *Template) Describe() string {
	return fmt.Sprintf(`Template {"id":%d,"name":%q,"uuid":%q}`, t.InternalID, t.Name, t.ID)
}

// OSCategory groups OS types.
type OSCategory struct {
	ID         string `json:"id"`
	InternalID int64  `json:"internalid"`
	Name       string `json:"name"`
	Featured   bool   `json:"isfeatured"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (o *OSCategory) UUID() string { return o.ID }

// OSType is a guest OS type.
type OSType struct {
	ID          string `json:"id"`
	InternalID  int64  `json:"internalid"`
	Description string `json:"description"`
	CategoryID  string `json:"oscategoryid"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (o *OSType) UUID() string { return o.ID }

// HypervisorTypes are HypervisorType's values (4.22) minus None.
var HypervisorTypes = []string{"XenServer", "KVM", "VMware", "Hyperv", "VirtualBox", "Parralels", "BareMetal",
	"Simulator", "Ovm", "Ovm3", "LXC", "Custom", "External"}

// HypervisorType is HypervisorType.getType: "" for None.
func HypervisorType(name string) string {
	for _, h := range HypervisorTypes {
		if strings.EqualFold(h, name) {
			return h
		}
	}
	return ""
}
