package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/a2aflow/a2aflow/internal/cli/cmdutil"
	"github.com/a2aflow/a2aflow/pushverify"
)

// maxVerifyInput bounds a request or body read by push verify.
const maxVerifyInput = 16 << 20

// newPushVerifyCmd returns `push verify`: check a push notification a
// webhook received against the signing keys of the a2aflow that sent it,
// as a receiver does with package pushverify.
func newPushVerifyCmd() *cobra.Command {
	var issuer, jwks, audience, requestFile, token, bodyFile, at string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify --issuer URL --audience WEBHOOK_URL (--request FILE | --token JWT --body FILE)",
		Short: "Check that a push notification was signed by an a2aflow server",
		Long: `Check a push notification a webhook received: its signed token (the A2A-Notification-JWT
header, or Authorization: Bearer) against the key set of the a2aflow server that sent it, fetched
from --jwks (default <--issuer>/.well-known/jwks.json): the signature, the issuer, the audience
(--audience, the webhook URL of the push config), the time window (--at for a notification
captured earlier) and the SHA-256 of the body, which must be byte for byte the body received.

Give the notification as the raw HTTP request received (--request FILE, - for stdin: request
line, headers, blank line, body), or as its token and body (--token, --body FILE).
Prints the task, the event's number and the key; exits 1 when it does not verify.

  a2aflow push verify --issuer https://agents.example --audience https://hooks.example/a2a --request captured.http`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if jwks == "" {
				if issuer == "" {
					return errors.New("give --issuer, the sending server's public URL (or --jwks, its key set's URL)")
				}
				jwks = strings.TrimSuffix(issuer, "/") + pushverify.JWKSPath
			}
			if audience == "" {
				return errors.New("give --audience, the webhook URL of the push config")
			}
			opts := pushverify.Options{Issuer: strings.TrimSuffix(issuer, "/"), Audience: audience}
			if at != "" {
				when, err := time.Parse(time.RFC3339, at)
				if err != nil {
					return fmt.Errorf("--at: want an RFC 3339 time such as 2026-07-01T12:00:00Z: %w", err)
				}
				opts.Now = func() time.Time { return when }
			}
			req, body, err := readNotification(cmd.InOrStdin(), requestFile, token, bodyFile)
			if err != nil {
				return err
			}
			v, err := pushverify.New(cmd.Context(), jwks, opts)
			if err != nil {
				return err
			}
			claims, err := v.Verify(cmd.Context(), req, body)
			if err != nil {
				return &cmdutil.ExitError{Code: cmdutil.ExitOther, Err: fmt.Errorf("the notification does not verify: %w", err)}
			}
			if asJSON {
				return cmdutil.PrintJSON(cmd.OutOrStdout(), claims)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "Verified: task %s, event %d, signed by key %s of %s\n", claims.TaskID, claims.Seq, claims.KeyID, claims.Issuer)
			fmt.Fprintf(w, "For %s, token %s, issued %s, expires %s\n", claims.Audience, claims.ID,
				claims.IssuedAt.UTC().Format(time.RFC3339), claims.ExpiresAt.UTC().Format(time.RFC3339))
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&issuer, "issuer", "", "public URL of the a2aflow server that sent the notification (its --public-url): the token's iss")
	fs.StringVar(&jwks, "jwks", "", "URL of the server's key set; default <--issuer>/.well-known/jwks.json")
	fs.StringVar(&audience, "audience", "", "the webhook URL the notification was sent to, as in the push config (its query is ignored)")
	fs.StringVar(&requestFile, "request", "", "file holding the raw HTTP request received, - for stdin")
	fs.StringVar(&token, "token", "", "the notification's token (its A2A-Notification-JWT header), with --body")
	fs.StringVar(&bodyFile, "body", "", "file holding the body received, byte for byte, - for stdin; with --token")
	fs.StringVar(&at, "at", "", "check the token as of this time (RFC 3339), e.g. when a captured notification arrived; default now")
	fs.BoolVar(&asJSON, "json", false, "print the verified claims as JSON")
	return cmd
}

// readNotification returns the notification to verify, from a raw HTTP
// request or from a token and a body.
func readNotification(stdin io.Reader, requestFile, token, bodyFile string) (*http.Request, []byte, error) {
	open := func(name string) ([]byte, error) {
		var r io.Reader = stdin
		if name != "-" {
			f, err := os.Open(name)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			r = f
		}
		raw, err := io.ReadAll(io.LimitReader(r, maxVerifyInput+1))
		if err == nil && len(raw) > maxVerifyInput {
			err = fmt.Errorf("%s is larger than %d bytes", name, maxVerifyInput)
		}
		return raw, err
	}
	switch {
	case requestFile != "" && (token != "" || bodyFile != ""):
		return nil, nil, errors.New("give --request, or --token and --body, not both")
	case requestFile != "":
		raw, err := open(requestFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--request: %w", err)
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
		if err != nil {
			return nil, nil, fmt.Errorf("--request %s is not an HTTP request: %w", requestFile, err)
		}
		body, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, nil, fmt.Errorf("--request %s: body: %w", requestFile, err)
		}
		return req, body, nil
	case token != "" && bodyFile != "":
		body, err := open(bodyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("--body: %w", err)
		}
		req, _ := http.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set(pushverify.Header, token)
		return req, body, nil
	default:
		return nil, nil, errors.New("give the notification: --request FILE, or --token JWT and --body FILE")
	}
}
