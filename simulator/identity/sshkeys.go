package identity

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"

	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/model"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/views"
)

// sshKeyLength is ssh.key.length's default.
const sshKeyLength = 2048

// sshKeyCommands are the commands of sshkeys.go (registerCommands).
func sshKeyCommands() []kernel.Command {
	return []kernel.Command{
		{Name: "createSSHKeyPair", Sync: createSSHKeyPair},
		{Name: "registerSSHKeyPair", Sync: registerSSHKeyPair},
		{Name: "listSSHKeyPairs", IDKind: model.KindSSHKeyPair, Sync: listSSHKeyPairs},
		{Name: "deleteSSHKeyPair", Sync: deleteSSHKeyPair},
	}
}

// KeyPair finds an account's key pair by name; names compare
// case-insensitively, as MySQL does.
func KeyPair(st *model.State, accountID, name string) *model.SSHKeyPair {
	for _, k := range st.SSHKeyPairs {
		if k.AccountID == accountID && strings.EqualFold(k.Name, name) {
			return k
		}
	}
	return nil
}

// createSSHKeyPair is ManagementServerImpl.createSSHKeyPair
// (SshKeyPairServiceImpl.createSshKeyPair on main); the owner is
// finalizeOwner's, the project's account with projectid.
func createSSHKeyPair(c *kernel.Call) (any, error) {
	name := c.Params.Get("name")
	if strings.TrimSpace(name) == "" {
		return nil, kernel.ParamError("Please specify a valid name for the key pair. The key name can't be empty")
	}
	owner, err := c.Owner()
	if err != nil {
		return nil, err
	}
	if KeyPair(c.State, owner.ID, name) != nil {
		return nil, kernel.ParamError("A key pair with name '%s' already exists.", name)
	}
	key, err := rsa.GenerateKey(rand.Reader, sshKeyLength)
	if err != nil {
		return nil, kernel.InternalError("key generation failed: %v", err)
	}
	pub := "ssh-rsa " + base64.StdEncoding.EncodeToString(sshRSAPublicKey(&key.PublicKey))
	k := saveKeyPair(c, owner, name, pub)
	v := views.KeyPairView(c, k)
	v["privatekey"] = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
	return map[string]any{"keypair": v}, nil
}

// sshRSAPublicKey is the SSH wire encoding of an RSA public key (RFC 4253).
func sshRSAPublicKey(pub *rsa.PublicKey) []byte {
	var out []byte
	out = sshString(out, []byte("ssh-rsa"))
	out = sshString(out, mpint(big.NewInt(int64(pub.E))))
	return sshString(out, mpint(pub.N))
}

func sshString(out, b []byte) []byte {
	out = binary.BigEndian.AppendUint32(out, uint32(len(b)))
	return append(out, b...)
}

// mpint is a positive big integer as SSH encodes it: big-endian with a
// leading zero byte when the high bit is set.
func mpint(n *big.Int) []byte {
	b := n.Bytes()
	if len(b) > 0 && b[0]&0x80 != 0 {
		b = append([]byte{0}, b...)
	}
	return b
}

// registerSSHKeyPair is ManagementServerImpl.registerSSHKeyPair: the name,
// then the key's validity, then the same key under another name, all in
// finalizeOwner's account (the project's with projectid).
func registerSSHKeyPair(c *kernel.Call) (any, error) {
	owner, err := c.Owner()
	if err != nil {
		return nil, err
	}
	name, material := c.Params.Get("name"), c.Params.Get("publickey")
	if KeyPair(c.State, owner.ID, name) != nil {
		return nil, kernel.ParamError("A key pair with name '%s' already exists for this account.", name)
	}
	pub, ok := publicKeyFromMaterial(material)
	if !ok {
		return nil, kernel.ParamError("Public key is invalid")
	}
	for _, k := range c.State.SSHKeyPairs {
		if k.AccountID == owner.ID && k.PublicKey == pub {
			return nil, kernel.ParamError("A key pair with key '%s' already exists for this account.", pub)
		}
	}
	return map[string]any{"keypair": views.KeyPairView(c, saveKeyPair(c, owner, name, pub))}, nil
}

