package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bosh-cloudstack/cloudstack-cpi/internal/testconfig"
)

func TestVersionFlag(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"-version"}, strings.NewReader(""), &out, &bytes.Buffer{}); code != 0 || strings.TrimSpace(out.String()) != version {
		t.Fatalf("code %d out %q", code, out.String())
	}
}

func TestServeRefusesABadCommandLine(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"serve"}, strings.NewReader(""), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "usage") {
		t.Fatalf("serve without -configPath: %d %q", code, errOut.String())
	}
	if code := run([]string{"serve", "-configPath", testconfig.Write(t, `{}`)}, strings.NewReader(""), &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "nothing to serve") {
		t.Fatalf("serve with nothing to serve: %d %q", code, errOut.String())
	}
	if out.Len() != 0 {
		t.Fatalf("serve wrote to stdout: %q", out.String())
	}
}

// TestDoctorRefusesABadCommandLine: doctor needs a valid cpi.json and a
// readable cloud-config whose cloud_properties the CPI would take, and says
// so before it asks CloudStack anything.
func TestDoctorRefusesABadCommandLine(t *testing.T) {
	good := testconfig.Write(t, `{"cloudstack": {"endpoint": "http://127.0.0.1:1/client/api", "api_key": "k",
		"secret_access_key": "s", "default_zone": "z1"}}`)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"doctor"}, "usage"},
		{[]string{"doctor", "-configPath", good, "extra"}, "usage"},
		{[]string{"doctor", "-configPath", testconfig.Write(t, `{}`)}, "cloudstack.endpoint is required"},
		{[]string{"doctor", "-configPath", testconfig.Write(t, `{"cloudstack":{"max_retries":"2"}}`)},
			"cloudstack.max_retries: expected an integer, got a string"},
		{[]string{"doctor", "-configPath", good, "-cloud-config", filepath.Join(t.TempDir(), "none.yml")}, "cloud-config"},
		{[]string{"doctor", "-configPath", good, "-cloud-config", testconfig.Write(t, "networks: {")}, "cloud-config"},
		{[]string{"doctor", "-configPath", good, "-cloud-config",
			testconfig.Write(t, "disk_types:\n- {name: fast, cloud_properties: {disk_offering: [Fast]}}\n")},
			`disk_type "fast" cloud_properties.disk_offering`},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		if code := run(c.args, strings.NewReader(""), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), c.want) ||
			out.Len() != 0 {
			t.Errorf("%q: exit %d, stderr %q, stdout %q", c.args, code, errOut.String(), out.String())
		}
	}
}

// TestDoctorOnAnUnreachableEndpoint: the endpoint check fails at once
// (doctor does not retry), naming what to check, and every other check
// says it was not run.
func TestDoctorOnAnUnreachableEndpoint(t *testing.T) {
	config := testconfig.Write(t, `{"cloudstack": {"endpoint": "http://127.0.0.1:1/client/api", "api_key": "k",
		"secret_access_key": "s", "default_zone": "z1"}}`)
	var out, errOut bytes.Buffer
	start := time.Now()
	code := run([]string{"doctor", "-configPath", config, "-json"}, strings.NewReader(""), &out, &errOut)
	var rows []struct {
		Check, Result, Fix string
		OK                 bool
	}
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil || code != 1 || len(rows) != 12 {
		t.Fatalf("exit %d, %d rows (%v):\n%s\n%s", code, len(rows), err, out.String(), errOut.String())
	}
	if rows[0].Check != "endpoint" || rows[0].OK || !strings.Contains(rows[0].Fix, "cloudstack.endpoint") {
		t.Fatalf("endpoint row %+v", rows[0])
	}
	for _, r := range rows[1:] {
		if r.OK || !strings.Contains(r.Result, "not checked") {
			t.Errorf("row %+v", r)
		}
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %s", took)
	}
}

// TestStateDirFlagAndSetting: bin/cpi's -stateDir is the state directory
// unless cpi.json's cloudstack.state_dir names another.
func TestStateDirFlagAndSetting(t *testing.T) {
	info := `{"method":"info","arguments":[],"context":{"director_uuid":"d"}}`
	flagDir, setDir := filepath.Join(t.TempDir(), "flag"), filepath.Join(t.TempDir(), "set")
	runInfo := func(args ...string) {
		var out, errOut bytes.Buffer
		if code := run(args, strings.NewReader(info), &out, &errOut); code != 0 || !strings.Contains(out.String(), `"error":null`) {
			t.Fatalf("%q: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
		}
	}
	runInfo("-configPath", testconfig.Write(t, testconfig.Good), "-stateDir", flagDir)
	if _, err := os.Stat(flagDir); err != nil {
		t.Errorf("-stateDir %s was not made: %v", flagDir, err)
	}
	flagDir2 := filepath.Join(t.TempDir(), "flag")
	withSetting := strings.Replace(testconfig.Good, `"max_retries":0`, `"max_retries":0,"state_dir":"`+setDir+`"`, 1)
	runInfo("-configPath", testconfig.Write(t, withSetting), "-stateDir", flagDir2)
	if _, err := os.Stat(setDir); err != nil {
		t.Errorf("cloudstack.state_dir %s was not made: %v", setDir, err)
	}
	if _, err := os.Stat(flagDir2); err == nil {
		t.Errorf("-stateDir was used although cloudstack.state_dir is set")
	}
}
