package model

// The resource_tags row, ResourceTagVO (ResourceTagDaoImpl.getResourceTags
// reads it by resource id and type).

// ResourceTag is a row of CloudStack's resource_tags table: UNIQUE on
// (resource, type, key), key and value varchar(255). Resources refer to it
// by type and UUID, so every family's list output can show its tags.
type ResourceTag struct {
	ID           string `json:"id"`
	Key          string `json:"key"`
	Value        string `json:"value"`
	ResourceType string `json:"resourcetype"` // canonical ResourceObjectType name, e.g. "UserVm"
	ResourceID   string `json:"resourceid"`   // the resource's UUID
	AccountID    string `json:"accountid"`
	Customer     string `json:"customer,omitempty"`
}
