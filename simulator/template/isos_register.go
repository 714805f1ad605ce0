package template

import (
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// registerIso is TemplateManagerImpl.registerIso: the ISO is Active at once
// (persistTemplate(profile, Active)) and the zone's SSVM downloads the URL
// as for registerTemplate; isready follows the store copy.
func registerIso(c *kernel.Call) (any, error) {
	p := c.Params
	zones, err := isoZones(c)
	if err != nil {
		return nil, err
	}
	// HypervisorTemplateAdapter.prepare(RegisterIsoCmd)
	rawURL := p.Get("url")
	if strings.Contains(strings.ToLower(rawURL), "file://") {
		return nil, kernel.ParamError("File:// type urls are currently unsupported")
	}
	if err := ssvmOf(c).validateTemplateURL(isoFormat, rawURL); err != nil {
		return nil, err
	}
	// TemplateAdapterBase.prepare(RegisterIsoCmd): bootable null → true.
	t, err := newISO(c, p.Bool("bootable", true))
	if err != nil {
		return nil, err
	}
	t.URL, t.CrossZones, t.State = rawURL, p.Get("zoneid") == "-1", tsActive
	rows := registerDownload(c, t, zones, views.IsoView)
	return kernel.ListBody("iso", len(rows), rows), nil
}

// isoZones resolves registerIso's zoneid: RegisterIsoCmd.getZoneId maps -1
// to null, all zones, which TemplateAdapterBase.prepare allows the root
// admin only.
func isoZones(c *kernel.Call) ([]*model.Zone, *kernel.APIError) {
	v := c.Params.Get("zoneid")
	if v == "-1" {
		if c.Account.Type != 1 {
			return nil, kernel.ParamError("Template registered for 'All zones' can only be owned a Root Admin account. " +
				"Please select specific zone(s).")
		}
		return c.State.Zones, nil
	}
	z := zoneByParam(c.State, v)
	if z == nil {
		return nil, kernel.ServerParamError("Please specify a valid zone.")
	}
	return []*model.Zone{z}, nil
}
