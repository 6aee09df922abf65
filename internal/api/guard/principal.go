package guard

import "context"

type principalKey struct{}

// WithPrincipal records the authenticated caller in ctx.
func WithPrincipal(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, principalKey{}, id)
}

// Principal returns the authenticated caller of the request, or "" when
// authentication is off. Tasks record it as their owner, and other
// principals get TaskNotFound for them.
func Principal(ctx context.Context) string {
	id, _ := ctx.Value(principalKey{}).(string)
	return id
}
