package cpi

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cloudfoundry/bosh-cpi-go/apiv1"

	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/cloudstack/hypervisor"
	"github.com/bosh-cloudstack/cloudstack-cpi/config"
	"github.com/bosh-cloudstack/cloudstack-cpi/internal/jsonwords"
	"github.com/bosh-cloudstack/cloudstack-cpi/marks"
	"github.com/bosh-cloudstack/cloudstack-cpi/stemcell"
)

// lightPrefix marks the CID of a light stemcell: its template belongs to
// someone else, so delete_stemcell must leave it alone.
const lightPrefix = "light-"

// settingsDrive is where a stemcell's agent reads its settings: user data
// (or the registry), a CONFIG-2 config drive, or a CD-ROM's env file.
type settingsDrive int

const (
	noDrive settingsDrive = iota
	configDrive
	cdromDrive
)

// drivePrefixes are the CID prefixes of the stemcells with a drive.
var drivePrefixes = map[settingsDrive]string{configDrive: marks.ConfigDriveCIDPrefix, cdromDrive: marks.CDROMCIDPrefix}

// stemcellDrive reads a stemcell CID: its drive and its template.
func stemcellDrive(cid string) (settingsDrive, string) {
	for d, prefix := range drivePrefixes {
		if id, ok := strings.CutPrefix(cid, prefix); ok {
			return d, id
		}
	}
	return noDrive, cid
}

// stemcellProps are stemcell.MF's cloud_properties plus the overrides an
// operator may add. Unknown keys are allowed: stemcells carry other IaaSes'.
type stemcellProps struct {
	Name           string     `json:"name"`
	Version        flexString `json:"version"`
	Infrastructure string     `json:"infrastructure"`
	Hypervisor     string     `json:"hypervisor"`
	DiskFormat     string     `json:"disk_format"`
	Architecture   string     `json:"architecture"`

	TemplateID   string `json:"template_id"`   // light stemcell, by id
	TemplateName string `json:"template_name"` // light stemcell, by exact name per zone
	// LightTemplate is the Java CPI's template_name: the name of the
	// CloudStack template a light stemcell stands for.
	LightTemplate string `json:"light_template"`

	CloudStackHypervisor string   `json:"cloudstack_hypervisor"`
	CloudStackOSType     string   `json:"cloudstack_os_type"`
	RequiresHVM          *bool    `json:"requires_hvm"`
	Bits                 int      `json:"bits"`
	Public               *bool    `json:"public"`
	Extractable          *bool    `json:"extractable"`
	Zones                []string `json:"zones"`
}

// stemcells is the part behind create_stemcell and delete_stemcell: a
// stemcell is a template in its zones, of its OS type.
type stemcells struct {
	callDeps
	cloud     stemcellCloud
	leftovers templateLeftovers
}

// stemcellCloud is what the stemcell part asks of CloudStack.
type stemcellCloud interface {
	cloudstack.Templates
	cloudstack.ZoneCatalog
	cloudstack.OSTypeCatalog
}

// CreateStemcell implements apiv1.CPI.
func (c stemcells) CreateStemcell(imagePath string, cp apiv1.StemcellCloudProps) (apiv1.StemcellCID, error) {
	var props stemcellProps
	if err := cp.As(&props); err != nil {
		return apiv1.StemcellCID{}, cloudError(jsonwords.In("stemcell cloud_properties", err))
	}
	if err := props.takeLightTemplate(); err != nil {
		return apiv1.StemcellCID{}, cloudError(err)
	}
	var id string
	var err error
	if props.TemplateID != "" || props.TemplateName != "" {
		id, err = c.lightStemcell(props)
	} else {
		id, err = c.publishStemcell(imagePath, props)
	}
	if err != nil {
		return apiv1.StemcellCID{}, wrap(err, "creating stemcell %s/%s", props.Name, props.Version)
	}
	return apiv1.NewStemcellCID(id), nil
}

// takeLightTemplate reads the Java CPI's light_template as template_name.
// That CPI cloned the template through a work VM into one of its own; a
// light stemcell here runs the named template itself and never deletes it.
func (p *stemcellProps) takeLightTemplate() error {
	switch {
	case p.LightTemplate == "":
	case p.TemplateName == "":
		p.TemplateName = p.LightTemplate
	case p.TemplateName != p.LightTemplate:
		return fmt.Errorf("the stemcell's light_template %q and template_name %q name different templates; give one",
			p.LightTemplate, p.TemplateName)
	}
	return nil
}

