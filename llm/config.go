package llm

import (
	"fmt"
	"os"
	"strings"
)

// Environment variables read by FromEnv.
const (
	// EnvProvider chooses the provider when both are configured: "openai"
	// or "anthropic". Optional.
	EnvProvider = "A2AFLOW_LLM_PROVIDER"
	// EnvModel is the model every call uses unless it names its own.
	EnvModel = "A2AFLOW_LLM_MODEL"
	// EnvOpenAIBaseURL is the base URL of an OpenAI-compatible endpoint.
	EnvOpenAIBaseURL = "OPENAI_BASE_URL"
	// EnvOpenAIAPIKey is its API key (optional for local servers).
	EnvOpenAIAPIKey = "OPENAI_API_KEY"
	// EnvAnthropicAPIKey is the Anthropic API key.
	EnvAnthropicAPIKey = "ANTHROPIC_API_KEY"
	// EnvAnthropicBaseURL overrides the Anthropic endpoint (a proxy or a test server).
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL"
)

// FromEnv returns the provider the environment configures:
//
//   - OpenAI-compatible when OPENAI_BASE_URL or OPENAI_API_KEY is set
//     (Ollama, vLLM and llama.cpp need only the base URL);
//   - Anthropic when ANTHROPIC_API_KEY is set;
//   - A2AFLOW_LLM_PROVIDER ("openai" or "anthropic") chooses when both are;
//   - A2AFLOW_LLM_MODEL sets the model (defaults: gpt-4o-mini, claude-sonnet-4-5).
//
// It returns an error wrapping [ErrNotConfigured] when none is configured, so
// the caller can run without LLM agents, and another error for a setting it
// cannot use. The API key is never part of an error.
func FromEnv() (Provider, error) {
	return fromEnv(os.Getenv)
}

// ConfiguredProviders returns every provider the environment configures,
// by name: "openai" when OPENAI_BASE_URL or OPENAI_API_KEY is set,
// "anthropic" when ANTHROPIC_API_KEY is, each with A2AFLOW_LLM_MODEL as its
// model. A call chooses one with [WithProvider].
func ConfiguredProviders() map[string]Provider {
	return configuredProviders(os.Getenv)
}

func configuredProviders(getenv func(string) string) map[string]Provider {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	out := map[string]Provider{}
	if get(EnvOpenAIBaseURL) != "" || get(EnvOpenAIAPIKey) != "" {
		out["openai"] = NewOpenAI(OpenAIConfig{BaseURL: get(EnvOpenAIBaseURL), APIKey: get(EnvOpenAIAPIKey), Model: get(EnvModel)})
	}
	if get(EnvAnthropicAPIKey) != "" {
		out["anthropic"] = NewAnthropic(AnthropicConfig{BaseURL: get(EnvAnthropicBaseURL), APIKey: get(EnvAnthropicAPIKey), Model: get(EnvModel)})
	}
	return out
}

func fromEnv(getenv func(string) string) (Provider, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	hasOpenAI := get(EnvOpenAIBaseURL) != "" || get(EnvOpenAIAPIKey) != ""
	hasAnthropic := get(EnvAnthropicAPIKey) != ""
	choice := strings.ToLower(get(EnvProvider))
	switch choice {
	case "":
		switch {
		case hasOpenAI:
			choice = "openai"
		case hasAnthropic:
			choice = "anthropic"
		default:
			return nil, ErrNotConfigured
		}
	case "openai":
		if !hasOpenAI {
			return nil, fmt.Errorf("%s=openai but neither %s nor %s is set: %w", EnvProvider, EnvOpenAIBaseURL, EnvOpenAIAPIKey, ErrNotConfigured)
		}
	case "anthropic":
		if !hasAnthropic {
			return nil, fmt.Errorf("%s=anthropic but %s is not set: %w", EnvProvider, EnvAnthropicAPIKey, ErrNotConfigured)
		}
	default:
		return nil, fmt.Errorf("%s=%q: want openai or anthropic", EnvProvider, choice)
	}
	if choice == "openai" {
		return NewOpenAI(OpenAIConfig{BaseURL: get(EnvOpenAIBaseURL), APIKey: get(EnvOpenAIAPIKey), Model: get(EnvModel)}), nil
	}
	return NewAnthropic(AnthropicConfig{BaseURL: get(EnvAnthropicBaseURL), APIKey: get(EnvAnthropicAPIKey), Model: get(EnvModel)}), nil
}
