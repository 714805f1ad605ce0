package cloudstack

// Resource types for tags.
const (
	ResourceVM       = "UserVm"
	ResourceVolume   = "Volume"
	ResourceSnapshot = "Snapshot"
	ResourceIP       = "PublicIpAddress"
)

// MaxTagLength is CloudStack's resource_tags column width.
const MaxTagLength = 255

// SetTags gives a resource the desired tags, given the tags it has now.
// CloudStack keeps one row per key, so a key whose value changes is deleted
// before it is created again; unchanged keys cost nothing. Values longer
// than CloudStack's column are cut.
func (c *Client) SetTags(resourceType, id string, current, desired map[string]string) error {
	stale := map[string]string{}
	fresh := map[string]string{}
	for k, v := range desired {
		k, v = cut(k), cut(v)
		old, has := current[k]
		if has && old == v {
			continue
		}
		if has {
			stale[k] = old
		}
		fresh[k] = v
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

func cut(s string) string {
	r := []rune(s)
	if len(r) > MaxTagLength {
		return string(r[:MaxTagLength])
	}
	return s
}
