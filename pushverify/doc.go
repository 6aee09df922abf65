// Package pushverify checks, at a webhook, that a push notification comes
// from an a2aflow server: each delivery carries a JWT in the
// A2A-Notification-JWT header (or, when the push config asks for the Bearer
// scheme without credentials of its own, in Authorization: Bearer), signed
// with the server's card signing key, whose public half the server serves
// at /.well-known/jwks.json.
//
// A [Verifier] fetches that key set over HTTP (refetching it when a token
// names a key it has not seen, as after a rotation) and checks a delivery:
// the signature, the token's type, its issuer (the server), its audience
// (this webhook), its time window, and that the body is the one signed (its
// SHA-256). Given a [ReplayCache] it also refuses a token it has seen
// before, so a captured delivery cannot be played again.
//
//	v, err := pushverify.New(ctx, "https://agents.example/.well-known/jwks.json", pushverify.Options{
//		Audience: "https://hooks.example/a2a",
//		Replay:   pushverify.NewMemoryReplayCache(),
//	})
//	...
//	func(w http.ResponseWriter, r *http.Request) {
//		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
//		claims, err := v.Verify(r.Context(), r, body)
//		if err != nil {
//			http.Error(w, "not a genuine notification", http.StatusUnauthorized)
//			return
//		}
//		// claims.TaskID, claims.Seq: the event, as the body holds it.
//	}
//
// The package is small on purpose: a receiver imports it without linking
// the rest of a2aflow (the embedded Temporal server among it).
package pushverify
