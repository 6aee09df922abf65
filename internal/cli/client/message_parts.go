package client

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/spf13/cobra"
)

// maxSendFileBytes bounds a file `send --file` reads inline: the API's
// default request body limit (4 MiB) less room for base64 and JSON.
const maxSendFileBytes = 3 << 20

// messageFlags are the parts and fields of a message beyond its text:
// `send --file --data --metadata --reference-task`.
type messageFlags struct {
	files      []string
	data       []string
	metadata   string
	references []string
}

func (m *messageFlags) bind(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.StringArrayVar(&m.files, "file", nil, "attach a file: a local PATH (sent inline, up to 3 MiB) or an http(s) URI (sent as a link the agent fetches); repeatable")
	fs.StringArrayVar(&m.data, "data", nil, `attach a data part, a JSON value such as '{"amount": 120}'; repeatable`)
	fs.StringVar(&m.metadata, "metadata", "", `message metadata, a JSON object such as '{"source": "cli"}'`)
	fs.StringArrayVar(&m.references, "reference-task", nil, "ID of an earlier task this message refers to (referenceTaskIds), e.g. to refine its result; repeatable")
}

// message builds the user message of text (may be empty) and the flags.
func (m *messageFlags) message(text string) (*a2a.Message, error) {
	var parts []*a2a.Part
	if text != "" {
		parts = append(parts, a2a.NewTextPart(text))
	}
	for _, f := range m.files {
		p, err := filePart(f)
		if err != nil {
			return nil, fmt.Errorf("--file %s: %w", f, err)
		}
		parts = append(parts, p)
	}
	for _, d := range m.data {
		var v any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			return nil, fmt.Errorf("--data %s: not JSON: %w", d, err)
		}
		parts = append(parts, a2a.NewDataPart(v))
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("nothing to send: give a MESSAGE, --file or --data")
	}
	msg := a2a.NewMessage(a2a.MessageRoleUser, parts...)
	if m.metadata != "" {
		if err := json.Unmarshal([]byte(m.metadata), &msg.Metadata); err != nil || msg.Metadata == nil {
			return nil, fmt.Errorf("--metadata %s: not a JSON object", m.metadata)
		}
	}
	for _, id := range m.references {
		if id = strings.TrimSpace(id); id == "" {
			return nil, fmt.Errorf("--reference-task: empty task ID")
		}
		msg.ReferenceTasks = append(msg.ReferenceTasks, a2a.TaskID(id))
	}
	return msg, nil
}

// filePart is the file part of --file arg: an http(s) URI as a URL part
// (media type from its extension), else a local file read inline (media
// type from its extension, else sniffed).
func filePart(arg string) (*a2a.Part, error) {
	if u, err := url.Parse(arg); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		name := path.Base(u.Path)
		if name == "/" || name == "." {
			name = ""
		}
		p := a2a.NewFileURLPart(a2a.URL(arg), mediaTypeByName(name))
		p.Filename = name
		return p, nil
	}
	info, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, fmt.Errorf("is a folder")
	}
	if info.Size() > maxSendFileBytes {
		return nil, fmt.Errorf("%d bytes, more than the %d a message carries inline: serve it over http(s) and pass its URI", info.Size(), maxSendFileBytes)
	}
	data, err := os.ReadFile(arg)
	if err != nil {
		return nil, err
	}
	mt := mediaTypeByName(arg)
	if mt == "" {
		mt = http.DetectContentType(data)
	}
	p := a2a.NewRawPart(data)
	p.Filename, p.MediaType = filepath.Base(arg), mt
	return p, nil
}

// mediaTypeByName is the media type of a file name's extension, without
// parameters, or "".
func mediaTypeByName(name string) string {
	mt := mime.TypeByExtension(strings.ToLower(filepath.Ext(name)))
	if base, _, err := mime.ParseMediaType(mt); err == nil {
		return base
	}
	return ""
}
