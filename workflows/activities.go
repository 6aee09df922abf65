package workflows

// NamedActivity is an activity function with the name it is registered and
// called by. Make one with [Activity].
type NamedActivity struct {
	Name string
	Func any
}

// Activity names fn for Agent.Activities. Unlike a plain function, whose name
// is its Go name, the name stays when the Go function is renamed; call it by
// the same name (a constant) from the handler:
//
//	const activityGetQuote = "GetQuote"
//	agent.Activities = []any{workflows.Activity(activityGetQuote, supplier.Quote)}
//	...
//	err := workflow.ExecuteActivity(ctx, activityGetQuote, in).Get(ctx, &quote)
func Activity(name string, fn any) NamedActivity { return NamedActivity{Name: name, Func: fn} }
