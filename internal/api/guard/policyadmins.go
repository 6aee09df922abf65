package guard

import "slices"

// Who may read and change the approval policies (/policies,
// internal/policies): operators, who administer every scope, and a
// tenant's admins, who administer their tenant's scope (tenant/NAME) only.
// --policy-admins names them in the form of --approver-groups:
// "root:*;ann:acme,beta" makes root an operator and ann the admin of the
// tenants acme and beta (a2aflow's tenants are its principals: the owners
// of tasks).
//
// The identity is the authenticated principal; without authentication, the
// X-Approver header's name (or DefaultApprover), as for approvals. Without
// authentication and without --policy-admins everyone is an operator (a
// laptop); with authentication and without it, nobody is, and the policies
// are changed on the server's host through its database only.

// AllTenants, in a policy admin's list, makes them an operator.
const AllTenants = "*"

// PolicyAdmin is what one caller may administer.
type PolicyAdmin struct {
	// Name is who they are, recorded as the author of their changes.
	Name string
	// Operator administers every scope.
	Operator bool
	// Tenants are the tenants whose scope they administer.
	Tenants []string
}

// PolicyAdminOf returns what name may administer under config
// (ParseApproverGroups' form: name -> tenants, "*" every scope).
func PolicyAdminOf(config map[string][]string, authOn bool, name string) PolicyAdmin {
	a := PolicyAdmin{Name: name}
	if config == nil && !authOn {
		a.Operator = true
		return a
	}
	tenants := config[name]
	if slices.Contains(tenants, AllTenants) {
		a.Operator = true
		return a
	}
	a.Tenants = slices.Clone(tenants)
	return a
}

// Administers reports whether a may read and change the policies of the
// scope of layer ("server", "tenant", "agent", "tool") and name.
func (a PolicyAdmin) Administers(layer, name string) bool {
	return a.Operator || (layer == "tenant" && slices.Contains(a.Tenants, name))
}

// Any reports whether a administers any scope at all.
func (a PolicyAdmin) Any() bool { return a.Operator || len(a.Tenants) > 0 }
