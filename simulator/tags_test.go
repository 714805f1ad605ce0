package simulator

import (
	"strings"
	"testing"
)

// resource_tags' columns are varchar(255) of characters: 255 two-byte
// characters fit, 256 do not; an empty value is refused with
// TaggedResourceManagerImpl.createTags' text.
func TestTagLimitsCountCharacters(t *testing.T) {
	e := newVMEnv(t, Options{})
	vm := e.dataVM(t, "cpivm-tags")
	create := func(tags map[string]string) error {
		_, err := e.cs.Resourcetags.CreateTags(e.cs.Resourcetags.NewCreateTagsParams([]string{vm}, "UserVm", tags))
		return err
	}
	if err := create(map[string]string{strings.Repeat("k", 255): strings.Repeat("ü", 255)}); err != nil {
		t.Fatalf("255 characters: %v", err)
	}
	wantJobError(t, create(map[string]string{"v": strings.Repeat("ü", 256)}), 431, "can't be longer than 255 characters")
	wantJobError(t, create(map[string]string{strings.Repeat("k", 256): "v"}), 431, "can't be longer than 255 characters")
	wantJobError(t, create(map[string]string{"empty": ""}), 431, "Value for the key empty is either null or empty")
}

// resourceids is a list of plain strings: a name instead of a UUID is
// accepted and the job fails, as the production Go CPI's createTags on a
// volume name does on a real CloudStack.
func TestCreateTagsOnAnUnknownResourceFailsInTheJob(t *testing.T) {
	e := newVMEnv(t, Options{})
	_, err := e.cs.Resourcetags.CreateTags(e.cs.Resourcetags.NewCreateTagsParams([]string{"cpi-ephemeral-disk-1"}, "Volume",
		map[string]string{"director": "d"}))
	wantJobError(t, err, 431, "Unable to find resource by uuid cpi-ephemeral-disk-1 and type Volume")
}
