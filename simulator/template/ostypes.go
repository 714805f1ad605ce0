package template

import (
	"slices"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// OSCatalogue is a realistic slice of CloudStack's guest OS table, by
// category (setup/db/create-schema.sql and the schema upgrades' guest_os
// rows). "Other PV (32-bit)"/"Other PV (64-bit)" (guest_os 139/140) are the
// XenServer PV types the earlier CloudStack CPIs default their os_type to.
var OSCatalogue = []struct {
	Category string
	Types    []string
}{
	{"CentOS", []string{"CentOS 5.6 (64-bit)", "CentOS 7", "CentOS 8"}},
	{"Debian", []string{"Debian GNU/Linux 11 (64-bit)", "Debian GNU/Linux 12 (64-bit)"}},
	{"Ubuntu", []string{"Ubuntu 20.04 LTS", "Ubuntu 22.04 LTS", "Ubuntu 24.04 LTS"}},
	{"Other", []string{"Other Linux (32-bit)", "Other Linux (64-bit)", "Other (64-bit)",
		"Other PV (32-bit)", "Other PV (64-bit)"}},
	{"Windows", []string{"Windows Server 2022 (64-bit)"}},
}

// SeedOSTypes fills the guest OS categories and types of the catalogue, as
// create-schema.sql and the upgrades insert them.
func SeedOSTypes(st *model.State) {
	for _, cat := range OSCatalogue {
		cid, cint := st.NewID(model.KindOSCategory)
		st.OSCategories = append(st.OSCategories, &model.OSCategory{ID: cid, InternalID: cint, Name: cat.Category,
			Featured: cat.Category != "Other"})
		for _, desc := range cat.Types {
			id, internal := st.NewID(model.KindOSType)
			st.OSTypes = append(st.OSTypes, &model.OSType{ID: id, InternalID: internal, Description: desc, CategoryID: cid})
		}
	}
}

// oSTypeCommands are the commands of ostypes.go (registerCommands).
func oSTypeCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listOsTypes", IDKind: model.KindOSType, Sync: listOsTypes},
		{Name: "listOsCategories", IDKind: model.KindOSCategory, Sync: listOsCategories},
	}
}

// listOsTypes is GuestOSDaoImpl.listGuestOSByCriteria: description and
// keyword are LIKE %x% on the display name, rows ordered by display name.
func listOsTypes(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.OSType]{Key: "ostype", ID: (*model.OSType).UUID, View: views.OSTypeView,
		Keyword: func(o *model.OSType) []string { return []string{o.Description} }}
	p := c.Params
	rows := slices.Clone(c.State.OSTypes)
	slices.SortStableFunc(rows, func(a, b *model.OSType) int {
		return strings.Compare(strings.ToLower(a.Description), strings.ToLower(b.Description))
	})
	return l.Run(c, rows, func(o *model.OSType) bool {
		return kernel.Like(o.Description, p.Get("description")) && kernel.OptEq(p.Get("oscategoryid"), o.CategoryID)
	})
}

// listOsCategories is GuestOsManagementService.listGuestOSCategoriesByCriteria.
func listOsCategories(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.OSCategory]{Key: "oscategory", ID: (*model.OSCategory).UUID,
		Name: func(o *model.OSCategory) string { return o.Name }, View: func(_ *kernel.Call, o *model.OSCategory) map[string]any {
			return map[string]any{"id": o.ID, "name": o.Name, "isfeatured": o.Featured}
		}}
	p := c.Params
	return l.Run(c, c.State.OSCategories, func(o *model.OSCategory) bool {
		return !p.Has("isfeatured") || p.Bool("isfeatured", false) == o.Featured
	})
}