// DeleteStemcell implements apiv1.CPI: gone already is success.
func (c stemcells) DeleteStemcell(cid apiv1.StemcellCID) error {
	id := cid.AsString()
	if strings.HasPrefix(id, lightPrefix) {
		c.logger.Info("stemcell", "light stemcell %s: its template is not the CPI's to delete", id)
		return nil
	}
	_, id = stemcellDrive(id)
	c.leftovers.sweepTemplates()
	copies, err := c.cloud.Templates(id)
	if err != nil {
		return wrap(err, "looking up stemcell template %s", id)
	}
	if len(copies) == 0 {
		c.logger.Info("stemcell", "template %s is already gone", id)
		return nil
	}
	// An earlier CPI's CID is the template's name.
	id = copies[0].ID
	err = c.cloud.DeleteTemplate(id, false)
	if cloudstack.IsTemplateInUse(err) {
		// The director deletes only stemcells none of its VMs use; those
		// left are destroyed ones CloudStack has not expunged yet (an
		// account that may not expunge leaves them for expunge.delay), or
		// someone else's. A deleted template affects neither.
		c.logger.Warn("stemcell", "template %s is still used by VMs CloudStack has not expunged (%s): deleting it with forced=true", id, err)
		err = c.cloud.DeleteTemplate(id, true)
	}
	return wrap(err, "deleting stemcell template %s", id)
}

func (c stemcells) publishStemcell(imagePath string, props stemcellProps) (string, error) {
	target, zones, err := c.chooseTarget(props)
	if err != nil {
		return "", err
	}
	img, err := stemcell.Prepare(imagePath, target, os.TempDir())
	if err != nil {
		return "", err
	}
	defer img.Cleanup()
	if img.Converted != "" {
		c.logger.Info("stemcell", "%s %s for %s: %s", props.Name, props.Version, target.Hypervisor, img.Converted)
	}
	if zones == nil {
		if zones, err = c.stemcellZones(props); err != nil {
			return "", err
		}
		if err := c.bootableIn(zones, target); err != nil {
			return "", err
		}
	}
	drive := noDrive
	if c.cfg.Stemcell.ConfigDriveOn() {
		drive = driveOf(props, target)
	}
	spec, err := c.templateSpec(props, zones, target, drive == configDrive)
	if err != nil {
		return "", err
	}
	c.leftovers.sweepTemplates()
	withDrive := drive != noDrive
	p := publisher{stemcells: c, spec: spec, img: img,
		published: c.templateMark(false, withDrive).Apply(spec.DisplayText)}
	p.spec.DisplayText = c.templateMark(true, withDrive).Apply(spec.DisplayText)
	id, err := p.publish()
	if err != nil || !withDrive {
		return id, err
	}
	return drivePrefixes[drive] + id, nil
}

func (p publisher) publish() (string, error) {
	if p.stemcells.cfg.Stemcell.Publish == config.PublishWebDAV {
		p.patience = downloadPatience
		if p.stemcells.cfg.WebDAV.DaemonURL != "" {
			return p.byDaemon()
		}
		return p.byWebDAV()
	}
	return p.byUpload()
}

// driveOf says where the stemcell's agent reads its settings. bosh.io's
// OpenStack stemcell on KVM or XenServer reads a CONFIG-2 config drive (or
// an OpenStack metadata service CloudStack does not offer); bosh.io's
// vSphere stemcell on VMware reads env from its CD-ROM (its agent.json's
// CDROM source, after VsphereGuestInfo, which CloudStack does not set).
// Neither reads CloudStack's user data.
func driveOf(props stemcellProps, target stemcell.Target) settingsDrive {
	switch {
	case isOpenStack(props) && (target.Hypervisor == hypervisor.KVM || target.Hypervisor == hypervisor.XenServer):
		return configDrive
	case isVSphere(props) && target.Hypervisor == hypervisor.VMware:
		return cdromDrive
	}
	return noDrive
}

func isVSphere(props stemcellProps) bool {
	return strings.EqualFold(props.Infrastructure, "vsphere")
}

func isOpenStack(props stemcellProps) bool {
	return strings.EqualFold(props.Infrastructure, "openstack")
}

// templateMark is this director's mark on a template, incomplete while this
// call runs.
func (c stemcells) templateMark(incomplete, configDrive bool) marks.Template {
	m := marks.Template{Director: c.ctx.DirectorUUID, ConfigDrive: configDrive}
	if incomplete {
		m.Incomplete, m.Owner, m.Until = true, marks.ThisProcess(), time.Now().Add(marks.TemplateLifetime(c.cfg))
	}
	return m
}

