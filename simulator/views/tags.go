package views

import (
	"sort"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
)

// TagView is ResourceTagJoinDaoImpl.newResourceTagResponse.
func TagView(c *kernel.Call, t *model.ResourceTag) map[string]any {
	v := map[string]any{"key": t.Key, "value": t.Value, "resourcetype": t.ResourceType, "resourceid": t.ResourceID}
	addOwner(c, v, t.AccountID)
	if t.Customer != "" {
		v["customer"] = t.Customer
	}
	return v
}

// resourceTagViews are a resource's tags as its own response lists them.
func resourceTagViews(c *kernel.Call, typ, id string) []map[string]any {
	out := []map[string]any{}
	for _, t := range c.State.ResourceTags {
		if t.ResourceType == typ && strings.EqualFold(t.ResourceID, id) {
			out = append(out, TagView(c, t))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i]["key"].(string) < out[j]["key"].(string) })
	return out
}
