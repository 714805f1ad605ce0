// Command goblob writes the golang-1.26-linux package's blob: the official
// linux-amd64 Go toolchain, fetched as the module golang.org/toolchain
// through the Go module proxy (and so checked against the checksum
// database), trimmed to what `go build` needs and packed so that every
// machine, whatever its OS, architecture, umask or module cache, writes the
// same bytes. hack/release/go-blob.sh runs it and pins the module version.
//
// Usage: goblob -module golang.org/toolchain@v0.0.1-goX.Y.Z.linux-amd64 -out OUT.tgz
//
// OUT.tgz.stamp records the module's checksum, this program's own binary
// and OUT.tgz's sha256: when all still match, OUT.tgz is reused.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	module := flag.String("module", "", "the toolchain module, golang.org/toolchain@v0.0.1-goX.Y.Z.linux-amd64")
	out := flag.String("out", "", "the blob to write (a .tgz)")
	flag.Parse()
	if *module == "" || *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: goblob -module golang.org/toolchain@v0.0.1-goX.Y.Z.linux-amd64 -out OUT.tgz")
		os.Exit(2)
	}
	if err := run(*module, *out); err != nil {
		fmt.Fprintln(os.Stderr, "goblob:", err)
		os.Exit(1)
	}
}

func run(module, out string) error {
	goVersion, err := moduleGoVersion(module)
	if err != nil {
		return err
	}
	dl, err := download(module)
	if err != nil {
		return err
	}
	stamp, err := inputStamp(module, dl.Sum)
	if err != nil {
		return err
	}
	if reusable(out, stamp) {
		return nil
	}
	tmp := out + ".tmp"
	sum, err := pack(dl.Dir, goVersion, tmp)
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	return os.WriteFile(out+".stamp", []byte(stamp+" "+sum+"\n"), 0o644)
}

// moduleGoVersion is the Go version a toolchain module's version names:
// v0.0.1-go1.26.8.linux-amd64 is go1.26.8 for linux-amd64, the only
// platform the package's packaging runs on (the director's VMs).
func moduleGoVersion(module string) (string, error) {
	_, version, ok := strings.Cut(module, "@")
	rest, isToolchain := strings.CutPrefix(version, "v0.0.1-")
	goVersion, isLinuxAMD64 := strings.CutSuffix(rest, ".linux-amd64")
	if !ok || !isToolchain || !isLinuxAMD64 || !strings.HasPrefix(goVersion, "go1.") {
		return "", fmt.Errorf("%q is not a linux-amd64 Go toolchain module: want golang.org/toolchain@v0.0.1-goX.Y.Z.linux-amd64", module)
	}
	return goVersion, nil
}

type downloaded struct {
	Dir, Sum, Error string
}

// download runs `go mod download -json` in an empty directory, so that no
// go.mod or go.work around it is consulted or changed, with GOTOOLCHAIN=local
// so that the go command does not switch to another toolchain meanwhile.
// GOPROXY, GOSUMDB and GOMODCACHE are the caller's.
func download(module string) (downloaded, error) {
	var dl downloaded
	empty, err := os.MkdirTemp("", "goblob-")
	if err != nil {
		return dl, err
	}
	defer os.RemoveAll(empty)
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Dir = empty
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod", "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if err := json.Unmarshal(stdout.Bytes(), &dl); err != nil && runErr == nil {
		return dl, fmt.Errorf("go mod download -json %s: unreadable answer: %w", module, err)
	}
	switch {
	case dl.Error != "":
		return dl, fmt.Errorf("go mod download %s: %s", module, dl.Error)
	case runErr != nil:
		return dl, fmt.Errorf("go mod download %s: %w: %s", module, runErr, strings.TrimSpace(stderr.String()))
	case dl.Dir == "" || dl.Sum == "":
		return dl, fmt.Errorf("go mod download %s gave no directory or checksum", module)
	}
	return dl, nil
}

// inputStamp names what the blob is made of: the module, its checksum (the
// module proxy's and checksum database's h1: hash of its files) and this
// program, whose binary changes when the packing does.
func inputStamp(module, sum string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	packer, err := fileSHA256(self)
	if err != nil {
		return "", err
	}
	return module + " " + sum + " packer:" + packer, nil
}

// reusable: out exists, was made from the same inputs and is unchanged.
func reusable(out, stamp string) bool {
	recorded, err := os.ReadFile(out + ".stamp")
	if err != nil {
		return false
	}
	sum, err := fileSHA256(out)
	return err == nil && strings.TrimSpace(string(recorded)) == stamp+" "+sum
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

var errNotToolchain = errors.New("not the Go toolchain the module version names")