// publicKeyFromMaterial is SSHKeysHelper.getPublicKeyFromKeyMaterial: the
// material may itself be base64-encoded; the result is "<type> <base64>"
// without the comment.
func publicKeyFromMaterial(material string) (string, bool) {
	material = strings.TrimSpace(material)
	if !strings.Contains(material, " ") {
		decoded, err := base64.StdEncoding.DecodeString(material)
		if err != nil {
			return "", false
		}
		material = strings.TrimSpace(string(decoded))
	}
	known := false
	for _, prefix := range []string{"ssh-rsa", "ssh-dss", "ecdsa-sha2-nistp", "ssh-ed25519"} {
		known = known || strings.HasPrefix(material, prefix)
	}
	fields := strings.Fields(material)
	if !known || len(fields) < 2 {
		return "", false
	}
	if _, err := base64.StdEncoding.DecodeString(fields[1]); err != nil {
		return "", false
	}
	return fields[0] + " " + fields[1], true
}

// fingerprint is SSHKeysHelper.getPublicKeyFingerprint: the MD5 of the key
// blob in colon-separated hex.
func fingerprint(pub string) string {
	fields := strings.Fields(pub)
	blob, _ := base64.StdEncoding.DecodeString(fields[len(fields)-1])
	sum := md5.Sum(blob)
	parts := make([]string, len(sum))
	for i, b := range sum {
		parts[i] = fmt.Sprintf("%02x", b)
	}
	return strings.Join(parts, ":")
}

func saveKeyPair(c *kernel.Call, owner *model.Account, name, pub string) *model.SSHKeyPair {
	id, internal := c.State.NewID(model.KindSSHKeyPair)
	k := &model.SSHKeyPair{ID: id, InternalID: internal, Name: name, AccountID: owner.ID, PublicKey: pub,
		Fingerprint: fingerprint(pub), Created: c.Engine.Now()}
	c.State.SSHKeyPairs = append(c.State.SSHKeyPairs, k)
	c.Changed()
	return k
}

// listSSHKeyPairs is ManagementServerImpl.listSSHKeyPairs: name and
// fingerprint match exactly, keyword is a substring of either.
func listSSHKeyPairs(c *kernel.Call) (any, error) {
	l := kernel.Lister[*model.SSHKeyPair]{Key: "sshkeypair", ID: (*model.SSHKeyPair).UUID, Name: func(k *model.SSHKeyPair) string { return k.Name },
		Keyword: func(k *model.SSHKeyPair) []string { return []string{k.Name, k.Fingerprint} }, View: views.KeyPairView,
		Owner: func(k *model.SSHKeyPair) string { return k.AccountID }, OwnerByIDToo: true}
	// SshKeyPairServiceImpl.listSshKeyPairs: the key pairs
	// buildACLSearchParameters permits, by default the caller's own; the
	// Owner hook is its project side.
	return l.Run(c, c.State.SSHKeyPairs, func(k *model.SSHKeyPair) bool {
		return c.ListPermits(k.AccountID) && kernel.OptEq(c.Params.Get("fingerprint"), k.Fingerprint)
	})
}

// deleteSSHKeyPair is ManagementServerImpl.deleteSSHKeyPair, in
// finalizeOwner's account (the project's with projectid).
func deleteSSHKeyPair(c *kernel.Call) (any, error) {
	owner, err := c.Owner()
	if err != nil {
		return nil, err
	}
	name := c.Params.Get("name")
	k := KeyPair(c.State, owner.ID, name)
	if k == nil {
		return nil, kernel.ParamError("A key pair with name '%s' does not exist for account %s in specified domain id", name, owner.Name)
	}
	var keep []*model.SSHKeyPair
	for _, other := range c.State.SSHKeyPairs {
		if other != k {
			keep = append(keep, other)
		}
	}
	c.State.SSHKeyPairs = keep
	c.Changed()
	return kernel.Success(), nil
}

// PublicKeysOf are the public keys of the named key pairs, one per line, as
// the VM's SSH.PublicKey detail holds them.
func PublicKeysOf(st *model.State, accountID string, names []string) string {
	var keys []string
	for _, n := range names {
		if k := KeyPair(st, accountID, n); k != nil {
			keys = append(keys, k.PublicKey)
		}
	}
	return strings.Join(keys, "\n")
}
