package tag

import (
	"strings"
	"unicode/utf8"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// maxTagLength is the width of resource_tags.key and .value.
const maxTagLength = 255

// taggable finds a live (not removed) resource of one type by UUID and
// returns its owner account.
type taggable func(st *model.State, id string) (accountID string, ok bool)

// taggables are the resource types createTags can find; the simulator's
// registration adds each family's (UserVm, Volume, Snapshot, Template,
// PublicIpAddress, FirewallRule, LoadBalancer, SecurityGroup).
var taggables = map[string]taggable{}

// RegisterTaggable makes a resource type taggable: find says which account
// owns a resource of that type (ResourceManagerUtilImpl.s_typeMap's role).
func RegisterTaggable(resourceType string, find taggable) { taggables[resourceType] = find }

// resourceObjectTypes are the names of CloudStack's ResourceObjectType enum
// that resourcetype may take (matched case-insensitively). Types the
// simulator does not store are accepted, and their resources are never found.
var resourceObjectTypes = []string{"UserVm", "Template", "VnfTemplate", "ISO", "Volume", "Snapshot", "Backup",
	"Network", "DomainRouter", "Nic", "LoadBalancer", "PortForwardingRule", "FirewallRule", "SecurityGroup",
	"SecurityGroupRule", "PublicIpAddress", "Project", "Account", "Vpc", "NetworkACL", "StaticRoute", "VMSnapshot",
	"RemoteAccessVpn", "Zone", "ServiceOffering", "Storage", "PrivateGateway", "NetworkACLList", "VpnGateway",
	"CustomerGateway", "VpnConnection", "User", "DiskOffering", "AutoScaleVmProfile", "AutoScaleVmGroup",
	"LBStickinessPolicy", "LBHealthCheckPolicy", "SnapshotPolicy", "GuestOs", "NetworkOffering", "VpcOffering",
	"Domain", "ObjectStore", "Bucket", "QuotaTariff", "KubernetesCluster", "KubernetesSupportedVersion", "SharedFS"}

// resourceObjectType is ResourceManagerUtil.getResourceType.
func resourceObjectType(s string) (string, *kernel.APIError) {
	for _, t := range resourceObjectTypes {
		if strings.EqualFold(t, s) {
			return t, nil
		}
	}
	return "", kernel.ParamError("Invalid resource type %s", s)
}

// tagCommands are the commands of tags.go (registerCommands).
func tagCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createTags", Async: createTags},
		{Name: "deleteTags", Async: deleteTags},
		{Name: "listTags", Sync: listTags},
	}
}

// Pairs is TaggedResources.parseKeyValueMap: tags[i].key/value pairs,
// a later pair replacing an earlier one with the same key, in request order.
func Pairs(p kernel.Params) (keys []string, values map[string]string) {
	values = map[string]string{}
	for _, m := range p.Map("tags") {
		k, ok := m["key"]
		if !ok {
			continue
		}
		if _, seen := values[k]; !seen {
			keys = append(keys, k)
		}
		values[k] = m["value"]
	}
	return keys, values
}

