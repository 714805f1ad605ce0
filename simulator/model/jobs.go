package model

import (
	"encoding/json"
	"time"
)

// Job is an async job row. Its result is stored as the JSON CloudStack would
// serialize, so it reads the same after a restart.
type Job struct {
	ID           string          `json:"id"`
	InternalID   int64           `json:"internalid"`
	Command      string          `json:"command"`
	Cmd          string          `json:"cmd"` // Java command class, reported as "cmd"
	AccountID    string          `json:"accountid"`
	UserID       string          `json:"userid"`
	InstanceType string          `json:"instancetype,omitempty"`
	InstanceID   string          `json:"instanceid,omitempty"`
	Status       int             `json:"status"`
	ResultCode   int             `json:"resultcode"`
	Result       json.RawMessage `json:"result,omitempty"`
	Created      time.Time       `json:"created"`
	Completed    *time.Time      `json:"completed,omitempty"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (j *Job) UUID() string { return j.ID }

// IsAdmin is AccountManagerImpl.isAdmin: root, domain and resource domain
// admins (com.cloud.user.Account.Type ADMIN 1, DOMAIN_ADMIN 2,
// RESOURCE_DOMAIN_ADMIN 3).
func (a *Account) IsAdmin() bool { return a.Type >= 1 && a.Type <= 3 }
