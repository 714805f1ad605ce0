package views

import (
	"fmt"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// TemplateRow is one row of listTemplates: a template in one zone.
type TemplateRow struct {
	Template *model.Template
	Copy     *model.TemplateCopy
}

// TemplateView is TemplateJoinDaoImpl.newTemplateResponse for one zone copy.
func TemplateView(c *kernel.Call, r TemplateRow) map[string]any {
	t, cp := r.Template, r.Copy
	v := map[string]any{"id": t.ID, "name": t.Name, "displaytext": t.DisplayText, "ispublic": t.Public,
		"created": kernel.CsTime(cp.Created), "isready": cp.Ready(), "passwordenabled": t.PasswordEnabled,
		"format": t.Format, "isfeatured": t.Featured, "crossZones": t.CrossZones, "templatetype": t.Type,
		"hypervisor": t.Hypervisor, "isextractable": t.Extractable && t.Type != "SYSTEM", "bits": t.Bits,
		"sshkeyenabled": t.SSHKeyEnabled, "isdynamicallyscalable": t.DynamicallyScalable, "directdownload": false,
		"deployasis": t.DeployAsIs, "requireshvm": t.RequiresHVM, "hasannotations": false,
		"arch": "x86_64", "forcks": false, "tags": []any{}, "details": orEmpty(t.Details),
		"downloaddetails": []map[string]string{{"datastore": imageStoreName(c.State, cp.ZoneID),
			"downloadPercent": model.Itoa(cp.Percent), "downloadState": cp.DownloadState}}}
	// status and url only in the full (admin) view or for the owner
	if c.Account.Type == 1 || c.Account.Type == 2 || t.AccountID == c.Account.ID {
		v["status"] = cp.Status(t)
		if t.URL != "" {
			v["url"] = t.URL
		}
	}
	if z := c.State.Zone(cp.ZoneID); z != nil {
		v["zoneid"], v["zonename"] = z.ID, z.Name
	}
	domain := templateOwner(c, t, v)
	v["domainpath"] = domain.DisplayPath()
	if cp.Size > 0 {
		v["size"] = cp.Size
	}
	if cp.PhysicalSize > 0 {
		v["physicalsize"] = cp.PhysicalSize
	}
	if t.Checksum != "" {
		v["checksum"] = checksumValue(t.Checksum)
	}
	if cp.Removed != nil {
		v["removed"] = kernel.CsTime(*cp.Removed)
	}
	return v
}

// templateOwner adds the OS type and the owner (account, domain; the
// system account's for a builtin template) to a template's view and
// returns the owner's domain.
func templateOwner(c *kernel.Call, t *model.Template, v map[string]any) *model.Domain {
	if o, ok := model.ByID(c.State.OSTypes, t.OSTypeID); ok {
		v["ostypeid"], v["ostypename"] = o.ID, o.Description
	}
	v["account"], v["domain"], v["domainid"] = "system", c.State.Domains[0].Name, c.State.Domains[0].ID
	domain := c.State.Domains[0]
	if a := c.State.Account(t.AccountID); a != nil {
		ownerName(c, v, a) // TemplateJoinDaoImpl.newTemplateResponse: project or account
		if d := c.State.Domain(a.DomainID); d != nil {
			domain = d
		}
	}
	v["domain"], v["domainid"] = domain.Name, domain.ID
	return domain
}

// checksumValue strips a "{ALGORITHM}" prefix (DigestHelper.getHashValueFromChecksumValue).
func checksumValue(s string) string {
	if strings.HasPrefix(s, "{") {
		if i := strings.Index(s, "}"); i > 0 {
			return s[i+1:]
		}
	}
	return s
}

// imageStoreName names a zone's NFS secondary storage in downloaddetails.
func imageStoreName(st *model.State, zoneID string) string {
	for i, z := range st.Zones {
		if strings.EqualFold(z.ID, zoneID) {
			if i == 0 {
				return "nfs://10.147.28.6:/export/home/sandbox/secondary"
			}
			return fmt.Sprintf("nfs://10.147.28.6:/export/home/sandbox/secondary%d", i+1)
		}
	}
	return ""
}

// TemplateUpdateView is TemplateJoinDaoImpl.newUpdateResponse, "to keep
// compatibility with the 4.1 API": the template without its zones, status
// or download details. The simulator's templates are never bootable=false;
// its ISOs may be.
func TemplateUpdateView(c *kernel.Call, t *model.Template) map[string]any {
	v := map[string]any{"id": t.ID, "name": t.Name, "displaytext": t.DisplayText, "ispublic": t.Public,
		"created": kernel.CsTime(t.Created), "format": t.Format, "bootable": t.Bootable || t.Format != "ISO", "hypervisor": t.Hypervisor,
		"isdynamicallyscalable": t.DynamicallyScalable, "details": orEmpty(t.Details), "tags": []any{}}
	templateOwner(c, t, v)
	return v
}

// OSTypeView is ApiResponseHelper.createGuestOSResponse.
func OSTypeView(c *kernel.Call, o *model.OSType) map[string]any {
	cat, _ := model.ByID(c.State.OSCategories, o.CategoryID)
	return map[string]any{"id": o.ID, "description": o.Description, "name": o.Description,
		"oscategoryid": cat.ID, "oscategoryname": cat.Name, "isuserdefined": false, "fordisplay": true}
}

// IsoView is TemplateJoinDaoImpl.newIsoResponse: the template response's
// fields less those an ISO response does not have (hypervisor, templatetype,
// sshkeyenabled, requireshvm, deployasis, details), plus bootable.
func IsoView(c *kernel.Call, r TemplateRow) map[string]any {
	v := TemplateView(c, r)
	for _, k := range []string{"hypervisor", "templatetype", "sshkeyenabled", "requireshvm", "deployasis", "details", "forcks"} {
		delete(v, k)
	}
	v["bootable"] = r.Template.Bootable
	return v
}
