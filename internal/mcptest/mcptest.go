// Package mcptest is an MCP server for a2aflow's tests, built with the
// official Go SDK: a payments service whose tools a gated LLM agent calls.
// It serves streamable HTTP (Handler) or stdio (Serve), and records the
// payments it makes in a ledger, one per idempotency key, so that a test
// counts the payments the tool's side made, whatever was retried or killed.
//
// Tools:
//   - pay_invoice {invoice, amount, currency}: pays once per idempotency key
//     (the request's _meta wire.MCPIdempotencyKeyMeta); a call that carries
//     none pays every time. With Hold set, it waits for Release (or its
//     context) before paying: a test kills the worker mid-call.
//   - refuse {reason}: answers an error result (isError) with the reason.
//   - report: answers text, an image, an embedded text resource, a resource
//     link and structured content.
//   - list_invoices: the invoices paid so far; annotated read-only.
//   - void_invoice {invoice}: says it voided it; annotated destructive.
package mcptest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// PayInvoice is pay_invoice's argument.
type PayInvoice struct {
	Invoice  string  `json:"invoice" jsonschema:"the invoice's number"`
	Amount   float64 `json:"amount" jsonschema:"the amount to pay"`
	Currency string  `json:"currency,omitempty" jsonschema:"ISO currency, default EUR"`
}

// Payment is one payment the server made.
type Payment struct {
	Key      string  `json:"key"`
	Invoice  string  `json:"invoice"`
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// VoidInvoice is void_invoice's argument.
type VoidInvoice struct {
	Invoice string `json:"invoice" jsonschema:"the invoice's number"`
}

// Refuse is refuse's argument.
type Refuse struct {
	Reason string `json:"reason"`
}

// Payments is the server's state.
type Payments struct {
	// Ledger, when set, is a file the payments are appended to, one JSON
	// line each: it outlives the process (a test killing servers reads it).
	Ledger string
	// Hold makes pay_invoice wait for Release before paying.
	Hold bool
	// Delay is how long pay_invoice works before it answers (a payment
	// provider's latency).
	Delay time.Duration

	mu      sync.Mutex
	paid    map[string]Payment
	calls   int
	release chan struct{}
	started chan struct{}
}

// Calls returns how many pay_invoice calls came, retries included.
func (p *Payments) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// Paid returns the payments made, one per key.
func (p *Payments) Paid() []Payment {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Payment, 0, len(p.paid))
	for _, pay := range p.paid {
		out = append(out, pay)
	}
	// By invoice, then key: the same list however the map iterates.
	slices.SortFunc(out, func(a, b Payment) int {
		return cmp.Or(strings.Compare(a.Invoice, b.Invoice), strings.Compare(a.Key, b.Key))
	})
	return out
}

// SetHold sets Hold, while calls may be under way.
func (p *Payments) SetHold(hold bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.Hold = hold
}

// Started receives once a held pay_invoice call has started.
func (p *Payments) Started() <-chan struct{} {
	p.init()
	return p.started
}

// Release lets held pay_invoice calls pay.
func (p *Payments) Release() {
	p.init()
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.release:
	default:
		close(p.release)
	}
}

func (p *Payments) init() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.release == nil {
		p.release, p.started = make(chan struct{}), make(chan struct{}, 16)
	}
}

func (p *Payments) pay(ctx context.Context, req *mcp.CallToolRequest, in PayInvoice) (*mcp.CallToolResult, any, error) {
	p.init()
	key, _ := req.Params.GetMeta()[wire.MCPIdempotencyKeyMeta].(string)
	p.mu.Lock()
	p.calls++
	hold := p.Hold
	p.mu.Unlock()
	if hold {
		select {
		case p.started <- struct{}{}:
		default:
		}
		select {
		case <-p.release:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	if p.Delay > 0 {
		select {
		case <-time.After(p.Delay):
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
	if in.Currency == "" {
		in.Currency = "EUR"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paid == nil {
		p.paid = map[string]Payment{}
	}
	if key == "" {
		key = fmt.Sprintf("no-key-%d", p.calls)
	}
	pay, done := p.paid[key]
	if !done {
		pay = Payment{Key: key, Invoice: in.Invoice, Amount: in.Amount, Currency: in.Currency}
		p.paid[key] = pay
		if p.Ledger != "" {
			f, err := os.OpenFile(p.Ledger, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
			if err != nil {
				return nil, nil, err
			}
			line, _ := json.Marshal(pay)
			_, err = f.Write(append(line, '\n'))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return nil, nil, err
			}
		}
	}
	text := fmt.Sprintf("paid invoice %s: %.2f %s (payment %s)", pay.Invoice, pay.Amount, pay.Currency, pay.Key)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

// Server returns the MCP server over p.
func (p *Payments) Server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "payments", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "pay_invoice", Description: "Pays an invoice."}, p.pay)
	mcp.AddTool(s, &mcp.Tool{Name: "refuse", Description: "Refuses, with a reason."},
		func(_ context.Context, _ *mcp.CallToolRequest, in Refuse) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "refused: " + in.Reason}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "list_invoices", Description: "Lists the invoices paid so far.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			var names []string
			for _, pay := range p.Paid() {
				names = append(names, pay.Invoice)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("paid: %v", names)}}}, nil, nil
		})
	destructive := true
	mcp.AddTool(s, &mcp.Tool{Name: "void_invoice", Description: "Voids an invoice.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: &destructive}},
		func(_ context.Context, _ *mcp.CallToolRequest, in VoidInvoice) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "voided " + in.Invoice}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "report", Description: "A report in every kind of content."},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{
				Content: []mcp.Content{
					&mcp.TextContent{Text: "quarterly report"},
					&mcp.ImageContent{MIMEType: "image/png", Data: []byte("not really a png")},
					&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "report://q3", MIMEType: "text/plain", Text: "revenue up"}},
					&mcp.ResourceLink{URI: "report://q3.pdf", Name: "q3.pdf", MIMEType: "application/pdf"},
				},
				StructuredContent: map[string]any{"revenue": 42},
			}, nil, nil
		})
	return s
}

// Handler serves the server over streamable HTTP.
func (p *Payments) Handler() http.Handler {
	s := p.Server()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
}

// Serve serves the server over stdio until its input ends.
func (p *Payments) Serve(ctx context.Context) error {
	return p.Server().Run(ctx, &mcp.StdioTransport{})
}
