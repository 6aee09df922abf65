package models

import (
	"fmt"
	"time"
)

// OAuthLogin is an OAuth 2.0 login a2aflow made to call a remote agent as a
// user (a2aflow agents login): the authorization server's endpoints, the
// client, and the tokens it gave. Every secret field holds a value sealed
// with the secrets key (package secrets), bound to the login's name and
// field, never the value in clear; package oauthlogin seals and opens them.
//
// Version and LeaseUntil/LeaseHolder serialise refreshes across processes:
// a refresh takes the lease by a conditional update on Version, so that two
// workers never redeem the same refresh token (see oauthlogin.Store).
type OAuthLogin struct {
	// Name is the login's name, the auth reference a directory entry or
	// --auth-ref names it by.
	Name string `gorm:"primaryKey;size:200" json:"name"`
	// AgentURL is the agent the login was made for.
	AgentURL string `gorm:"not null;default:''" json:"agentUrl"`
	// Hosts are the hosts its access token is sent to, comma-separated
	// ("host" or "host:port").
	Hosts string `gorm:"not null;default:''" json:"hosts"`
	// The authorization server: authorization, token, device authorization
	// and revocation endpoints (the last two may be empty).
	AuthURL       string `gorm:"not null;default:''" json:"authUrl"`
	TokenURL      string `gorm:"not null;default:''" json:"tokenUrl"`
	DeviceURL     string `gorm:"not null;default:''" json:"deviceUrl,omitempty"`
	RevocationURL string `gorm:"not null;default:''" json:"revocationUrl,omitempty"`
	// ClientID is the OAuth client a2aflow logged in as; ClientSecret, sealed,
	// is empty for a public client (PKCE alone).
	ClientID     string `gorm:"not null;default:''" json:"clientId"`
	ClientSecret string `gorm:"type:text;not null;default:''" json:"-"`
	// Scopes were asked for, space-separated.
	Scopes string `gorm:"not null;default:''" json:"scopes"`
	// AccessToken and RefreshToken are sealed; TokenType and Expiry are the
	// access token's.
	AccessToken  string    `gorm:"type:text;not null;default:''" json:"-"`
	RefreshToken string    `gorm:"type:text;not null;default:''" json:"-"`
	TokenType    string    `gorm:"not null;default:''" json:"tokenType"`
	Expiry       time.Time `json:"expiry"`
	// Version grows with every change of the tokens and every lease taken.
	Version int64 `gorm:"not null;default:0" json:"version"`
	// LeaseUntil and LeaseHolder: the process refreshing the tokens now,
	// and until when the others wait for it.
	LeaseUntil  time.Time `json:"-"`
	LeaseHolder string    `gorm:"not null;default:''" json:"-"`
	// Refreshes counts the refreshes made since the login.
	Refreshes int64     `gorm:"not null;default:0" json:"refreshes"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// TableName is oauth_logins.
func (OAuthLogin) TableName() string { return "oauth_logins" }

// SetAgentAuthRef sets the auth reference of the shared entry called name
// (an OAuth login made for it); ErrNotFound if there is none.
func (s *Store) SetAgentAuthRef(name, ref string) error {
	res := SharedScope.in(s.db).Model(&RemoteAgent{}).Where("name = ?", name).Update("auth_ref", ref)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("agent %s: %w", name, ErrNotFound)
	}
	return nil
}