// createTags checks everything in the job, as CreateTagsCmd.execute does,
// and creates all tags or none: TaggedResourceManagerImpl.createTags, one
// transaction. Departure: over-long keys or values are refused here with a
// text of the simulator's; CloudStack only finds out from the database
// (varchar(255)), with whatever text its driver gives.
func createTags(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	ids, rawType, customer := p.List("resourceids"), p.Get("resourcetype"), p.Get("customer")
	keys, values := Pairs(p)
	return &kernel.AsyncJob{CmdClass: "org.apache.cloudstack.api.command.user.tag.CreateTagsCmd",
		Run: func() (any, error) {
			typ, err := resourceObjectType(rawType)
			if err != nil {
				return nil, err
			}
			var created []*model.ResourceTag
			// TaggedResourceManagerImpl.createTags: per key, per resource,
			// the resource must exist, then the value must not be empty.
			for _, key := range keys {
				for _, id := range ids {
					find, ok := taggables[typ]
					var owner string
					if ok {
						owner, ok = find(c.State, id)
					}
					if !ok {
						return nil, kernel.ParamError("Unable to find resource by uuid %s and type %s", id, typ)
					}
					value := values[key]
					if value == "" {
						return nil, kernel.ParamError("Value for the key %s is either null or empty", key)
					}
					// Departure: createTags checks no length; MySQL refuses a
					// key or value over the varchar(255) columns (characters,
					// not bytes) and the job fails with a DB exception (530).
					// Here the refusal is a 431 with its own text.
					if utf8.RuneCountInString(key) > maxTagLength || utf8.RuneCountInString(value) > maxTagLength {
						return nil, kernel.ParamError("Tag key and value can't be longer than %d characters: key %s", maxTagLength, truncate(key, 40))
					}
					if findTag(c.State, typ, id, key) != nil || tagIn(created, typ, id, key) {
						return nil, kernel.InternalError("tag %s already on %s with id %s", key, typ, id)
					}
					tagID, _ := c.State.NewID(model.KindResourceTag)
					created = append(created, &model.ResourceTag{ID: tagID, Key: key, Value: value, ResourceType: typ,
						ResourceID: strings.ToLower(id), AccountID: owner, Customer: customer})
				}
			}
			if len(created) == 0 {
				return nil, kernel.InternalError("Failed to create resource tag(s)")
			}
			c.State.ResourceTags = append(c.State.ResourceTags, created...)
			c.Changed()
			return kernel.Success(), nil
		}}, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func tagIn(tags []*model.ResourceTag, typ, id, key string) bool {
	for _, t := range tags {
		if t.ResourceType == typ && strings.EqualFold(t.ResourceID, id) && strings.EqualFold(t.Key, key) {
			return true
		}
	}
	return false
}

// findTag finds a resource's tag by key; MySQL's collation makes keys
// case-insensitive.
func findTag(st *model.State, typ, id, key string) *model.ResourceTag {
	for _, t := range st.ResourceTags {
		if t.ResourceType == typ && strings.EqualFold(t.ResourceID, id) && strings.EqualFold(t.Key, key) {
			return t
		}
	}
	return nil
}

// deleteTags removes the given resources' tags: all of them without tags,
// else those with a given key (and, when a value is given, that value),
// compared ignoring case (TaggedResourceManagerImpl.deleteTags). Nothing to
// delete fails the job, as DeleteTagsCmd.execute does.
func deleteTags(c *kernel.Call) (*kernel.AsyncJob, error) {
	p := c.Params
	ids, rawType := p.List("resourceids"), p.Get("resourcetype")
	var want []map[string]string
	want = append(want, p.Map("tags")...)
	return &kernel.AsyncJob{CmdClass: "org.apache.cloudstack.api.command.user.tag.DeleteTagsCmd",
		Run: func() (any, error) {
			typ, err := resourceObjectType(rawType)
			if err != nil {
				return nil, err
			}
			var keep []*model.ResourceTag
			deleted := 0
			for _, t := range c.State.ResourceTags {
				if t.ResourceType == typ && model.ContainsFold(ids, t.ResourceID) && tagSelected(t, want) {
					deleted++
					continue
				}
				keep = append(keep, t)
			}
			if deleted == 0 {
				return nil, kernel.InternalError("Failed to delete tags")
			}
			c.State.ResourceTags = keep
			c.Changed()
			return kernel.Success(), nil
		}}, nil
}

func tagSelected(t *model.ResourceTag, want []map[string]string) bool {
	if len(want) == 0 {
		return true
	}
	for _, w := range want {
		key, hasKey := w["key"]
		if !hasKey || !strings.EqualFold(key, t.Key) {
			continue
		}
		if value, hasValue := w["value"]; !hasValue || strings.EqualFold(value, t.Value) {
			return true
		}
	}
	return false
}

// RemoveTagsOf deletes a resource's tags, as expunging a resource does.
func RemoveTagsOf(st *model.State, typ, id string) {
	var keep []*model.ResourceTag
	for _, t := range st.ResourceTags {
		if !(t.ResourceType == typ && strings.EqualFold(t.ResourceID, id)) {
			keep = append(keep, t)
		}
	}
	st.ResourceTags = keep
}

// listTags is QueryManagerImpl.listTags.
func listTags(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.ResourceTag]{Key: "tag", ID: func(t *model.ResourceTag) string { return t.ID },
		Keyword: func(t *model.ResourceTag) []string { return []string{t.Key, t.Value} }, View: views.TagView,
		Owner: func(t *model.ResourceTag) string { return t.AccountID }} // AccountManagerImpl.buildACLSearchCriteria scopes it by projectid
	p := c.Params
	return l.Run(c, c.State.ResourceTags, func(t *model.ResourceTag) bool {
		return kernel.OptEq(p.Get("resourceid"), t.ResourceID) && kernel.OptEq(p.Get("resourcetype"), t.ResourceType) &&
			kernel.OptEq(p.Get("key"), t.Key) && kernel.OptEq(p.Get("value"), t.Value) && kernel.OptEq(p.Get("customer"), t.Customer)
	})
}

// TaggedWith is the tags[i].key/value filter of list commands: every given
// pair must be on the resource (an empty value matches any value).
func TaggedWith(st *model.State, typ, id string, want []map[string]string) bool {
	for _, w := range want {
		t := findTag(st, typ, id, w["key"])
		if t == nil || (w["value"] != "" && !strings.EqualFold(t.Value, w["value"])) {
			return false
		}
	}
	return true
}

// TaggedWithAny is the tag join of listVirtualMachines and listNetworks:
// the resource type and (key0 = value0 OR key1 = value1 ...); an empty value
// matches any value, as the simulator's other tag filters have it.
func TaggedWithAny(st *model.State, typ, id string, want []map[string]string) bool {
	for _, w := range want {
		if TaggedWith(st, typ, id, []map[string]string{w}) {
			return true
		}
	}
	return len(want) == 0
}
