package offering

import (
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// SeedOfferings creates the simulator's stock compute offerings - two fixed
// ones, an unconstrained customized one and a custom constrained one - and
// disk offerings small to large plus a customized one, through the same
// code createServiceOffering and createDiskOffering use.
func SeedOfferings(st *model.State, now time.Time) {
	for _, p := range []map[string]string{
		{"name": "Small Instance", "cpunumber": "1", "cpuspeed": "500", "memory": "512"},
		{"name": "Medium Instance", "cpunumber": "1", "cpuspeed": "1000", "memory": "1024"},
		{"name": "Custom", "customized": "true"},
		{"name": "Custom Constrained", "customized": "true", "cpuspeed": "1000",
			"mincpunumber": "1", "maxcpunumber": "2", "minmemory": "512", "maxmemory": "4096"},
	} {
		if _, err := newServiceOffering(st, paramsOf(p), now); err != nil {
			panic(err)
		}
	}
	for _, p := range []map[string]string{
		{"name": "Small", "displaytext": "Small Disk, 5 GB", "disksize": "5"},
		{"name": "Medium", "displaytext": "Medium Disk, 20 GB", "disksize": "20"},
		{"name": "Large", "displaytext": "Large Disk, 100 GB", "disksize": "100"},
		{"name": "Custom", "displaytext": "Custom Disk", "customized": "true"},
	} {
		if _, err := newDiskOffering(st, paramsOf(p), now); err != nil {
			panic(err)
		}
	}
}

// paramsOf turns plain name/value pairs into Params, for requests the
// simulator makes to itself.
func paramsOf(m map[string]string) kernel.Params {
	return kernel.Params{Values: m}
}

// offeringCommands are the commands of offerings.go (registerCommands).
func offeringCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "listServiceOfferings", IDKind: model.KindServiceOffering, Sync: listServiceOfferings},
		{Name: "listDiskOfferings", IDKind: model.KindDiskOffering, Sync: listDiskOfferings},
	}
}

// listServiceOfferings lists user offerings; the simulator has no system VM
// offerings, so issystem=true finds nothing.
func listServiceOfferings(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.ServiceOffering]{Key: "serviceoffering", ID: (*model.ServiceOffering).UUID,
		Name:    func(o *model.ServiceOffering) string { return o.Name },
		Keyword: func(o *model.ServiceOffering) []string { return []string{o.Name, o.DisplayText} },
		View:    kernel.PlainView(views.ServiceOfferingView)}
	p := c.Params
	return l.Run(c, c.State.ServiceOfferings, func(o *model.ServiceOffering) bool {
		return !p.Bool("issystem", false) && p.Get("systemvmtype") == "" && stateMatches(p, o.Inactive) &&
			kernel.OptEq(p.Get("storagetype"), views.StorageType(o.LocalStorage)) && fits(o, p)
	})
}

// fits is the cpunumber, memory and cpuspeed filters of
// QueryManagerImpl.searchForServiceOfferingIdsAndCount: a fixed value at
// least the one asked; an open one without limits; or limits (from
// serviceofferingdetails) that take it. An open speed fits any.
func fits(o *model.ServiceOffering, p kernel.Params) bool {
	takes := func(have *int, param, minKey, maxKey string) bool {
		if p.Get(param) == "" {
			return true
		}
		x := int(p.Int(param, 0))
		if have != nil {
			return *have >= x
		}
		lo, hasMin := o.Details[minKey]
		hi, hasMax := o.Details[maxKey]
		return !hasMin || hasMax && model.ParseIntOr(lo, x+1) <= x && model.ParseIntOr(hi, x-1) >= x
	}
	return takes(o.CPUNumber, "cpunumber", "mincpunumber", "maxcpunumber") &&
		takes(o.Memory, "memory", "minmemory", "maxmemory") && takes(o.CPUSpeed, "cpuspeed", "", "")
}

// stateMatches is the 4.19 state filter: Active by default, "all" for both.
func stateMatches(p kernel.Params, inactive bool) bool {
	switch s := p.Get("state"); {
	case kernel.OptEq(s, "all") && s != "":
		return true
	case kernel.OptEq(s, model.OfferingInactive) && s != "":
		return inactive
	}
	return !inactive
}

func listDiskOfferings(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.DiskOffering]{Key: "diskoffering", ID: (*model.DiskOffering).UUID,
		Name:    func(o *model.DiskOffering) string { return o.Name },
		Keyword: func(o *model.DiskOffering) []string { return []string{o.Name, o.DisplayText} },
		View:    kernel.PlainView(views.DiskOfferingView)}
	p := c.Params
	return l.Run(c, c.State.DiskOfferings, func(o *model.DiskOffering) bool {
		return stateMatches(p, o.Inactive) && kernel.OptEq(p.Get("storagetype"), views.StorageType(o.LocalStorage)) &&
			p.Bool("encrypt", o.Encrypt) == o.Encrypt
	})
}
