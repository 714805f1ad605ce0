package cloudstack

import "strings"

// Resource types for tags (ResourceTag.ResourceObjectType: LoadBalancer is
// taggable, as are FirewallRule and PublicIpAddress).
const (
	ResourceVM       = "UserVm"
	ResourceVolume   = "Volume"
	ResourceSnapshot = "Snapshot"
	ResourceIP       = "PublicIpAddress"
	ResourceLB       = "LoadBalancer"
)

// MaxTagLength is the width of resource_tags.key and .value: varchar(255),
// counted in characters. createTags checks no length itself; MySQL refuses a
// longer value and the whole job fails.
const MaxTagLength = 255

// SetTags gives a resource the desired tags, given the tags it has now.
// CloudStack keeps one row per key, matched case-insensitively (the unique
// key of resource_tags under MySQL's collation), so a key whose value
// changes is deleted before it is created again; unchanged keys cost
// nothing. A desired empty value removes the key: createTags refuses empty
// values (TaggedResourceManagerImpl.createTags: "Value for the key … is
// either null or empty"). Keys and values are cut to MaxTagLength.
func (c *Client) SetTags(resourceType, id string, current, desired map[string]string) error {
	stale := map[string]string{}
	fresh := map[string]string{}
	for k, v := range desired {
		k, v = cutToTagLength(k), cutToTagLength(v)
		oldKey, old, has := tagFold(current, k)
		if has && old == v {
			continue
		}
		if has {
			stale[oldKey] = old
		}
		if v != "" {
			fresh[k] = v
		}
	}
	if len(stale) > 0 {
		del := c.cs.Resourcetags.NewDeleteTagsParams([]string{id}, resourceType)
		del.SetTags(stale)
		r, err := c.cs.Resourcetags.DeleteTags(del)
		if err != nil {
			return c.fail("deleteTags", err)
		}
		if _, err := c.waitJob("deleteTags", r.JobID); err != nil {
			return err
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	r, err := c.cs.Resourcetags.CreateTags(c.cs.Resourcetags.NewCreateTagsParams([]string{id}, resourceType, fresh))
	if err != nil {
		return c.fail("createTags", err)
	}
	_, err = c.waitJob("createTags", r.JobID)
	return err
}

// sendableTags are the pairs createTags accepts: empty values left out,
// keys and values cut to MaxTagLength.
func sendableTags(tags map[string]string) map[string]string {
	out := make(map[string]string, len(tags))
	for k, v := range tags {
		if v = cutToTagLength(v); v != "" {
			out[cutToTagLength(k)] = v
		}
	}
	return out
}

// tagFold finds the tag a resource has under key as CloudStack matches
// keys, without regard to case: the key it has, its value, and whether it
// has one.
func tagFold(m map[string]string, key string) (string, string, bool) {
	if v, ok := m[key]; ok {
		return key, v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return k, v, true
		}
	}
	return "", "", false
}

// cutToTagLength cuts a key or value to the resource_tags column's width.
func cutToTagLength(s string) string {
	r := []rune(s)
	if len(r) > MaxTagLength {
		return string(r[:MaxTagLength])
	}
	return s
}
