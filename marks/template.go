package marks

import (
	"fmt"
	"strings"
	"time"
)

// Template is the CPI's mark on a template it creates. Neither
// getUploadParamsForTemplate nor registerTemplate takes tags (the 4.22
// schema has no tags parameter for them), so the mark goes into the display
// text they both take: the template carries it from the moment it exists,
// with no extra call. The keys are DirectorTag's and IncompleteTag's.
// Success rewrites the display text without the incomplete part, so a
// template still marked incomplete is one that an interrupted call left.
// An ISO (a VM's config drive) carries the same mark, with the agent it was
// made for.
type Template struct {
	Director string
	// Agent is the agent_id of the VM a config drive ISO was made for.
	Agent string
	// ConfigDrive says a template's VMs need a config drive ISO.
	ConfigDrive bool
	// Incomplete is set while the creating call runs. Owner names that
	// call's process (ThisProcess) and Until the time by which it has
	// ended, whatever happened to it.
	Incomplete bool
	Owner      string
	Until      time.Time
}

// markOpen and markClose frame the mark at the end of the display text.
const (
	markOpen  = " ["
	markClose = "]"
)

// Apply is text with the mark; text's own trailing mark, if any, is
// replaced.
func (m Template) Apply(text string) string {
	base, _, _ := cutMark(text)
	parts := []string{DirectorTag + "=" + m.Director}
	if m.Agent != "" {
		parts = append(parts, AgentTag+"="+m.Agent)
	}
	if m.ConfigDrive {
		parts = append(parts, ConfigDriveTag+"=true")
	}
	if m.Incomplete {
		parts = append(parts, fmt.Sprintf("%s=%s until %s", IncompleteTag, m.Owner, m.Until.UTC().Format(time.RFC3339)))
	}
	return base + markOpen + strings.Join(parts, "; ") + markClose
}

// ReadTemplate reads the CPI's mark from a template's (or ISO's) display
// text; false when it has none (a template of someone else's, or of an
// older CPI).
func ReadTemplate(displayText string) (Template, bool) {
	_, inner, ok := cutMark(displayText)
	if !ok {
		return Template{}, false
	}
	var m Template
	found := false
	for _, part := range strings.Split(inner, "; ") {
		key, value, _ := strings.Cut(part, "=")
		switch key {
		case DirectorTag:
			m.Director, found = value, true
		case AgentTag:
			m.Agent = value
		case ConfigDriveTag:
			m.ConfigDrive = value == "true"
		case IncompleteTag:
			owner, until, _ := strings.Cut(value, " until ")
			m.Incomplete, m.Owner = true, owner
			// An unreadable time reads as the zero time: long past, so
			// the leftover is not kept for ever.
			m.Until, _ = time.Parse(time.RFC3339, until)
		}
	}
	return m, found
}

// cutMark splits a display text into what precedes the mark and the mark's
// inside.
func cutMark(text string) (base, inner string, ok bool) {
	i := strings.LastIndex(text, markOpen+DirectorTag+"=")
	if i < 0 || !strings.HasSuffix(text, markClose) {
		return text, "", false
	}
	return text[:i], strings.TrimSuffix(text[i+len(markOpen):], markClose), true
}

// Running says whether the call a template's (or ISO's) incomplete mark
// names may still be running: on this host, unless kill(pid, 0) finds no
// such process; on another host, until the mark's time is up.
func (m Template) Running(now time.Time) bool {
	return !now.After(m.Until) && !ProcessGone(m.Owner)
}
