package model

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"
	"time"
)

// Domain is a CloudStack domain. Path is CloudStack's internal form: "/" for
// ROOT, "/child/" below it.
type Domain struct {
	ID         string    `json:"id"`
	InternalID int64     `json:"internalid"`
	Name       string    `json:"name"`
	Path       string    `json:"path"`
	ParentID   string    `json:"parentid,omitempty"`
	Level      int       `json:"level"`
	Created    time.Time `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (d *Domain) UUID() string { return d.ID }

// DisplayPath is the path as API responses show it: "ROOT", "ROOT/child".
func (d *Domain) DisplayPath() string {
	return "ROOT" + strings.TrimSuffix(d.Path, "/")
}

// Account is a CloudStack account; Type 1 is a root admin.
type Account struct {
	ID         string    `json:"id"`
	InternalID int64     `json:"internalid"`
	Name       string    `json:"name"`
	Type       int       `json:"type"`
	DomainID   string    `json:"domainid"`
	State      string    `json:"state"`
	IsDefault  bool      `json:"isdefault"`
	Created    time.Time `json:"created"`
	// RoleID is the default role (roles.go) it was created with; 0 for the
	// role its type maps to.
	RoleID int `json:"roleid,omitempty"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (a *Account) UUID() string { return a.ID }

// User is a CloudStack user. The password is kept as a salted hash; the API
// keys are kept in clear because signatures are verified with the secret.
type User struct {
	ID           string    `json:"id"`
	InternalID   int64     `json:"internalid"`
	Username     string    `json:"username"`
	PasswordSalt string    `json:"passwordsalt"`
	PasswordHash string    `json:"passwordhash"`
	Firstname    string    `json:"firstname"`
	Lastname     string    `json:"lastname"`
	Email        string    `json:"email,omitempty"`
	Timezone     string    `json:"timezone,omitempty"`
	AccountID    string    `json:"accountid"`
	State        string    `json:"state"`
	APIKey       string    `json:"apikey,omitempty"`
	SecretKey    string    `json:"secretkey,omitempty"`
	IsDefault    bool      `json:"isdefault"`
	Created      time.Time `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (u *User) UUID() string { return u.ID }

// SetPassword stores a fresh salt and the salted hash of pw, never pw itself.
func (u *User) SetPassword(pw string) {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	u.PasswordSalt = hex.EncodeToString(salt)
	u.PasswordHash = passwordHash(u.PasswordSalt, pw)
}

// CheckPassword reports whether pw hashes to the stored hash, in constant time.
func (u *User) CheckPassword(pw string) bool {
	return subtle.ConstantTimeCompare([]byte(u.PasswordHash), []byte(passwordHash(u.PasswordSalt, pw))) == 1
}

func passwordHash(salt, pw string) string {
	h := sha256.Sum256([]byte(salt + pw))
	return hex.EncodeToString(h[:])
}

// AdminUser is the default admin user the management server is installed with.
func (st *State) AdminUser() *User {
	for _, u := range st.Users {
		if u.Username == "admin" && u.IsDefault {
			return u
		}
	}
	return nil
}

// UserByAPIKey finds the user holding an API key; an empty key finds nobody.
func (st *State) UserByAPIKey(key string) *User {
	if key == "" {
		return nil
	}
	for _, u := range st.Users {
		if subtle.ConstantTimeCompare([]byte(u.APIKey), []byte(key)) == 1 {
			return u
		}
	}
	return nil
}

// Account finds an account by UUID, removed or not; nil when none.
func (st *State) Account(id string) *Account { a, _ := ByID(st.Accounts, id); return a }

// Domain finds a domain by UUID; nil when none.
func (st *State) Domain(id string) *Domain { d, _ := ByID(st.Domains, id); return d }

// RootDomain is the domain at path "/".
func (st *State) RootDomain() *Domain {
	for _, d := range st.Domains {
		if d.Path == "/" {
			return d
		}
	}
	return nil
}

// RoleType is org.apache.cloudstack.acl.RoleType; its value is the id of the
// default role of that type (RoleType.getId).
type RoleType int

// The default roles' types (RoleType: Admin, ResourceAdmin, DomainAdmin, User).
const (
	RoleAdmin         RoleType = 1
	RoleResourceAdmin RoleType = 2
	RoleDomainAdmin   RoleType = 3
	RoleUser          RoleType = 4
)

// RoleForAccountType is RoleType.getByAccountType for the account types the
// simulator creates (Account.Type: 0 NORMAL, 1 ADMIN, 2 DOMAIN_ADMIN,
// 3 RESOURCE_DOMAIN_ADMIN); 0 is returned for any other.
func RoleForAccountType(t int) RoleType {
	switch t {
	case 0:
		return RoleUser
	case 1:
		return RoleAdmin
	case 2:
		return RoleDomainAdmin
	case 3:
		return RoleResourceAdmin
	}
	return 0
}

// Role is the account's default role: the one it was created with, else the
// one its type maps to (Upgrade481to490.migrateAccountsToDefaultRoles).
func (a *Account) Role() RoleType {
	if a.RoleID != 0 {
		return RoleType(a.RoleID)
	}
	return RoleForAccountType(a.Type)
}

// SSHKeyPair is an account's SSH key pair. CloudStack keeps only the public
// key; the private key of createSSHKeyPair is returned once.
type SSHKeyPair struct {
	ID          string    `json:"id"`
	InternalID  int64     `json:"internalid"`
	Name        string    `json:"name"`
	AccountID   string    `json:"accountid"`
	PublicKey   string    `json:"publickey"`
	Fingerprint string    `json:"fingerprint"`
	Created     time.Time `json:"created"`
}

// UUID is the row's UUID, the key ByID finds it by.
func (k *SSHKeyPair) UUID() string { return k.ID }
