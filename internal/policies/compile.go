package policies

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// MaxTextBytes bounds one scope's text.
const MaxTextBytes = 256 << 10

// Problem is one thing wrong with a text: where (line and column, from 1;
// 0 when the parser did not say) and why.
type Problem struct {
	Line    int    `json:"line"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Line == 0 {
		return p.Message
	}
	return fmt.Sprintf("line %d: %s", p.Line, p.Message)
}

// InvalidError is a text Compile refuses, with every problem found.
type InvalidError struct {
	Scope    string
	Problems []Problem
}

func (e *InvalidError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return fmt.Sprintf("the policies of %s are invalid: %s", e.Scope, strings.Join(parts, "; "))
}

// Policy is one compiled policy of a Document.
type Policy struct {
	// ID is SCOPE#ID: the policy's @id, or policyN by its place.
	ID     string
	Forbid bool
	Line   int
	// Reason is a forbid's @reason.
	Reason string
	// Approval is what a permit with @groups requires; nil: it allows.
	Approval *wire.PolicyApproval
	cedar    *cedar.Policy
}

// Document is one scope's text, parsed and validated.
type Document struct {
	Scope    Scope
	Policies []Policy
}

// The annotations a policy may carry.
var annotationKeys = []string{"id", "reason", "groups", "quorum", "deadline", "on_deadline", "escalate_to", "escalate_deadline", "title"}

var policyID = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// Compile parses text as the policies of scope and validates each against
// Schema and a2aflow's annotations. A text it refuses gives an
// *InvalidError naming the line and reason of each problem. An empty text
// is a document without policies.
func Compile(scope, text string) (*Document, error) {
	sc, err := ParseScope(scope)
	if err != nil {
		return nil, &InvalidError{Scope: scope, Problems: []Problem{{Message: err.Error()}}}
	}
	if len(text) > MaxTextBytes {
		return nil, &InvalidError{Scope: scope, Problems: []Problem{{Message: fmt.Sprintf("the text is %d bytes, more than %d", len(text), MaxTextBytes)}}}
	}
	set, err := cedar.NewPolicySetFromBytes(scope, []byte(text))
	if err != nil {
		return nil, &InvalidError{Scope: scope, Problems: []Problem{parseProblem(err)}}
	}
	v, err := schemaValidator()
	if err != nil {
		return nil, err
	}
	doc := &Document{Scope: sc}
	var problems []Problem
	seen := map[string]int{}
	type entry struct {
		id string
		p  *cedar.Policy
	}
	var entries []entry
	for id, p := range set.All() {
		entries = append(entries, entry{string(id), p})
	}
	// In the text's order: a duplicate @id is the later one.
	slices.SortFunc(entries, func(a, b entry) int { return a.p.Position().Offset - b.p.Position().Offset })
	for _, e := range entries {
		id, p := e.id, e.p
		line := p.Position().Line
		pol, probs := compilePolicy(sc, id, p)
		if err := v.Policy(id, (*xast.Policy)(p.AST())); err != nil {
			probs = append(probs, validationProblems(line, err)...)
		}
		if first, dup := seen[pol.ID]; dup {
			probs = append(probs, Problem{Line: line, Message: fmt.Sprintf("the @id of the policy of line %d is taken", first)})
		}
		seen[pol.ID] = line
		problems = append(problems, probs...)
		doc.Policies = append(doc.Policies, pol)
	}
	if len(problems) > 0 {
		slices.SortStableFunc(problems, func(a, b Problem) int { return a.Line - b.Line })
		return nil, &InvalidError{Scope: scope, Problems: problems}
	}
	slices.SortFunc(doc.Policies, func(a, b Policy) int { return a.Line - b.Line })
	return doc, nil
}

var parsePosition = regexp.MustCompile(`:(\d+):(\d+)[: ]`)

// parseProblem reads the line and column out of the parser's error.
func parseProblem(err error) Problem {
	msg := err.Error()
	p := Problem{Message: msg}
	if m := parsePosition.FindStringSubmatch(msg); m != nil {
		p.Line, _ = strconv.Atoi(m[1])
		p.Column, _ = strconv.Atoi(m[2])
	}
	return p
}

// validationProblems are the validator's complaints about the policy of
// line, one problem each.
func validationProblems(line int, err error) []Problem {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var out []Problem
	for _, e := range errs {
		msg := e.Error()
		// "for policy `policy1`, attribute ...": the line says which.
		if _, rest, ok := strings.Cut(msg, "`, "); ok && strings.HasPrefix(msg, "for policy `") {
			msg = rest
		}
		for m := range strings.SplitSeq(msg, "\n") {
			if m = strings.TrimSpace(m); m != "" {
				out = append(out, Problem{Line: line, Message: m})
			}
		}
	}
	return out
}

// compilePolicy reads a policy's annotations.
func compilePolicy(sc Scope, id string, p *cedar.Policy) (Policy, []Problem) {
	line := p.Position().Line
	ann := p.Annotations()
	pol := Policy{Forbid: p.Effect() == cedar.Forbid, Line: line, cedar: p}
	var problems []Problem
	bad := func(format string, args ...any) {
		problems = append(problems, Problem{Line: line, Message: fmt.Sprintf(format, args...)})
	}
	for k := range ann {
		if !slices.Contains(annotationKeys, string(k)) {
			bad("unknown annotation @%s (want one of @%s)", k, strings.Join(annotationKeys, ", @"))
		}
	}
	if own := string(ann["id"]); own != "" {
		if !policyID.MatchString(own) {
			bad("@id(%q): want 1 to 64 letters, digits or _ . : -", own)
		}
		id = own
	}
	pol.ID = sc.String() + "#" + id
	pol.Reason = string(ann["reason"])
	_, hasGroups := ann["groups"]
	if pol.Forbid {
		for _, k := range []string{"groups", "quorum", "deadline", "on_deadline", "escalate_to", "escalate_deadline", "title"} {
			if _, ok := ann[types.AnnotationKey(k)]; ok {
				bad("@%s on a forbid: a forbid denies; a permit with @groups requires an approval", k)
			}
		}
		return pol, problems
	}
	if !hasGroups {
		for _, k := range []string{"quorum", "deadline", "on_deadline", "escalate_to", "escalate_deadline", "title"} {
			if _, ok := ann[types.AnnotationKey(k)]; ok {
				bad("@%s without @groups: only a permit with @groups requires an approval", k)
			}
		}
		return pol, problems
	}
	a, errs := approvalOf(ann)
	for _, err := range errs {
		bad("%v", err)
	}
	a.Policy = pol.ID
	pol.Approval = &a
	return pol, problems
}

// approvalOf reads the approval a permit's annotations require.
func approvalOf(ann cedar.Annotations) (wire.PolicyApproval, []error) {
	var a wire.PolicyApproval
	var errs []error
	a.Groups = splitList(string(ann["groups"]))
	if len(a.Groups) == 0 {
		errs = append(errs, errors.New("@groups names no group (want @groups(\"finance\") or @groups(\"finance,cfo\"))"))
	}
	if q := string(ann["quorum"]); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 1 || n > 100 {
			errs = append(errs, fmt.Errorf("@quorum(%q): want a number from 1 to 100", q))
		}
		a.Quorum = n
	}
	for key, to := range map[string]*time.Duration{"deadline": &a.Deadline, "escalate_deadline": &a.EscalateDeadline} {
		if d := string(ann[types.AnnotationKey(key)]); d != "" {
			v, err := time.ParseDuration(d)
			if err != nil || v <= 0 {
				errs = append(errs, fmt.Errorf("@%s(%q): want a positive duration such as 48h or 30m", key, d))
			}
			*to = v
		}
	}
	a.OnDeadline = string(ann["on_deadline"])
	a.EscalateTo = splitList(string(ann["escalate_to"]))
	switch a.OnDeadline {
	case "", "reject", "approve":
	case "escalate":
		if len(a.EscalateTo) == 0 {
			errs = append(errs, errors.New("@on_deadline(\"escalate\") needs @escalate_to"))
		}
	default:
		errs = append(errs, fmt.Errorf("@on_deadline(%q): want reject, approve or escalate", a.OnDeadline))
	}
	if a.OnDeadline != "" && a.Deadline == 0 {
		errs = append(errs, errors.New("@on_deadline without @deadline"))
	}
	a.Title = string(ann["title"])
	return a, errs
}

// splitList reads "a, b,c" as [a b c].
func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ",") {
		if part = strings.TrimSpace(part); part != "" && !slices.Contains(out, part) {
			out = append(out, part)
		}
	}
	return out
}