// templateSpec resolves the OS type: a lookup, before anything is created,
// so a typo costs nothing to clean up (zones, too, are resolved by then).
// An OpenStack stemcell on KVM takes config_drive_os_type (an Ubuntu one:
// virtio disks). On XenServer it keeps os_type, as the CloudStack Xen
// stemcell does, for the VM to boot HVM from the image's own boot loader:
// CitrixResourceBase.createVmFromTemplate makes the VM from the record of
// the XenServer template its OS type maps to, and gives it the PV boot
// loader pygrub unless that template's name starts with Windows, Citrix or
// Other; os_type's default, "Other Linux (64-bit)" (guest_os 99), maps to
// "Other install media" (the guest_os_hypervisor rows of
// schema-41000to41100.sql), XenServer's HVM template. requireshvm, on by
// default, keeps such a VM off hosts without HVM
// (FirstFitAllocator.filterHostWithNoHvmIfTemplateRequested).
func (c stemcells) templateSpec(props stemcellProps, zones []cloudstack.Zone, target stemcell.Target,
	configDrive bool) (cloudstack.TemplateSpec, error) {
	osDefault := c.cfg.Stemcell.OSType
	if configDrive && target.Hypervisor == hypervisor.KVM {
		osDefault = c.cfg.Stemcell.ConfigDriveOSType
	}
	osType, err := c.cloud.FindOSType(firstOf(props.CloudStackOSType, osDefault))
	if err != nil {
		return cloudstack.TemplateSpec{}, err
	}
	// The attempt's token makes the name its own (a lost answer is then
	// settled by name) within maxTemplateName.
	token := marks.AttemptToken()
	name := strings.TrimRight(truncate(templateName(props.Name, string(props.Version)), maxTemplateName-len(token)-1), "-.") +
		"-" + token
	s := c.cfg.Stemcell
	return cloudstack.TemplateSpec{
		Name:        name,
		DisplayText: truncate(fmt.Sprintf("BOSH stemcell %s version %s", props.Name, props.Version), 255),
		Format:      target.Format,
		Hypervisor:  target.Hypervisor,
		OSTypeID:    osType,
		ZoneIDs:     zoneIDs(zones),
		Bits:        firstInt(props.Bits, s.Bits),
		Public:      boolOr(props.Public, s.Public),
		Extractable: boolOr(props.Extractable, s.Extractable),
		RequiresHVM: boolOr(props.RequiresHVM, boolOr(s.RequiresHVM, true)),
	}, nil
}

func (c stemcells) stemcellZones(props stemcellProps) ([]cloudstack.Zone, error) {
	refs := props.Zones
	if len(refs) == 0 {
		refs = c.cfg.Stemcell.Zones
	}
	if len(refs) == 0 {
		refs = []string{c.cfg.CloudStack.DefaultZone}
	}
	return c.cloud.FindZones(refs)
}

// lightStemcell checks the named template is ready in every zone; nothing
// is uploaded.
func (c stemcells) lightStemcell(props stemcellProps) (string, error) {
	zones, err := c.stemcellZones(props)
	if err != nil {
		return "", err
	}
	id := props.TemplateID
	if id == "" {
		if id, err = c.templateIDByName(props.TemplateName, zones); err != nil {
			return "", err
		}
	}
	copies, err := c.cloud.Templates(id)
	if err != nil {
		return "", err
	}
	for _, z := range zones {
		if err := lightCopyReady(id, z, copies); err != nil {
			return "", err
		}
	}
	return lightPrefix + id, nil
}

func (c stemcells) templateIDByName(name string, zones []cloudstack.Zone) (string, error) {
	id := ""
	for _, z := range zones {
		t, err := c.cloud.FindTemplateByName(name, z.ID)
		if err != nil {
			return "", err
		}
		if t == nil {
			return "", fmt.Errorf("light stemcell template %q does not exist in zone %s", name, z.Name)
		}
		if id != "" && t.ID != id {
			return "", fmt.Errorf("light stemcell template %q is a different template in zone %s; name it by template_id", name, z.Name)
		}
		id = t.ID
	}
	return id, nil
}

func lightCopyReady(id string, z cloudstack.Zone, copies []cloudstack.Template) error {
	for _, t := range copies {
		if t.ZoneID != z.ID {
			continue
		}
		if !t.IsReady {
			return fmt.Errorf("light stemcell template %s is not ready in zone %s (status %q)", id, z.Name, t.Status)
		}
		return nil
	}
	return fmt.Errorf("light stemcell template %s does not exist in zone %s", id, z.Name)
}

func zoneIDs(zones []cloudstack.Zone) []string {
	ids := make([]string, len(zones))
	for i, z := range zones {
		ids[i] = z.ID
	}
	return ids
}
