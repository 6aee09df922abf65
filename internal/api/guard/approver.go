package guard

import (
	"fmt"
	"strings"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// ApproverHeader names the approver when authentication is off. With
// authentication on, the approver is always the authenticated principal.
const ApproverHeader = "X-Approver"

// DefaultApprover is the approver recorded when authentication is off and
// the request names nobody.
const DefaultApprover = "anonymous-approver"

// ApproverGroups are name's approver groups: nil (any group) only without
// authentication and without configured groups; with either, a name in no
// group gets wire.NoApproverGroups, so nobody decides for a group
// without members.
func ApproverGroups(config map[string][]string, authOn bool, name string) []string {
	if config == nil && !authOn {
		return nil
	}
	if groups := config[name]; len(groups) > 0 {
		return groups
	}
	return wire.NoApproverGroups
}

// ParseApproverGroups reads "alice:finance,managers;bob:finance" into a map
// of approver to groups. An empty string gives nil: anyone may decide for
// any group.
func ParseApproverGroups(text string) (map[string][]string, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, nil
	}
	out := map[string][]string{}
	for _, entry := range strings.Split(text, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		name, groups, ok := strings.Cut(entry, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("entry %q: want name:group1,group2", entry)
		}
		for _, g := range strings.Split(groups, ",") {
			if g = strings.TrimSpace(g); g != "" {
				out[name] = append(out[name], g)
			}
		}
		if len(out[name]) == 0 {
			return nil, fmt.Errorf("entry %q: no groups", entry)
		}
	}
	return out, nil
}
