package llm

import (
	"encoding/base64"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"go.temporal.io/sdk/workflow"

	"github.com/a2aflow/a2aflow/internal/wire"
)

// File is a file the user gave the model, from an A2A file part: an image
// and a PDF reach the providers as image and document content, a text file
// as text, anything else as a line naming it.
type File struct {
	// Name is the file's name, when the part had one.
	Name string `json:"name,omitempty"`
	// MediaType is the file's media type ("image/png", "application/pdf").
	MediaType string `json:"mediaType,omitempty"`
	// Data is the file's content.
	Data []byte `json:"data,omitempty"`
	// URI is where the file is, for a file part given by URI. The tool loop
	// fetches it (the FetchFile activity) before the first LLM call; a file
	// that has only a URI reaches the model as a line naming it.
	URI string `json:"uri,omitempty"`
}

// fileKind is how a provider is given a File.
type fileKind int

const (
	fileOther fileKind = iota
	fileImage
	filePDF
	fileText
)

// imageTypes are the image types both OpenAI and Anthropic read.
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// kind says how f is given to a model: only files with content are images,
// PDFs or text.
func (f File) kind() fileKind {
	if len(f.Data) == 0 {
		return fileOther
	}
	mt := f.mediaType()
	switch {
	case imageTypes[mt]:
		return fileImage
	case mt == "application/pdf":
		return filePDF
	case strings.HasPrefix(mt, "text/"), mt == "application/json", mt == "application/xml",
		mt == "application/yaml", mt == "application/x-yaml", mt == "application/toml":
		if utf8.Valid(f.Data) {
			return fileText
		}
	}
	return fileOther
}

// mediaType is f's media type without parameters, lower case.
func (f File) mediaType() string {
	mt, _, err := mime.ParseMediaType(f.MediaType)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(f.MediaType))
	}
	return mt
}

// dataURL is f's content as a base64 data URL, as OpenAI takes images and
// files.
func (f File) dataURL() string {
	return "data:" + f.mediaType() + ";base64," + base64.StdEncoding.EncodeToString(f.Data)
}

// label names f for the model: its name, else its URI, else "file".
func (f File) label() string {
	switch {
	case f.Name != "":
		return f.Name
	case f.URI != "":
		return f.URI
	}
	return "file"
}

// asText is f as the model reads a text file, or as a line naming a file
// it cannot read.
func (f File) asText() string {
	if f.kind() == fileText {
		return fmt.Sprintf("File %s (%s):\n%s", f.label(), f.mediaType(), string(f.Data))
	}
	if len(f.Data) == 0 {
		return fmt.Sprintf("[file %s, %s, not fetched]", f.label(), f.MediaType)
	}
	return fmt.Sprintf("[file %s, %s, %d bytes, in a format the model does not read]", f.label(), f.MediaType, len(f.Data))
}

// FetchFileInput is the argument of the FetchFile activity
// (wire.ActivityFetchFile).
type FetchFileInput struct {
	// URI is the file's http or https URL.
	URI string `json:"uri"`
	// MediaType is the media type the file part declared; the response's
	// Content-Type is used when it is empty.
	MediaType string `json:"mediaType,omitempty"`
}

// FetchedFile is the result of the FetchFile activity.
type FetchedFile struct {
	MediaType string `json:"mediaType"`
	Data      []byte `json:"data"`
}

// fetchFilesVersion guards the FetchFile activities of the tool loop:
// histories recorded before it gave the model a URI file as a line naming
// it, without an activity.
const fetchFilesVersion = "llm-fetch-file-uris"

// fetchFiles fetches the content of every file of msgs that has only a URI,
// one FetchFile activity each (summary: the URI). A file that cannot be
// fetched ends the run: the model would answer about a file it never saw.
func fetchFiles(ctx workflow.Context, o *callOptions, msgs []Message) error {
	versioned := false
	for i := range msgs {
		for j := range msgs[i].Files {
			f := &msgs[i].Files[j]
			if len(f.Data) > 0 || f.URI == "" {
				continue
			}
			if !versioned {
				if workflow.GetVersion(ctx, fetchFilesVersion, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
					return nil
				}
				versioned = true
			}
			var got FetchedFile
			actx := workflow.WithActivityOptions(ctx, withSummary(o.activity, "fetch "+f.URI))
			if err := workflow.ExecuteActivity(actx, wire.ActivityFetchFile,
				FetchFileInput{URI: f.URI, MediaType: f.MediaType}).Get(ctx, &got); err != nil {
				return err
			}
			f.Data = got.Data
			if f.MediaType == "" {
				f.MediaType = got.MediaType
			}
		}
	}
	return nil
}
