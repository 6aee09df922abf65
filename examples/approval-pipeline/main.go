// Command approval-pipeline serves two A2A agents from one binary, each task
// a durable Temporal workflow: purchase-order (the default agent, at / and
// /agents/purchase-order) and quotes (/agents/quotes). See README.md.
//
//	go run ./cmd/fake-supplier &
//	go run . serve --peer quotes=http://localhost:8080/agents/quotes --approver-groups 'maria:managers;frank:finance'
package main

import (
	"fmt"
	"os"

	"github.com/a2aflow/a2aflow"
)

func main() {
	// SUPPLIER_URL is read by every command (serve, worker, send...) but
	// only the worker calls the supplier.
	supplier, err := NewSupplier(os.Getenv("SUPPLIER_URL"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	a2aflow.Main(PurchaseOrder(Config{Supplier: supplier}), Quotes(), Buyer(Config{Supplier: supplier}))
}
