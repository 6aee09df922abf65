package llm

import (
	"fmt"
	"os"
	"strings"
)

// Environment variables read by FromEnv.
const (
	// EnvProvider chooses the provider when several are configured:
	// "openai", "anthropic" or "gemini". Optional.
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
	// EnvGeminiAPIKey is the Gemini API key (Google AI Studio).
	EnvGeminiAPIKey = "GEMINI_API_KEY"
	// EnvGoogleAPIKey is Google's other name for it; it wins when both
	// are set, as in Google's SDKs.
	EnvGoogleAPIKey = "GOOGLE_API_KEY"
	// EnvGeminiBaseURL overrides the Gemini endpoint (a proxy or a test
	// server): the variable of Google's SDKs.
	EnvGeminiBaseURL = "GOOGLE_GEMINI_BASE_URL"
)

// geminiKey is the Gemini API key the environment holds: GOOGLE_API_KEY,
// else GEMINI_API_KEY.
func geminiKey(get func(string) string) string {
	if k := get(EnvGoogleAPIKey); k != "" {
		return k
	}
	return get(EnvGeminiAPIKey)
}

func newGeminiFromEnv(get func(string) string) *Gemini {
	return NewGemini(GeminiConfig{BaseURL: get(EnvGeminiBaseURL), APIKey: geminiKey(get), Model: get(EnvModel)})
}

// FromEnv returns the provider the environment configures:
//
//   - OpenAI-compatible when OPENAI_BASE_URL or OPENAI_API_KEY is set
//     (Ollama, vLLM and llama.cpp need only the base URL);
//   - Anthropic when ANTHROPIC_API_KEY is set;
//   - Gemini when GEMINI_API_KEY or GOOGLE_API_KEY is set (GOOGLE_GEMINI_BASE_URL
//     overrides its endpoint);
//   - A2AFLOW_LLM_PROVIDER ("openai", "anthropic" or "gemini") chooses when
//     several are, in that order otherwise;
//   - A2AFLOW_LLM_MODEL sets the model (defaults: gpt-4o-mini,
//     claude-sonnet-4-5, gemini-2.5-flash).
//
// It returns an error wrapping [ErrNotConfigured] when none is configured, so
// the caller can run without LLM agents, and another error for a setting it
// cannot use. The API key is never part of an error.
func FromEnv() (Provider, error) {
	return fromEnv(os.Getenv)
}

// ConfiguredProviders returns every provider the environment configures,
// by name: "openai" when OPENAI_BASE_URL or OPENAI_API_KEY is set,
// "anthropic" when ANTHROPIC_API_KEY is, "gemini" when GEMINI_API_KEY or
// GOOGLE_API_KEY is, each with A2AFLOW_LLM_MODEL as its model. A call
// chooses one with [WithProvider].
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
	if geminiKey(get) != "" {
		out["gemini"] = newGeminiFromEnv(get)
	}
	return out
}

func fromEnv(getenv func(string) string) (Provider, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	hasOpenAI := get(EnvOpenAIBaseURL) != "" || get(EnvOpenAIAPIKey) != ""
	hasAnthropic := get(EnvAnthropicAPIKey) != ""
	hasGemini := geminiKey(get) != ""
	choice := strings.ToLower(get(EnvProvider))
	switch choice {
	case "":
		switch {
		case hasOpenAI:
			choice = "openai"
		case hasAnthropic:
			choice = "anthropic"
		case hasGemini:
			choice = "gemini"
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
	case "gemini":
		if !hasGemini {
			return nil, fmt.Errorf("%s=gemini but neither %s nor %s is set: %w", EnvProvider, EnvGeminiAPIKey, EnvGoogleAPIKey, ErrNotConfigured)
		}
		return newGeminiFromEnv(get), nil
	default:
		return nil, fmt.Errorf("%s=%q: want openai, anthropic or gemini", EnvProvider, choice)
	}
	if choice == "gemini" {
		return newGeminiFromEnv(get), nil
	}
	if choice == "openai" {
		return NewOpenAI(OpenAIConfig{BaseURL: get(EnvOpenAIBaseURL), APIKey: get(EnvOpenAIAPIKey), Model: get(EnvModel)}), nil
	}
	return NewAnthropic(AnthropicConfig{BaseURL: get(EnvAnthropicBaseURL), APIKey: get(EnvAnthropicAPIKey), Model: get(EnvModel)}), nil
}
