package server

import (
	"fmt"
	"io"
	"net"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/internal/temporalserver"
)

// printout is what a process says on standard output once it serves: what
// serves where.
type printout struct {
	cfg            *config
	r              roles
	ln, grpcLn     net.Listener
	srv            *temporalserver.Server
	frontendListen string
	hintsFrom      string
	peers          []peer
}

func (p printout) write(w io.Writer) {
	cfg, srv := p.cfg, p.srv
	switch {
	case p.r.api && p.r.worker: // serve
		base := httpURL(p.ln)
		fmt.Fprintf(w, "a2aflow is serving\n")
		fmt.Fprintf(w, "  A2A API      %s  (agents: %v; default card %s/.well-known/agent-card.json)\n", base, cfg.agentNames(), base)
		if p.grpcLn != nil {
			fmt.Fprintf(w, "  A2A gRPC     %s  (A2A 1.0 and 0.3; an agent is the tenant of its requests)\n", p.grpcLn.Addr())
		}
		if srv.UIURL() != "" {
			fmt.Fprintf(w, "  Temporal UI  %s/namespaces/%s/workflows%s\n", srv.UIURL(), srv.Namespace(), cfg.UI.notes(cfg.UIAddr))
		}
		fmt.Fprintf(w, "  Temporal     %s  (namespace %s%s)\n", srv.FrontendAddr(), srv.Namespace(), cfg.Conn.frontendNote(p.frontendListen, srv))
		fmt.Fprintf(w, "  Data dir     %s\n", cmdutil.AbsPath(cfg.DataDir))
		for _, peer := range p.peers {
			fmt.Fprintf(w, "  Peer         %s = %s\n", peer.Name, peer.URL)
		}
	case p.r.api:
		fmt.Fprintf(w, "a2aflow API is serving\n  A2A API      %s\n", httpURL(p.ln))
		if p.grpcLn != nil {
			fmt.Fprintf(w, "  A2A gRPC     %s\n", p.grpcLn.Addr())
		}
		fmt.Fprintf(w, "  Temporal     %s  (namespace %s)\n", cfg.TemporalAddr, cfg.Namespace)
		if p.hintsFrom != "" {
			fmt.Fprintf(w, "  Hints        %s\n", p.hintsFrom)
		}
	case p.r.worker:
		fmt.Fprintf(w, "a2aflow worker is running\n  Temporal     %s  (namespace %s, task queue %s)\n", cfg.TemporalAddr, cfg.Namespace, cfg.TaskQueue)
	default: // temporal
		fmt.Fprintf(w, "Temporal is serving\n  Temporal     %s  (namespace %s%s)\n", srv.FrontendAddr(), srv.Namespace(), cfg.Conn.frontendNote(p.frontendListen, srv))
		if srv.UIURL() != "" {
			fmt.Fprintf(w, "  Temporal UI  %s%s\n", srv.UIURL(), cfg.UI.notes(cfg.UIAddr))
		}
		fmt.Fprintf(w, "  Data dir     %s\n", cmdutil.AbsPath(cfg.DataDir))
	}
}
