package config_test

import (
	"strings"
	"testing"

	"github.com/bosh-cloudstack/cloudstack-cpi/config"
)

// A key far from every known one gets no guess: a wrong guess misleads
// more than none.
func TestAnUnknownKeyFarFromAnyGetsNoGuess(t *testing.T) {
	for _, doc := range []string{`{"cloudstack":{"colour":"blue"}}`, `{"cloudstack":{"zone":"z"}}`, `{"x":{}}`} {
		_, err := config.Parse([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), "unknown key") || strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s: %v", doc, err)
		}
	}
}

// Swapped neighbours, a letter missing, one too many: each is one edit.
func TestAnUnknownKeyOneEditAwayGetsItsGuess(t *testing.T) {
	for doc, want := range map[string]string{
		`{"cloudstack":{"endpiont":"x"}}`:          "did you mean cloudstack.endpoint?",
		`{"cloudstack":{"defaultzone":"x"}}`:       "did you mean cloudstack.default_zone?",
		`{"cloudstack":{"max_retriess":1}}`:        "did you mean cloudstack.max_retries?",
		`{"webdav":{"publc_url":"x"}}`:             "did you mean webdav.public_url?",
		`{"stemcell":{"config_drive_os_typ":"x"}}`: "did you mean stemcell.config_drive_os_type?",
	} {
		if _, err := config.Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", doc, err, want)
		}
	}
}
