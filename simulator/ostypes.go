package simulator

import (
	"slices"
	"strings"
)

// OSCategory groups OS types.
type OSCategory struct {
	ID         string `json:"id"`
	InternalID int64  `json:"internalid"`
	Name       string `json:"name"`
	Featured   bool   `json:"isfeatured"`
}

func (o *OSCategory) uuid() string { return o.ID }

// OSType is a guest OS type.
type OSType struct {
	ID          string `json:"id"`
	InternalID  int64  `json:"internalid"`
	Description string `json:"description"`
	CategoryID  string `json:"oscategoryid"`
}

func (o *OSType) uuid() string { return o.ID }

// osCatalogue is a realistic slice of CloudStack's guest OS table, by
// category (setup/db/create-schema.sql and the schema upgrades' guest_os
// rows). "Other PV (32-bit)"/"Other PV (64-bit)" (guest_os 139/140) are the
// XenServer PV types the earlier CloudStack CPIs default their os_type to.
var osCatalogue = []struct {
	category string
	types    []string
}{
	{"CentOS", []string{"CentOS 5.6 (64-bit)", "CentOS 7", "CentOS 8"}},
	{"Debian", []string{"Debian GNU/Linux 11 (64-bit)", "Debian GNU/Linux 12 (64-bit)"}},
	{"Ubuntu", []string{"Ubuntu 20.04 LTS", "Ubuntu 22.04 LTS", "Ubuntu 24.04 LTS"}},
	{"Other", []string{"Other Linux (32-bit)", "Other Linux (64-bit)", "Other (64-bit)",
		"Other PV (32-bit)", "Other PV (64-bit)"}},
	{"Windows", []string{"Windows Server 2022 (64-bit)"}},
}

func seedOSTypes(st *state) {
	for _, cat := range osCatalogue {
		cid, cint := st.newID(kindOSCategory)
		st.OSCategories = append(st.OSCategories, &OSCategory{ID: cid, InternalID: cint, Name: cat.category,
			Featured: cat.category != "Other"})
		for _, desc := range cat.types {
			id, internal := st.newID(kindOSType)
			st.OSTypes = append(st.OSTypes, &OSType{ID: id, InternalID: internal, Description: desc, CategoryID: cid})
		}
	}
}

func init() {
	register(
		command{name: "listOsTypes", idKind: kindOSType, sync: listOsTypes},
		command{name: "listOsCategories", idKind: kindOSCategory, sync: listOsCategories},
	)
}

// listOsTypes is GuestOSDaoImpl.listGuestOSByCriteria: description and
// keyword are LIKE %x% on the display name, rows ordered by display name.
func listOsTypes(c *Call) (any, error) {
	l := lister[*OSType]{key: "ostype", id: (*OSType).uuid, view: c.osTypeView,
		keyword: func(o *OSType) []string { return []string{o.Description} }}
	p := c.Params
	rows := slices.Clone(c.st.OSTypes)
	slices.SortStableFunc(rows, func(a, b *OSType) int {
		return strings.Compare(strings.ToLower(a.Description), strings.ToLower(b.Description))
	})
	return l.run(c, rows, func(o *OSType) bool {
		return like(o.Description, p.Get("description")) && optEq(p.Get("oscategoryid"), o.CategoryID)
	})
}

// osTypeView is ApiResponseHelper.createGuestOSResponse.
func (c *Call) osTypeView(o *OSType) map[string]any {
	cat, _ := byID(c.st.OSCategories, o.CategoryID)
	return map[string]any{"id": o.ID, "description": o.Description, "name": o.Description,
		"oscategoryid": cat.ID, "oscategoryname": cat.Name, "isuserdefined": false, "fordisplay": true}
}

// listOsCategories is GuestOsManagementService.listGuestOSCategoriesByCriteria.
func listOsCategories(c *Call) (any, error) {
	l := lister[*OSCategory]{key: "oscategory", id: (*OSCategory).uuid,
		name: func(o *OSCategory) string { return o.Name }, view: func(o *OSCategory) map[string]any {
			return map[string]any{"id": o.ID, "name": o.Name, "isfeatured": o.Featured}
		}}
	p := c.Params
	return l.run(c, c.st.OSCategories, func(o *OSCategory) bool {
		return !p.Has("isfeatured") || p.Bool("isfeatured", false) == o.Featured
	})
}
