package client

import (
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// bindings maps the --binding names to A2A protocol bindings.
var bindings = map[string]a2a.TransportProtocol{
	"jsonrpc":   a2a.TransportProtocolJSONRPC,
	"rest":      a2a.TransportProtocolHTTPJSON,
	"http+json": a2a.TransportProtocolHTTPJSON,
	"grpc":      a2a.TransportProtocolGRPC,
}

// forceTransport returns card with only the interfaces of binding and
// protocol version (either may be empty: any), so that a2a-go's client
// factory can pick no other; an agent that offers none of them is an error
// naming what it offers.
func forceTransport(card *a2a.AgentCard, binding, version string) (*a2a.AgentCard, error) {
	if binding == "" && version == "" {
		return card, nil
	}
	var want a2a.TransportProtocol
	if binding != "" {
		b, ok := bindings[strings.ToLower(binding)]
		if !ok {
			return nil, fmt.Errorf("--binding %s: use jsonrpc, rest or grpc", binding)
		}
		want = b
	}
	if version != "" && version != "1.0" && version != "0.3" {
		return nil, fmt.Errorf("--protocol-version %s: use 1.0 or 0.3", version)
	}
	forced := *card
	forced.SupportedInterfaces = nil
	var offered []string
	for _, i := range card.SupportedInterfaces {
		if i == nil {
			continue
		}
		v := string(i.ProtocolVersion)
		if v == "" {
			v = "1.0"
		}
		offered = append(offered, fmt.Sprintf("%s %s", i.ProtocolBinding, v))
		if (want == "" || i.ProtocolBinding == want) && (version == "" || v == version || strings.HasPrefix(v, version+".")) {
			forced.SupportedInterfaces = append(forced.SupportedInterfaces, i)
		}
	}
	if len(forced.SupportedInterfaces) == 0 {
		return nil, fmt.Errorf("agent %s offers no %s interface; it offers %s",
			card.Name, strings.TrimSpace(binding+" "+version), strings.Join(offered, ", "))
	}
	return &forced, nil
}
