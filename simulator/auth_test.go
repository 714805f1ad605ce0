package simulator_test

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/apache/cloudstack-go/v2/cloudstack"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/internal/simtesting"
	"github.com/bosh-cloudstack/cloudstack-cpi/simulator/kernel"
)

func TestCloudStackGoListsTheSeededZone(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	zones, err := s.Client().Zone.ListZones(s.Client().Zone.NewListZonesParams())
	if err != nil {
		t.Fatal(err)
	}
	if zones.Count != 1 || zones.Zones[0].Name != "Sandbox-simulator" || zones.Zones[0].Networktype != "Advanced" ||
		zones.Zones[0].Allocationstate != "Enabled" {
		t.Fatalf("zones = %+v", zones.Zones[0])
	}
}

func TestLegacySignatureIgnoresExpires(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	// No signatureversion: expires is just another signed parameter.
	r := s.Get(simtesting.Signed(map[string]string{"command": "listZones", "expires": "2000-01-01T00:00:00+0000"}, simtesting.Key, simtesting.Secret))
	if r.Status != 200 || simtesting.Num(r.Inner(t, "listzonesresponse")["count"]) != 1 {
		t.Fatalf("%d %s", r.Status, r.Raw)
	}
}

func TestVersion3ExpiresFormats(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	future := time.Now().UTC().Add(time.Hour)
	for _, expires := range []string{
		future.Format("2006-01-02T15:04:05Z"),
		future.Format("2006-01-02T15:04:05+00:00"),
		future.Format("2006-01-02T15:04:05-0700"),
		future.Format("2006-01-02T15:04:05.000000Z"),
		future.Format("2006-01-02T15:04:05.000-0700"),
	} {
		for _, version := range []string{"signatureversion", "signatureVersion"} {
			r := s.Get(simtesting.Signed(map[string]string{"command": "listZones", version: "3", "expires": expires}, simtesting.Key, simtesting.Secret))
			if r.Status != 200 {
				t.Errorf("%s=3 expires=%s: %d %s", version, expires, r.Status, r.Raw)
			}
		}
	}
}

func TestVersion3RejectsExpiredAndMissingExpires(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	expired := s.Get(simtesting.Signed(simtesting.V3(map[string]string{"command": "listZones"}, -time.Minute), simtesting.Key, simtesting.Secret))
	expired.WantError(t, "listzonesresponse", 401, 0, kernel.BadCredentials)
	noExpires := s.Get(simtesting.Signed(map[string]string{"command": "listZones", "signatureversion": "3"}, simtesting.Key, simtesting.Secret))
	noExpires.WantError(t, "listzonesresponse", 401, 0, kernel.BadCredentials)
}

func TestWrongSecretIs401WithCloudStackBody(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	r := s.Get(simtesting.Signed(simtesting.V3(map[string]string{"command": "listZones"}, time.Minute), simtesting.Key, "wrong"))
	want := `{"listzonesresponse":{"uuidList":[],"errorcode":401,"errortext":"unable to verify user credentials and/or request signature"}}`
	if r.Status != 401 || r.Raw != want || r.ContentType != "application/json; charset=UTF-8" {
		t.Fatalf("%d %q %s", r.Status, r.ContentType, r.Raw)
	}
	_, err := cloudstack.NewClient(s.API, simtesting.Key, "wrong", false).Zone.ListZones(&cloudstack.ListZonesParams{})
	if err == nil || !strings.Contains(err.Error(), "CloudStack API error 401") {
		t.Fatalf("cloudstack-go error = %v", err)
	}
}

func TestUnknownKeyAndTamperedParametersAre401(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	s.Get(simtesting.Signed(simtesting.V3(map[string]string{"command": "listZones"}, time.Minute), "nokey", simtesting.Secret)).
		WantError(t, "listzonesresponse", 401, 0, kernel.BadCredentials)
	v := simtesting.Signed(simtesting.V3(map[string]string{"command": "listZones", "name": "a"}, time.Minute), simtesting.Key, simtesting.Secret)
	v.Set("name", "b")
	s.Get(v).WantError(t, "listzonesresponse", 401, 0, kernel.BadCredentials)
}

func TestUnknownCommandIs401(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	// CloudStack verifies the command exists before the signature, and its
	// command names are case-sensitive.
	for _, cmd := range []string{"noSuchCommand", "listzones"} {
		s.Call(map[string]string{"command": cmd}).WantError(t, "errorresponse", 401, 0, kernel.BadCredentials)
	}
}

// TestSignatureEncoding sends awkward values through cloudstack-go by GET
// and POST: the server must rebuild exactly the string the client signed.
func TestSignatureEncoding(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	cs := s.Client()
	custom := cs.Custom.(*cloudstack.CustomService)
	for _, value := range []string{"a b", "a*b", "a+b", "a/b", "a=b&c", "ünïcødé ☁", "%41", "x,y;z'\"!()"} {
		p := cs.Zone.NewListZonesParams()
		p.SetKeyword(value)
		if _, err := cs.Zone.ListZones(p); err != nil { // GET
			t.Errorf("GET keyword=%q: %v", value, err)
		}
		cp := &cloudstack.CustomServiceParams{}
		cp.SetParam("keyword", value)
		var out map[string]any
		if err := custom.CustomPostRequest("listZones", cp, &out); err != nil {
			t.Errorf("POST keyword=%q: %v", value, err)
		}
	}
}

// TestTildeIsEncodedTheJavaWay: Java's URLEncoder encodes '~' (Go's and
// Python's escaping do not), so only a signature over "%7E" is valid.
func TestTildeIsEncodedTheJavaWay(t *testing.T) {
	s := simtesting.Start(t, simulator.Options{})
	goStyle := simtesting.Signed(simtesting.V3(map[string]string{"command": "listZones", "keyword": "a~b"}, time.Minute), simtesting.Key, simtesting.Secret)
	s.Get(goStyle).WantError(t, "listzonesresponse", 401, 0, kernel.BadCredentials)

	expires := time.Now().UTC().Add(time.Minute).Format(time.RFC3339)
	unsigned := "apiKey=" + simtesting.Key + "&command=listZones&expires=" + url.QueryEscape(expires) +
		"&keyword=a%7Eb&response=json&signatureversion=3"
	mac := hmac.New(sha1.New, []byte(simtesting.Secret))
	mac.Write([]byte(strings.ToLower(unsigned)))
	v := url.Values{"apiKey": {simtesting.Key}, "command": {"listZones"}, "expires": {expires}, "keyword": {"a~b"},
		"response": {"json"}, "signatureversion": {"3"},
		"signature": {base64.StdEncoding.EncodeToString(mac.Sum(nil))}}
	if r := s.Get(v); r.Status != http.StatusOK {
		t.Fatalf("Java-style signature refused: %d %s", r.Status, r.Raw)
	}
}
